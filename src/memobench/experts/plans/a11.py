"""A11 cookies top butter middle: the cookies into the top drawer and shut it, then the butter into the middle one.

Memory: none; the plan is :mod:`memobench.experts.plans.arena_drawers`' storage plan.
What is left to do is in view: an item still on the table goes into its drawer (the
first into the top drawer, the second into the middle one), an item lying in an open
drawer is done, and one out of view can only be in a closed drawer, so it was stored; an
open drawer that is not the next item's is shut first (the stages want the top drawer
shut before the middle one opens). The plan makes no choice the scene leaves open, so
the expert, the memoryless and the reactive expert do the same thing. Chance 1 (the best
memoryless strategy is the expert's): by MEMOBench's rule the task does not need memory.
"""

from __future__ import annotations

from memobench.experts.plans.arena_drawers import DrawerStoragePlan


class CookiesTopButterMiddlePlan(DrawerStoragePlan):
    task_id = "A11-cookies-top-butter-middle"
    placements = (("cookies_1", "top"), ("butter_1", "middle"))
