"""S07 two drawers, retrieve the green pudding: green chocolate pudding into the open drawer, yellow
cookies into another drawer (the robot's choice), both shut, then the pudding onto the plate.

Memory: ``a_in`` / ``b_in`` - the drawer each item went into (see
:mod:`memobench.experts.plans.two_drawers`, shared with S06 and S08). Without it the
plan draws uniformly among all three drawers when opening one for the cookies and
again when looking for the pudding.
"""

from __future__ import annotations

from memobench.experts.plans.hide_and_retrieve import HiddenItem
from memobench.experts.plans.two_drawers import TwoDrawersPlan

# grip site at each item's origin (its centre); grasp_back < half-length
GREEN_PUDDING = HiddenItem("green_chocolate_pudding_1", grasp_height=-0.002, grasp_back=0.025)  # 8.0 x 4.6 x 2.7 cm
YELLOW_COOKIES = HiddenItem("yellow_cookies_1", grasp_height=-0.002, grasp_back=0.025)  # 8.3 x 6.2 x 1.9 cm


class TwoDrawersGreenPuddingPlan(TwoDrawersPlan):
    task_id = "S07-two-drawers-retrieve-green-pudding"
    first = GREEN_PUDDING
    second = YELLOW_COOKIES
