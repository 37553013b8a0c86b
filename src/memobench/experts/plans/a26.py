"""A26 chocolate pudding cream: the chocolate pudding and the cream cheese from plate 1 onto plate 2.

Memory: none; the plan is :mod:`memobench.experts.plans.plate_transfer`'s (its
docstring derives why). Both packs start stacked on plate 1, the chocolate pudding on
top. Chance 1: every pack still to move lies in view, so the memoryless and the
reactive expert do what the expert does.
"""

from __future__ import annotations

from memobench.experts.plans.plate_transfer import PlateTransferPlan


class ChocolatePuddingCreamPlan(PlateTransferPlan):
    task_id = "A26-chocolate-pudding-cream"
    items = ("chocolate_pudding_1", "cream_cheese_1")
