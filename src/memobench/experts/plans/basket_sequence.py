"""Into the basket (A01-A03): two items from the coffee table into the basket, in the named order.

The tasks differ only in their items, so one plan serves them all: a task's plan module
subclasses :class:`BasketSequencePlan` and sets ``task_id`` and ``items`` (in the order
the instruction names them, which is the stages' order). This module is not a plan
module itself (its name is no task prefix).

Each item is picked from above, carried over the basket (14.6 cm walls) and let go with
its bottom a few centimetres over the rim; it falls onto the basket's floor or onto the
item already there.

Memory: none. RoboMemArena's prompt for A01 ("... place tomato sauce into where cookies
was placed") makes the second placement depend on the first, but the basket is the one
place either item goes, and what is left to do is in view: an item still on the table
goes into the basket; none left means done. Whether the item already in the basket can
be seen over its 14.6 cm walls does not matter. The instruction names the order (and the
order costs nothing: an item already in the basket when its stage comes up completes it
at once). The plan makes no choice the scene leaves open, so the expert, the memoryless
and the reactive expert do the same thing. Chance 1 (the best memoryless strategy is the
expert's): by MEMOBench's rule these tasks do not need memory.
"""

from __future__ import annotations

import numpy as np

from memobench.experts.bowl_carry import set_down
from memobench.experts.coffee_table import BASKET_RIM, grasp_height, half_height
from memobench.experts.control import DOWN
from memobench.experts.expert import Plan
from memobench.experts.scene import Scene
from memobench.experts.skills import Skill, pick

BASKET = "basket_1"
LIFT = 0.25  # hand over the table's top after the grasp: a held tomato sauce's bottom clears the rim
DROP_CLEARANCE = 0.03  # the held item's bottom over the basket's rim when letting go
RETREAT = 0.30  # hand over the table's top after letting go: the open fingers clear the walls
# The stage rule: within 12 cm (xy) of the basket's origin, -5 to 20 cm above it (task files).
IN_BASKET_XY, IN_BASKET_Z = 0.12, (-0.05, 0.20)


def in_basket(scene: Scene, item: str) -> bool:
    """True when ``item`` lies where its stage wants it (the basket) and is not in the hand."""
    offset = scene.pos(item) - scene.pos(BASKET)
    inside = np.linalg.norm(offset[:2]) < IN_BASKET_XY and IN_BASKET_Z[0] < offset[2] < IN_BASKET_Z[1]
    return bool(inside) and not scene.grasped(item)


def drop_point(held: str):
    """Where ``held``'s origin is let go: over the basket's origin, its bottom just over the rim."""

    def goal(scene: Scene) -> np.ndarray:
        return scene.pos(BASKET) + np.array([0.0, 0.0, BASKET_RIM + DROP_CLEARANCE + half_height(held)])

    return goal


class BasketSequencePlan(Plan):
    """Put each of ``items`` into the basket, in their order."""

    items: tuple[str, ...] = ()

    def next_skill(self, scene: Scene, memory, rng: np.random.Generator) -> Skill | None:
        table = scene.table_top()
        held = [i for i in self.items if scene.grasped(i)]
        if held:
            return set_down(held[0], drop_point(held[0]), DOWN, retreat_z=table + RETREAT)
        todo = [i for i in self.items if not in_basket(scene, i)]
        if not todo:
            return None  # every item in the basket: done, as the scene shows
        return pick(todo[0], grasp_height(todo[0]), lift=LIFT, table_z=table)
