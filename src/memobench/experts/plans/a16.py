"""A16 pour milk in red coffee mug twice and place milk in bowl drainer.

Memory: ``pours``, the count (:mod:`memobench.experts.plans.arena_pour`'s docstring derives
it). Chance 1/4: after each pour the carton is back upright in the hand over the mug,
whatever the count.
"""

from __future__ import annotations

from memobench.experts.plans.arena_pour import ArenaPourPlan


class PourMilkInRedCoffeeMugTwicePlan(ArenaPourPlan):
    task_id = "A16-pour-milk-in-red-coffee-mug-twice-and-place-milk-in-bowl-drainer"
    bottle = "milk_1"
    target = "red_coffee_mug_1"
    after = "drainer"
