"""A08 pick chocolate in frypan pour tomato sauce twice: the pudding into the pan, the sauce over it twice.

Memory: ``pours``, the count (:mod:`memobench.experts.plans.arena_pour`'s docstring derives
it). Whether the pudding is in the pan is in view; only the pours are stages. The bottle
goes into the drainer afterwards (the task's goal). Chance 1/4: after each pour the bottle
is back upright in the hand over the pudding, whatever the count.
"""

from __future__ import annotations

from memobench.experts.plans.arena_pour import ArenaPourPlan


class PickChocolateInFrypanPourTomatoSauceTwicePlan(ArenaPourPlan):
    task_id = "A08-pick-chocolate-in-frypan-pour-tomato-sauce-twice"
    bottle = "tomato_sauce_1"
    target = "chocolate_pudding_1"
    first = "chocolate_pudding_1"
    after = "drainer"
