"""A06 pour tomato sauce into bowl drainer: pour the tomato sauce over the cookies twice, then into the drainer.

Memory: ``pours``, the count (:mod:`memobench.experts.plans.arena_pour`'s docstring derives
it). RoboMemArena's own model reads the task as "pour tomato sauce twice on cookies and
place tomato sauce into bowl drainer": the expert does that. Chance 1/4: after each pour
the bottle is back upright in the hand over the cookies, whatever the count.
"""

from __future__ import annotations

from memobench.experts.plans.arena_pour import ArenaPourPlan


class PourTomatoSauceIntoBowlDrainerPlan(ArenaPourPlan):
    task_id = "A06-pour-tomato-sauce-into-bowl-drainer"
    bottle = "tomato_sauce_1"
    target = "cookies_1"
    after = "drainer"
