"""A07 pour tomato sauce into frypan: pour the tomato sauce over the frying pan twice, then stand it back.

Memory: ``pours``, the count (:mod:`memobench.experts.plans.arena_pour`'s docstring derives
it). The prompt asks for nothing after the pours; the bottle goes back onto its start region,
the hand parked after. Chance 1/4: after each pour the bottle is back upright in the hand
over the pan, whatever the count.
"""

from __future__ import annotations

from memobench.experts.plans.arena_pour import ArenaPourPlan


class PourTomatoSauceIntoFrypanPlan(ArenaPourPlan):
    task_id = "A07-pour-tomato-sauce-into-frypan"
    bottle = "tomato_sauce_1"
    target = "chefmate_8_frypan_1"
    after = "start"
