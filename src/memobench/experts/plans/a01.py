"""A01 cookies tomato basket: the cookies into the basket, then the tomato sauce where the cookies went.

Memory: none; the plan is :mod:`memobench.experts.plans.basket_sequence`'s (its
docstring derives why). Chance 1: the cookies in the open basket and the tomato sauce still on
the table are both in view, so the memoryless and the reactive expert do what the
expert does.
"""

from __future__ import annotations

from memobench.experts.plans.basket_sequence import BasketSequencePlan


class CookiesTomatoBasketPlan(BasketSequencePlan):
    task_id = "A01-cookies-tomato-basket"
    items = ("cookies_1", "tomato_sauce_1")
