"""Plate to plate (A25, A26): every pack on plate 1 onto plate 2, on the coffee table.

The tasks differ only in their packs, so one plan serves both: a task's plan module
subclasses :class:`PlateTransferPlan` and sets ``task_id`` and ``items`` (the packs in
the order the instruction names them). This module is not a plan module itself (its
name is no task prefix).

LIBERO stacks the two packs on plate 1 (both start "on plate_1", at its centre), so the
plan takes the top pack first, whatever the instruction's order: the one it names first
is underneath (measured). The packs are stacked again on plate 2. The stages are checked
in order, but a pack already on plate 2 when its stage comes up completes it at once,
so moving the top pack first loses nothing.

Memory: none. What is left to move is in view (a pack on plate 1, or on the table if it
slipped; one on plate 2 is done), and so is which pack is free to take. The plan makes
no choice the scene leaves open: the expert, the memoryless and the reactive expert do
the same thing. Chance 1 (the best memoryless strategy is the expert's): by MEMOBench's
rule these tasks do not need memory.
"""

from __future__ import annotations

import numpy as np

from memobench.experts.bowl_carry import set_down
from memobench.experts.coffee_table import PLATE_TOP, grasp_height, half_height
from memobench.experts.control import DOWN
from memobench.experts.expert import Plan
from memobench.experts.scene import Scene
from memobench.experts.skills import Skill, pick

GOAL = "plate_2"
LIFT = 0.15  # hand over the table's top after the grasp: the pack clears both plates
RELEASE_MARGIN = 0.006  # pack's bottom over what it lands on when letting go
RETREAT = 0.20  # hand over the table's top after letting go
# A pack whose origin is within this (xy) of another's and higher lies on it: plate-sized
# packs are 4-5 cm wide, and two packs side by side on a plate stand >= 4 cm apart.
STACK_RADIUS = 0.035
# The stage rule: within 6 cm (xy) of plate 2's origin, 1-10 cm above it (task files).
ON_GOAL_XY, ON_GOAL_Z = 0.06, (0.01, 0.10)


def on_goal(scene: Scene, item: str) -> bool:
    """True when ``item`` lies where its stage wants it (plate 2) and is not in the hand."""
    offset = scene.pos(item) - scene.pos(GOAL)
    lying = np.linalg.norm(offset[:2]) < ON_GOAL_XY and ON_GOAL_Z[0] < offset[2] < ON_GOAL_Z[1]
    return bool(lying) and not scene.grasped(item)


def covered(scene: Scene, item: str, items: tuple[str, ...]) -> bool:
    """True when another of ``items`` lies on ``item`` (the grasp from above would take that one)."""
    here = scene.pos(item)
    for other in items:
        there = scene.pos(other)
        if other != item and there[2] > here[2] and np.linalg.norm(there[:2] - here[:2]) < STACK_RADIUS:
            return True
    return False


def landing(held: str, items: tuple[str, ...]):
    """Where ``held``'s origin goes: over plate 2's origin, its bottom just over the top of the
    plate or of the packs already lying there."""

    def goal(scene: Scene) -> np.ndarray:
        plate = scene.pos(GOAL)
        top = plate[2] + PLATE_TOP
        for other in items:
            if other != held and on_goal(scene, other):
                top = max(top, scene.pos(other)[2] + half_height(other))
        return np.array([plate[0], plate[1], top + RELEASE_MARGIN + half_height(held)])

    return goal


class PlateTransferPlan(Plan):
    """Move every one of ``items`` onto plate 2, the free (uncovered) one first."""

    items: tuple[str, ...] = ()

    def next_skill(self, scene: Scene, memory, rng: np.random.Generator) -> Skill | None:
        table = scene.table_top()
        held = [i for i in self.items if scene.grasped(i)]
        if held:
            return set_down(held[0], landing(held[0], self.items), DOWN, retreat_z=table + RETREAT)
        todo = [i for i in self.items if not on_goal(scene, i)]
        if not todo:
            return None  # every pack on plate 2: done, as the scene shows
        free = [i for i in todo if not covered(scene, i, self.items)]
        # A pack to move is covered only by one lying on it; that one is then free (and to move,
        # or already on plate 2 with this one under it: never seen, the packs are stacked there
        # only after the lower one arrived).
        item = (free or todo)[0]
        return pick(item, grasp_height(item), lift=LIFT, table_z=table)
