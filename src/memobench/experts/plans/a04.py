"""A04 drawer butter: check the top, middle and bottom drawers, then put the butter into the one holding an object.

Memory: the plan is :mod:`memobench.experts.plans.arena_drawers`' check-then-store plan;
it remembers the drawers checked so far and the one seen holding an object (the cream
cheese, in the top drawer). Once the three are shut again the scene looks as it did at
the start, so a memoryless agent cannot tell whether it has made its checks.

Chance 1 under RoboMemArena's scoring (the task file derives it): the stage tracker
never fails a run, so a memoryless agent loses nothing by checking drawers again, and
it can keep the tally in the scene (a drawer left a few centimetres out still counts as
shut). The memoryless expert guesses uniformly (a drawer to open; with the top drawer
open, whether to store the butter now) and so succeeds only when its random openings
happen to run top, middle, bottom, top before it stores the butter (about 22%); the
reactive expert stores it at the first opening and fails.
"""

from __future__ import annotations

from memobench.experts.plans.arena_drawers import CheckThenStorePlan


class DrawerButterPlan(CheckThenStorePlan):
    task_id = "A04-drawer-butter"
    contents = ("cream_cheese_1",)
    slot_x = 0.065  # beside the cream cheese, which lies at the drawer's centre
