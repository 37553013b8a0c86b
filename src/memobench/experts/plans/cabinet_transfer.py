"""Cabinet to cabinet (A18, A19): every item on cabinet 1's top onto cabinet 2's top, on the coffee table.

A task's plan module subclasses :class:`CabinetTransferPlan` and sets ``task_id`` and
``items`` (in the order the instruction names them, which is the stages' order), and
where its stage rule or its items differ from task 18's: ``stage`` (the task file's
xy radius and z window) and ``slot_offsets``. This module is not a plan module itself
(its name is no task prefix).

The two cabinets stand 0.6 m apart (y = +-0.3), their drawers facing away from the
robot's centre line; their tops are 24 cm over the table, 25 cm wide (x) and 19 cm deep
(y). Items are picked from above (the fingers closing along y), lifted well over the
tops, carried across and set down on cabinet 2's top, each in a slot of its own. By
default the slots lie in a row along y (task 18's packs lie long side along x, 4-5 cm
wide); task 19's upright cartons stand in a row along x, as on cabinet 1, so each is
carried straight along y past nothing. Items are not stacked: the stage caps an item's
origin over the cabinet's base (25 cm in task 18), and a pack lying on another (origin
~25.5 cm up) would miss it.

Memory: none. What is left to move is in view (an item on cabinet 1's top, or fallen on
the table); one on cabinet 2's top is done; an item already there when its stage comes up
completes it at once. The plan makes no choice the scene leaves open, so the expert,
the memoryless and the reactive expert do the same thing. Chance 1 (the best memoryless
strategy is the expert's): by MEMOBench's rule the task does not need memory.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memobench.experts.bowl_carry import set_down
from memobench.experts.coffee_table import grasp_height, half_height
from memobench.experts.control import DOWN, OPEN
from memobench.experts.expert import Plan
from memobench.experts.scene import Scene
from memobench.experts.skills import Chain, MoveToFixed, Skill, pick

GOAL = "wooden_cabinet_2"
GOAL_TOP = "wooden_cabinet_2_top_side"  # the region site on its top (1 mm under the top's surface)
LIFT = 0.40  # hand over the table's top after the grasp: a held pack's bottom ~13 cm over the cabinet's top
RELEASE_MARGIN = 0.003  # the held item's bottom over the top's site (1 mm under its surface) when letting go
CARRY = 0.08  # the held item's origin this far over its release point while carried across
RETREAT = 0.45  # hand over the table's top after letting go
SLOT_SPACING = 0.07  # y between neighbouring slots on cabinet 2's top (the default row)


@dataclass(frozen=True)
class StageRule:
    """A task file's "on cabinet 2" stage: within ``xy`` (m) of its origin, ``z`` (low, high) above it."""

    xy: float
    z: tuple[float, float]


TASK_18_STAGE = StageRule(0.15, (0.10, 0.25))


def on_goal(scene: Scene, item: str, stage: StageRule = TASK_18_STAGE) -> bool:
    """True when ``item`` lies where its stage wants it (cabinet 2's top) and is not in the hand."""
    offset = scene.pos(item) - scene.pos(GOAL)
    lying = np.linalg.norm(offset[:2]) < stage.xy and stage.z[0] < offset[2] < stage.z[1]
    return bool(lying) and not scene.grasped(item)


def row_along_y(count: int) -> tuple[tuple[float, float], ...]:
    """Default slots: ``count`` (x, y) offsets from the top's site, :data:`SLOT_SPACING` apart along y,
    the first item's nearest the robot's centre line (y = 0), the others behind it."""
    offsets = (np.arange(count) - (count - 1) / 2) * SLOT_SPACING
    return tuple((0.0, float(y)) for y in offsets[::-1])


def slot(held: str, items: tuple[str, ...], offsets: tuple[tuple[float, float], ...] | None = None):
    """Where ``held``'s origin goes on cabinet 2's top: its own slot (``offsets``, one (x, y) per item,
    :func:`row_along_y` unless given), its bottom just over the top."""
    dx, dy = (offsets or row_along_y(len(items)))[items.index(held)]
    shift = np.array([dx, dy, RELEASE_MARGIN + half_height(held)])

    def goal(scene: Scene) -> np.ndarray:
        return scene.pos(GOAL_TOP) + shift

    return goal


def put_on_top(held: str, goal, retreat_z: float) -> Chain:
    """:func:`~memobench.experts.bowl_carry.set_down` onto the top, the open hand centred over the item
    before it rises: an upright carton left leaning on one finger pad was dragged up with it and
    carried off (A19), as the milk cartons were before :func:`~memobench.experts.skills.place_at`."""
    placing = set_down(held, goal, DOWN, carry=CARRY, retreat_z=retreat_z)
    *down_and_release, retreat = placing.parts

    def centred(scene: Scene) -> np.ndarray:
        return np.array([*scene.pos(held)[:2], scene.eef_pos()[2]])

    # read once: chased every step, a carton the fingers pushed was pushed on and carried off (A19)
    centre = MoveToFixed(centred, DOWN, OPEN, tol=0.003, max_steps=20, max_speed=0.3, name="centre")
    # tolerant: a hand not quite centred within its 20 steps still rises
    return Chain([*down_and_release, Chain([centre, retreat], tolerant=True, name="leave")], name=placing.name)


class CabinetTransferPlan(Plan):
    """Move every one of ``items`` onto cabinet 2's top, in their order."""

    items: tuple[str, ...] = ()
    stage: StageRule = TASK_18_STAGE
    slot_offsets: tuple[tuple[float, float], ...] | None = None  # None: row_along_y

    def next_skill(self, scene: Scene, memory, rng: np.random.Generator) -> Skill | None:
        table = scene.table_top()
        held = [i for i in self.items if scene.grasped(i)]
        if held:
            return put_on_top(held[0], slot(held[0], self.items, self.slot_offsets), table + RETREAT)
        todo = [i for i in self.items if not on_goal(scene, i, self.stage)]
        if not todo:
            return None  # every item on cabinet 2: done, as the scene shows
        return pick(todo[0], grasp_height(todo[0]), lift=LIFT, table_z=table)
