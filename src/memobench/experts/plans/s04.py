"""S04 hide and retrieve popcorn: the S01 plan with the popcorn box (6.2 x 4.2 x 2.0 cm).

Memory: ``item_in``, the drawer the popcorn went into (see
:mod:`memobench.experts.plans.hide_and_retrieve`); without it the plan guesses a
drawer uniformly once the popcorn is hidden.
"""

from __future__ import annotations

from memobench.experts.plans.hide_and_retrieve import HiddenItem, HideAndRetrievePlan

# grip site at the box's origin (its centre), fingers closing along y across its short side
POPCORN = HiddenItem("popcorn_1", grasp_height=-0.002, grasp_back=0.02)  # half-length 3.1 cm


class HideAndRetrievePopcornPlan(HideAndRetrievePlan):
    task_id = "S04-hide-and-retrieve-popcorn"
    item = POPCORN
