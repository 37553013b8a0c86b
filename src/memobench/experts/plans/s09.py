"""S09 one drawer, retrieve both: the green chocolate pudding into the open drawer, the green
butter on top of it, drawer shut; then the butter and then the pudding onto the plate.

Memory: ``both_in`` - the drawer both went into, and ``stage`` (see
:mod:`memobench.experts.plans.one_drawer_both`, shared with S10). Without it the
plan draws uniformly among the three drawers when looking for them.
"""

from __future__ import annotations

from memobench.experts.plans.hide_and_retrieve import HiddenItem
from memobench.experts.plans.one_drawer_both import OneDrawerBothPlan

# grip site at each item's origin (its centre); grasp_back < half-length
GREEN_BUTTER = HiddenItem("green_butter_1", grasp_height=-0.002, grasp_back=0.025)  # 7.6 x 4.0 x 1.7 cm
GREEN_PUDDING = HiddenItem("green_chocolate_pudding_1", grasp_height=-0.002, grasp_back=0.025)  # 8.0 x 4.6 x 2.7 cm


class OneDrawerGreenButterAndPuddingPlan(OneDrawerBothPlan):
    task_id = "S09-one-drawer-retrieve-green-butter-and-pudding"
    top = GREEN_BUTTER
    bottom = GREEN_PUDDING
    # the pudding's top is 1.4 cm over its origin, the butter's centre 0.9 cm over its
    # bottom: let go 5 mm above resting (grip site 2 mm under the butter's centre)
    stack_height = 0.014 + 0.009 - 0.002 + 0.005
