"""S06 two drawers, retrieve the green butter: green butter into the open drawer, red cream cheese
into another drawer (the robot's choice), both shut, then the green butter onto the plate.

Memory: ``a_in`` / ``b_in`` - the drawer each item went into (see
:mod:`memobench.experts.plans.two_drawers`, shared with S07-S08). Without it the
plan draws uniformly among all three drawers when opening one for the cream
cheese and again when looking for the green butter.
"""

from __future__ import annotations

from memobench.experts.plans.hide_and_retrieve import HiddenItem
from memobench.experts.plans.two_drawers import TwoDrawersPlan

# grip site at each item's origin (its centre, 1.7-1.8 cm tall); grasp_back < half-length
GREEN_BUTTER = HiddenItem("green_butter_1", grasp_height=-0.002, grasp_back=0.025)  # 7.6 cm long
RED_CREAM_CHEESE = HiddenItem("red_cream_cheese_1", grasp_height=-0.002, grasp_back=0.025)  # 8.1 cm long


class TwoDrawersGreenButterPlan(TwoDrawersPlan):
    task_id = "S06-two-drawers-retrieve-green-butter"
    first = GREEN_BUTTER
    second = RED_CREAM_CHEESE
