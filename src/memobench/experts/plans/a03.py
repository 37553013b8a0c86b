"""A03 cream pudding basket: the cream cheese into the basket, then the chocolate pudding.

Memory: none; the plan is :mod:`memobench.experts.plans.basket_sequence`'s (its
docstring derives why). Chance 1: what is left to do is in view (the cream cheese, then the
chocolate pudding, still on the table), so the memoryless and the reactive expert do what the
expert does.
"""

from __future__ import annotations

from memobench.experts.plans.basket_sequence import BasketSequencePlan


class CreamPuddingBasketPlan(BasketSequencePlan):
    task_id = "A03-cream-pudding-basket"
    items = ("cream_cheese_1", "chocolate_pudding_1")
