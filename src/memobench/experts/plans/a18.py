"""A18 chocolate butter cabinet: the chocolate pudding and the butter from cabinet 1's top onto cabinet 2's.

Memory: none; the plan is :mod:`memobench.experts.plans.cabinet_transfer`'s (its
docstring derives why). The packs start lying flat side by side on cabinet 1's top, 1 cm
apart (the env's placement). Chance 1: every item still to move lies in view, so the
memoryless and the reactive expert do what the expert does.
"""

from __future__ import annotations

from memobench.experts.plans.cabinet_transfer import CabinetTransferPlan


class ChocolateButterCabinetPlan(CabinetTransferPlan):
    task_id = "A18-chocolate-butter-cabinet"
    items = ("chocolate_pudding_1", "butter_1")
