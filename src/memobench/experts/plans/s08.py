"""S08 two drawers, retrieve the red cream cheese: red cream cheese into the open drawer, green
chocolate pudding into another drawer (the robot's choice), both shut, then the cream cheese onto the plate.

Memory: ``a_in`` / ``b_in`` - the drawer each item went into (see
:mod:`memobench.experts.plans.two_drawers`, shared with S06 and S07). Without it the
plan draws uniformly among all three drawers when opening one for the pudding and
again when looking for the cream cheese.
"""

from __future__ import annotations

from memobench.experts.plans.hide_and_retrieve import HiddenItem
from memobench.experts.plans.two_drawers import TwoDrawersPlan

# grip site at each item's origin (its centre); grasp_back < half-length
RED_CREAM_CHEESE = HiddenItem("red_cream_cheese_1", grasp_height=-0.002, grasp_back=0.025)  # 8.1 x 4.3 x 1.8 cm
GREEN_PUDDING = HiddenItem("green_chocolate_pudding_1", grasp_height=-0.002, grasp_back=0.025)  # 8.0 x 4.6 x 2.7 cm


class TwoDrawersRedCreamCheesePlan(TwoDrawersPlan):
    task_id = "S08-two-drawers-retrieve-red-cream-cheese"
    first = RED_CREAM_CHEESE
    second = GREEN_PUDDING
