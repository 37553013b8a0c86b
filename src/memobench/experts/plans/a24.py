"""A24 cookies popcorn microwave: open the microwave, the cookies in, then the popcorn where they went.

Memory: none; the plan is :mod:`memobench.experts.plans.arena_microwave`'s (its
docstring derives why). Chance 1: the door stays open and every pack still to go in lies
on the table in view, so the memoryless and the reactive expert do what the expert does.
"""

from __future__ import annotations

from memobench.experts.plans.arena_microwave import MicrowavePairPlan


class CookiesPopcornMicrowavePlan(MicrowavePairPlan):
    task_id = "A24-cookies-popcorn-microwave"
    items = ("cookies_1", "popcorn_1")
