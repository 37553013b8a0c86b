"""S03 hide and retrieve chocolate pudding: the S01 plan with the chocolate pudding box (8.0 x 4.6 x 2.7 cm).

Memory: ``item_in``, the drawer the chocolate pudding went into (see
:mod:`memobench.experts.plans.hide_and_retrieve`); without it the plan guesses a
drawer uniformly once the chocolate pudding is hidden.
"""

from __future__ import annotations

from memobench.experts.plans.hide_and_retrieve import HiddenItem, HideAndRetrievePlan

# grip site at the box's origin (its centre), fingers closing along y across its short side
CHOCOLATE_PUDDING = HiddenItem("chocolate_pudding_1", grasp_height=-0.002, grasp_back=0.025)  # half-length 4.0 cm


class HideAndRetrieveChocolatePuddingPlan(HideAndRetrievePlan):
    task_id = "S03-hide-and-retrieve-chocolate-pudding"
    item = CHOCOLATE_PUDDING
