"""A25 butter cream: the butter and the cream cheese from plate 1 onto plate 2.

Memory: none; the plan is :mod:`memobench.experts.plans.plate_transfer`'s (its
docstring derives why). Both packs start stacked on plate 1, the cream cheese on top.
Chance 1: every pack still to move lies in view, so the memoryless and the reactive
expert do what the expert does.
"""

from __future__ import annotations

from memobench.experts.plans.plate_transfer import PlateTransferPlan


class ButterCreamPlan(PlateTransferPlan):
    task_id = "A25-butter-cream"
    items = ("butter_1", "cream_cheese_1")
