"""Hide and retrieve (S01-S05): an item into the open drawer, close it, reopen it, item onto the plate.

The tasks differ only in the item, so one plan serves them all: a task's plan
module subclasses :class:`HideAndRetrievePlan` and sets ``task_id`` and
``item`` (a :class:`HiddenItem`: the object's name and its grasp constants).
This module is not a plan module itself (its name is no task prefix).

Memory: ``item_in`` - the drawer the item was put in, noted when it went in
(with ``stage`` = "retrieve" from then on; "store" before). Once that drawer
is closed the item is hidden and all drawers look alike: without memory the
plan guesses a drawer uniformly, closes it again if it shows empty, and
guesses again (chance 1/3 per guess).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memobench.experts.control import CLOSE, DOWN, OPEN
from memobench.experts.drawers import (
    LEVELS,
    CloseDrawer,
    OpenDrawer,
    handle_pos,
    is_closed,
    palm_y_in,
    pull_axis,
    region_name,
)
from memobench.experts.expert import Memory, Plan
from memobench.experts.scene import Scene
from memobench.experts.skills import Chain, Grip, MoveTo, Rise, Skill, pick, place_at

PLATE = "plate_1"


@dataclass(frozen=True)
class HiddenItem:
    """The item a hide-and-retrieve task moves, and how to handle it (metres, world frame).

    ``grasp_height``: grip site height over the item's origin when closing the fingers
    (the fingers close along world y, across the item's short side).
    ``grasp_back``: how far (x) in front of the item's origin the hand may grasp when the
    handle of the drawer above is in the way (less than the item's half-length).
    """

    name: str
    grasp_height: float
    grasp_back: float = 0.025
    drawer_release: float = 0.03  # hand over the drawer region site when letting go (site ~3 cm over the floor)
    drawer_inset: float = 0.03  # drop this far toward the open end from the region's centre (mid exposed part)
    close_speed: float = 0.4  # push the drawer shut gently over the item: a fast stop slides it to the back
    handle_clear: float = 0.045  # grip site at least this far in front of the handle above (palm ~3 cm thick)
    plate_release: float = 0.03  # hand over the plate's origin when letting go
    plate_carry: float = 0.25  # carry high: the item hangs below the hand and must clear the drawer's walls


class Verify(Skill):
    """Finish at once, succeeded iff ``test(scene)``: stops a chain whose effect did not happen."""

    def __init__(self, test, name: str = "verify"):
        super().__init__()
        self.test, self.name = test, name

    def step(self, scene: Scene):
        return self.finish(bool(self.test(scene)))


def in_drawer(scene: Scene, item: HiddenItem, level: str) -> bool:
    return scene.check("in", item.name, region_name(level))


def drop_point(item: HiddenItem, level: str):
    def target(scene: Scene) -> np.ndarray:
        return scene.pos(region_name(level)) + pull_axis(scene, level) * item.drawer_inset

    return target


def to_plate(item: HiddenItem) -> Chain:
    return place_at(lambda s: s.pos(PLATE), release_height=item.plate_release, carry_height=item.plate_carry)


class StoreItem(Chain):
    """Pick the item off the table, drop it in the open drawer ``level``, close that drawer."""

    def __init__(self, item: HiddenItem, level: str):
        self.level = level
        super().__init__(
            [
                pick(item.name, item.grasp_height),
                place_at(drop_point(item, level), release_height=item.drawer_release, carry_height=0.12),
                Verify(lambda s: in_drawer(s, item, level), name=f"{item.name} in drawer"),
                CloseDrawer(level, speed=item.close_speed),
            ],
            name=f"store {item.name} in {level}",
        )


def pick_from_drawer(item: HiddenItem, level: str, lift_z: float) -> Chain:
    """Grasp the item in an open drawer: the palm only fits between the side walls at one y,
    so line up on it above the walls and keep it while going down (the fingers, closing
    along y, centre the item between them)."""

    def at(height: float):
        def target(scene: Scene) -> np.ndarray:
            p = scene.pos(item.name)
            x = p[0]
            above = LEVELS.index(level) - 1
            if above >= 0:  # keep the palm clear of the handle of the (closed) drawer above
                front = handle_pos(scene, LEVELS[above])[0] - item.handle_clear
                x = min(x, max(front, p[0] - item.grasp_back))
            return np.array([x, palm_y_in(scene, level), p[2] + height])

        return target

    return Chain(
        [
            MoveTo(at(0.14), DOWN, OPEN, tol=0.01, name="over"),
            MoveTo(at(0.09), DOWN, OPEN, tol=0.002, max_speed=0.4, name="line up"),
            MoveTo(at(item.grasp_height), DOWN, OPEN, tol=0.006, max_speed=0.3, name="descend"),
            Grip(CLOSE, name="close"),
            Rise(lift_z, DOWN, CLOSE, name="lift"),
        ],
        name=f"pick {item.name} from {level}",
    )


class RetrieveItem(Chain):
    """Pick the item out of the open drawer and put it on the plate."""

    def __init__(self, item: HiddenItem, level: str, item_z: float):
        super().__init__(
            [
                pick_from_drawer(item, level, item_z + 0.16),
                to_plate(item),
            ],
            name=f"{item.name} to plate",
        )


class HideAndRetrievePlan(Plan):
    """Subclasses set ``task_id`` and ``item``."""

    item: HiddenItem

    def remember_cue(self, cue_states, scene: Scene, memory: Memory) -> None:
        memory["stage"] = "store"  # the episode starts: the item still has to go in

    def remember(self, finished: Skill, scene: Scene, memory: Memory) -> None:
        if isinstance(finished, StoreItem) and finished.index >= 3:
            # the item was seen in the drawer (Verify passed) before it was closed
            memory["item_in"] = finished.level
            memory["stage"] = "retrieve"
        elif (
            isinstance(finished, CloseDrawer)
            and memory.get("stage") == "store"
            and in_drawer(scene, self.item, finished.level)
        ):
            memory["item_in"] = finished.level  # closed over the item after a failed store chain
            memory["stage"] = "retrieve"

    def next_skill(self, scene: Scene, memory: Memory, rng: np.random.Generator) -> Skill | None:
        item, name = self.item, self.item.name
        if scene.check("on", name, PLATE) and not scene.grasped(name):
            return None
        # drawers standing open (not shut): the binding's starts just past LIBERO's open threshold
        opened = [level for level in LEVELS if not is_closed(scene, level)]
        stage = memory.get("stage")  # None: no memory
        if scene.grasped(name):
            if stage != "retrieve" and opened:  # a drawer open for it: this item goes in
                return Chain(
                    [
                        place_at(drop_point(item, opened[0]), release_height=item.drawer_release),
                        CloseDrawer(opened[0], speed=item.close_speed),
                    ],
                    name="drop in drawer",
                )
            return to_plate(item)
        if scene.hidden(name):
            if opened:  # an open drawer, and the item is not in it: close it again
                return CloseDrawer(opened[0])
            return OpenDrawer(memory.get("item_in") or self.choose(LEVELS, rng))
        holding = [level for level in opened if in_drawer(scene, item, level)]
        if holding:  # the item lies in an open drawer, in view
            if stage == "store":
                return CloseDrawer(holding[0], speed=item.close_speed)
            return RetrieveItem(item, holding[0], float(scene.pos(name)[2]))
        # the item lies on the table (or somewhere in view); with a drawer open for it,
        # the scene says it still has to go in
        if stage != "retrieve" and opened:
            return StoreItem(item, opened[0])
        return Chain([pick(name, item.grasp_height, lift=0.25), to_plate(item)], name=f"{name} to plate")
