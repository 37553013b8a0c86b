"""A05 butter middle drawer: check the top, middle and bottom drawers in turn, then put the butter into the middle one.

Memory: the plan is :mod:`memobench.experts.plans.arena_drawers`' check-then-store plan;
it remembers the drawers checked so far (the target, the middle drawer, is named by the
instruction; it holds nothing, while the top drawer holds the cream cheese). Once the
three are shut again the scene looks as it did at the start, so a memoryless agent
cannot tell whether it has made its checks.

Chance 1 under RoboMemArena's scoring, as for A04 (the task file derives it). The
memoryless expert guesses uniformly and succeeds about 22% of the time; the reactive
expert opens the top drawer, shuts it, and opens it again until the horizon.
"""

from __future__ import annotations

from memobench.experts.plans.arena_drawers import CheckThenStorePlan


class ButterMiddleDrawerPlan(CheckThenStorePlan):
    task_id = "A05-butter-middle-drawer"
    target_level = "middle"
    contents = ("cream_cheese_1",)
