"""S05 hide and retrieve cookies: the S01 plan with the cookies box (8.3 x 6.2 x 1.9 cm).

Memory: ``item_in``, the drawer the cookies went into (see
:mod:`memobench.experts.plans.hide_and_retrieve`); without it the plan guesses a
drawer uniformly once the cookies is hidden.
"""

from __future__ import annotations

from memobench.experts.plans.hide_and_retrieve import HiddenItem, HideAndRetrievePlan

# grip site at the box's origin (its centre), fingers closing along y across its short side
COOKIES = HiddenItem("cookies_1", grasp_height=-0.002, grasp_back=0.025)  # half-length 4.15 cm


class HideAndRetrieveCookiesPlan(HideAndRetrievePlan):
    task_id = "S05-hide-and-retrieve-cookies"
    item = COOKIES
