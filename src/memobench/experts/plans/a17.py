"""A17 butter chocolate middle drawer: open the middle drawer, the butter in, then the chocolate pudding.

Memory: none; the plan is :mod:`memobench.experts.plans.arena_drawers`' storage plan.
What is left to do is in view: an item still on the table goes into the open middle
drawer (the stages' first item first), an item lying in the open drawer is done, and one
out of view can only be in a closed drawer, so it was stored. The plan makes no choice
the scene leaves open, so the expert, the memoryless and the reactive expert do the same
thing. Chance 1 (the best memoryless strategy is the expert's): by MEMOBench's rule the
task does not need memory.
"""

from __future__ import annotations

from memobench.experts.plans.arena_drawers import DrawerStoragePlan


class ButterChocolateMiddleDrawerPlan(DrawerStoragePlan):
    task_id = "A17-butter-chocolate-middle-drawer"
    placements = (("butter_1", "middle"), ("chocolate_pudding_1", "middle"))
