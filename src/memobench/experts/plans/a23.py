"""A23 cream popcorn microwave: open the microwave, the cream cheese in, then the popcorn where it went.

Memory: none; the plan is :mod:`memobench.experts.plans.arena_microwave`'s (its
docstring derives why). Chance 1: the door stays open and every pack still to go in lies
on the table in view, so the memoryless and the reactive expert do what the expert does.
"""

from __future__ import annotations

from memobench.experts.plans.arena_microwave import MicrowavePairPlan


class CreamPopcornMicrowavePlan(MicrowavePairPlan):
    task_id = "A23-cream-popcorn-microwave"
    items = ("cream_cheese_1", "popcorn_1")
