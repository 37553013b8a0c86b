"""S01 hide and retrieve butter: butter into the open drawer, close it, reopen it, butter onto the plate.

Memory: ``item_in`` - the drawer the butter was put in, noted when it went in
(with ``stage`` = "retrieve" from then on; "store" before). Once that drawer
is closed the butter is hidden and all drawers look alike: without memory the
plan guesses a drawer uniformly, closes it again if it shows empty, and
guesses again (chance 1/3 per guess). The plan is shared with S02-S05
(:mod:`memobench.experts.plans.hide_and_retrieve`); only the item differs.
"""

from __future__ import annotations

from memobench.experts.plans.hide_and_retrieve import HiddenItem, HideAndRetrievePlan

# grip site at the butter's origin (its centre; 1.7 cm tall): the descent stops up to 6 mm short
BUTTER = HiddenItem("butter_1", grasp_height=-0.002, grasp_back=0.025)  # half-length 3.8 cm


class HideAndRetrieveButterPlan(HideAndRetrievePlan):
    task_id = "S01-hide-and-retrieve-butter"
    item = BUTTER
