"""S10 one drawer, retrieve both: the chocolate pudding into the open drawer, the red cream cheese
on top of it, drawer shut; then the cream cheese and then the pudding onto the plate.

Memory: ``both_in`` - the drawer both went into, and ``stage`` (see
:mod:`memobench.experts.plans.one_drawer_both`, shared with S09). Without it the
plan draws uniformly among the three drawers when looking for them.
"""

from __future__ import annotations

import numpy as np

from memobench.experts.plans.hide_and_retrieve import HiddenItem
from memobench.experts.plans.one_drawer_both import OneDrawerBothPlan

# grip site at each item's origin (its centre); grasp_back < half-length
RED_CREAM_CHEESE = HiddenItem("red_cream_cheese_1", grasp_height=-0.002, grasp_back=0.025)  # 8.1 x 4.3 x 1.8 cm
PUDDING = HiddenItem("chocolate_pudding_1", grasp_height=-0.002, grasp_back=0.025)  # 8.0 x 4.6 x 2.7 cm


class OneDrawerRedCreamCheeseAndPuddingPlan(OneDrawerBothPlan):
    task_id = "S10-one-drawer-retrieve-red-cream-cheese-and-pudding"
    top = RED_CREAM_CHEESE
    bottom = PUDDING
    # the pudding's top is 1.4 cm over its origin, the cream cheese's centre 0.9 cm over
    # its bottom: let go 5 mm above resting (grip site 2 mm under its centre)
    stack_height = 0.014 + 0.009 - 0.002 + 0.005
    top_spot = np.array([0.0, -0.025, 0.0])  # 4.3 cm wide: 4 mm clear of the pudding at +2.6 cm
