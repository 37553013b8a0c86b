"""A19 tomato milk orange cabinet: the tomato sauce, the milk and the orange juice from cabinet 1 to cabinet 2.

Memory: none; the plan is :mod:`memobench.experts.plans.cabinet_transfer`'s (its
docstring derives why). The three items start side by side along x on cabinet 1's top,
the cartons standing upright (the env gives them LIBERO's resting orientation); each is
grasped from above across its 5-6 cm side and set down upright in a row along x on
cabinet 2's top, in the same order, so no carried item passes over another. An upright
carton's origin rests 29 cm over cabinet 2's base: inside this task's 0.10-0.30 m window.
Chance 1: every item still to move lies in view, so the memoryless and the reactive expert
do what the expert does.
"""

from __future__ import annotations

from memobench.experts.plans.cabinet_transfer import CabinetTransferPlan, StageRule

# x between neighbouring slots: the tomato sauce jar is 6.3 cm across, the cartons 5.3.
SLOT_SPACING_X = 0.07


class TomatoMilkOrangeCabinetPlan(CabinetTransferPlan):
    task_id = "A19-tomato-milk-orange-cabinet"
    items = ("tomato_sauce_1", "milk_1", "orange_juice_1")
    # The task file's stages: within 0.30 m (xy) of cabinet 2's origin, 0.10-0.30 m above it.
    stage = StageRule(0.30, (0.10, 0.30))
    slot_offsets = ((-SLOT_SPACING_X, 0.0), (0.0, 0.0), (SLOT_SPACING_X, 0.0))
