"""Cabinet to cabinet (A18): every item on cabinet 1's top onto cabinet 2's top, on the coffee table.

A task's plan module subclasses :class:`CabinetTransferPlan` and sets ``task_id`` and
``items`` (in the order the instruction names them, which is the stages' order). This
module is not a plan module itself (its name is no task prefix).

The two cabinets stand 0.6 m apart (y = +-0.3), their drawers facing away from the
robot's centre line; their tops are 24 cm over the table. Items are picked from above,
lifted well over the tops, carried across and set down side by side on cabinet 2's top,
each in its own slot along y (the tops are 19 cm deep; the packs lie long side along x,
4-5 cm wide). They are not stacked: the stage wants an item's origin at most 25 cm over
the cabinet's base, and a pack lying on another (origin ~25.5 cm up) would miss it.

Memory: none. What is left to move is in view (an item on cabinet 1's top, or fallen on
the table); one on cabinet 2's top is done; a pack already there when its stage comes up
completes it at once. The plan makes no choice the scene leaves open, so the expert,
the memoryless and the reactive expert do the same thing. Chance 1 (the best memoryless
strategy is the expert's): by MEMOBench's rule the task does not need memory.
"""

from __future__ import annotations

import numpy as np

from memobench.experts.bowl_carry import set_down
from memobench.experts.coffee_table import grasp_height, half_height
from memobench.experts.control import DOWN
from memobench.experts.expert import Plan
from memobench.experts.scene import Scene
from memobench.experts.skills import Skill, pick

GOAL = "wooden_cabinet_2"
GOAL_TOP = "wooden_cabinet_2_top_side"  # the region site on its top (1 mm under the top's surface)
LIFT = 0.40  # hand over the table's top after the grasp: a held pack's bottom ~13 cm over the cabinet's top
RELEASE_MARGIN = 0.008  # the held item's bottom over the top's site when letting go
CARRY = 0.08  # the held item's origin this far over its release point while carried across
RETREAT = 0.45  # hand over the table's top after letting go
SLOT_SPACING = 0.07  # y between neighbouring slots on cabinet 2's top
# The stage rule: within 15 cm (xy) of cabinet 2's origin (its base), 10-25 cm above it (task file).
ON_GOAL_XY, ON_GOAL_Z = 0.15, (0.10, 0.25)


def on_goal(scene: Scene, item: str) -> bool:
    """True when ``item`` lies where its stage wants it (cabinet 2's top) and is not in the hand."""
    offset = scene.pos(item) - scene.pos(GOAL)
    lying = np.linalg.norm(offset[:2]) < ON_GOAL_XY and ON_GOAL_Z[0] < offset[2] < ON_GOAL_Z[1]
    return bool(lying) and not scene.grasped(item)


def slot(held: str, items: tuple[str, ...]):
    """Where ``held``'s origin goes on cabinet 2's top: its own slot along y, its bottom just over the top."""
    offsets = (np.arange(len(items)) - (len(items) - 1) / 2) * SLOT_SPACING
    # The first item nearest the robot's centre line (y = 0), the others behind it.
    shift = np.array([0.0, offsets[::-1][items.index(held)], RELEASE_MARGIN + half_height(held)])

    def goal(scene: Scene) -> np.ndarray:
        return scene.pos(GOAL_TOP) + shift

    return goal


class CabinetTransferPlan(Plan):
    """Move every one of ``items`` onto cabinet 2's top, in their order."""

    items: tuple[str, ...] = ()

    def next_skill(self, scene: Scene, memory, rng: np.random.Generator) -> Skill | None:
        table = scene.table_top()
        held = [i for i in self.items if scene.grasped(i)]
        if held:
            return set_down(held[0], slot(held[0], self.items), DOWN, carry=CARRY, retreat_z=table + RETREAT)
        todo = [i for i in self.items if not on_goal(scene, i)]
        if not todo:
            return None  # every item on cabinet 2: done, as the scene shows
        return pick(todo[0], grasp_height(todo[0]), lift=LIFT, table_z=table)
