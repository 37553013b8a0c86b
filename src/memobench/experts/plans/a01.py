"""A01 cookies tomato basket: the cookies into the basket, then the tomato sauce where the cookies went.

Memory: none; the plan is :mod:`memobench.experts.plans.basket_sequence`'s (its
docstring derives why). Chance 1: what is left to do is in view (the cookies, then the
tomato sauce, still on the table), so the memoryless and the reactive expert do what the
expert does.
"""

from __future__ import annotations

from memobench.experts.plans.basket_sequence import BasketSequencePlan


class CookiesTomatoBasketPlan(BasketSequencePlan):
    task_id = "A01-cookies-tomato-basket"
    items = ("cookies_1", "tomato_sauce_1")
