"""A02 butter popcorn basket: the butter into the basket, then the popcorn.

Memory: none; the plan is :mod:`memobench.experts.plans.basket_sequence`'s (its
docstring derives why). Chance 1: what is left to do is in view (the butter, then the
popcorn, still on the table), so the memoryless and the reactive expert do what the
expert does.
"""

from __future__ import annotations

from memobench.experts.plans.basket_sequence import BasketSequencePlan


class ButterPopcornBasketPlan(BasketSequencePlan):
    task_id = "A02-butter-popcorn-basket"
    items = ("butter_1", "popcorn_1")
