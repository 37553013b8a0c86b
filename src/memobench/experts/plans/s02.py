"""S02 hide and retrieve cream cheese: the S01 plan with the cream cheese (8.1 x 4.3 x 1.8 cm).

Memory: ``item_in``, the drawer the cream cheese went into (see
:mod:`memobench.experts.plans.hide_and_retrieve`); without it the plan guesses a
drawer uniformly once the cream cheese is hidden.
"""

from __future__ import annotations

from memobench.experts.plans.hide_and_retrieve import HiddenItem, HideAndRetrievePlan

# grip site at the box's origin (its centre, 1.8 cm tall), fingers across its 4.3 cm side
CREAM_CHEESE = HiddenItem("cream_cheese_1", grasp_height=-0.002, grasp_back=0.025)  # half-length 4.05 cm


class HideAndRetrieveCreamCheesePlan(HideAndRetrievePlan):
    task_id = "S02-hide-and-retrieve-cream-cheese"
    item = CREAM_CHEESE
