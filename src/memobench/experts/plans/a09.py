"""A09 pick butter in frypan, pour tomato sauce twice, place it in the bowl drainer.

Memory: ``pours``, the count (:mod:`memobench.experts.plans.arena_pour`'s docstring derives
it). Whether the butter is in the pan is in view; only the pours are stages. Chance 1/4:
after each pour the bottle is back upright in the hand over the butter, whatever the count.
"""

from __future__ import annotations

from memobench.experts.plans.arena_pour import ArenaPourPlan


class PickButterInFrypanPourTomatoSauceTwicePlan(ArenaPourPlan):
    task_id = "A09-pick-butter-in-frypan-pour-tomato-sauce-twice-and-place-tomato-sauce-in-bowl-drainer"
    bottle = "tomato_sauce_1"
    target = "butter_1"
    first = "butter_1"
    after = "drainer"
