"""S01 hide and retrieve butter: butter into the open drawer, close it, reopen it, butter onto the plate.

Memory: ``butter_in`` - the drawer the butter was put in, noted when it went in
(with ``stage`` = "retrieve" from then on; "store" before). Once that drawer
is closed the butter is hidden and all drawers look alike: without memory the
plan guesses a drawer uniformly, closes it again if it shows empty, and
guesses again (chance 1/3 per guess).
"""

from __future__ import annotations

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

BUTTER, PLATE = "butter_1", "plate_1"
GRASP_HEIGHT = -0.002  # grip site at the butter's origin (its centre; 1.8 cm tall): the descent stops up to 6 mm short
DRAWER_RELEASE = 0.03  # hand over the drawer region site when letting go (site ~3 cm over the floor)
DRAWER_INSET = 0.03  # drop this far toward the open end from the region's centre (mid exposed part)
CLOSE_SPEED = 0.4  # push the drawer shut gently over the butter: a fast stop slides it to the back
HANDLE_CLEAR = 0.045  # grip site at least this far in front of the handle above (the palm is ~3 cm thick)
PLATE_RELEASE = 0.03  # hand over the plate's origin when letting go
PLATE_CARRY = 0.25  # carry high: the butter hangs below the hand and must clear the open drawer's walls


class Verify(Skill):
    """Finish at once, succeeded iff ``test(scene)``: stops a chain whose effect did not happen."""

    def __init__(self, test, name: str = "verify"):
        super().__init__()
        self.test, self.name = test, name

    def step(self, scene: Scene):
        return self.finish(bool(self.test(scene)))


def in_drawer(scene: Scene, level: str) -> bool:
    return scene.check("in", BUTTER, region_name(level))


def drop_point(level: str):
    def target(scene: Scene) -> np.ndarray:
        return scene.pos(region_name(level)) + pull_axis(scene, level) * DRAWER_INSET
    return target


class StoreButter(Chain):
    """Pick the butter off the table, drop it in the open drawer ``level``, close that drawer."""

    def __init__(self, level: str):
        self.level = level
        super().__init__([
            pick(BUTTER, GRASP_HEIGHT),
            place_at(drop_point(level), release_height=DRAWER_RELEASE, carry_height=0.12),
            Verify(lambda s: in_drawer(s, level), name="butter in drawer"),
            CloseDrawer(level, speed=CLOSE_SPEED),
        ], name=f"store butter in {level}")


def pick_from_drawer(level: str, lift_z: float) -> Chain:
    """Grasp the butter in an open drawer: the palm only fits between the side walls at one y,
    so line up on it above the walls and keep it while going down (the fingers, closing
    along y, centre the butter between them)."""
    def at(height: float, speed_tol: float = 0.0):
        def target(scene: Scene) -> np.ndarray:
            p = scene.pos(BUTTER)
            x = p[0]
            above = LEVELS.index(level) - 1
            if above >= 0:  # keep the palm clear of the handle of the (closed) drawer above
                front = handle_pos(scene, LEVELS[above])[0] - HANDLE_CLEAR
                x = min(x, max(front, p[0] - 0.025))  # still within the butter's 3.8 cm half-length
            return np.array([x, palm_y_in(scene, level), p[2] + height])
        return target

    return Chain([
        MoveTo(at(0.14), DOWN, OPEN, tol=0.01, name="over"),
        MoveTo(at(0.09), DOWN, OPEN, tol=0.002, max_speed=0.4, name="line up"),
        MoveTo(at(GRASP_HEIGHT), DOWN, OPEN, tol=0.006, max_speed=0.3, name="descend"),
        Grip(CLOSE, name="close"),
        Rise(lift_z, DOWN, CLOSE, name="lift"),
    ], name=f"pick butter from {level}")


class RetrieveButter(Chain):
    """Pick the butter out of the open drawer and put it on the plate."""

    def __init__(self, level: str, butter_z: float):
        super().__init__([
            pick_from_drawer(level, butter_z + 0.16),
            place_at(lambda s: s.pos(PLATE), release_height=PLATE_RELEASE, carry_height=PLATE_CARRY),
        ], name="butter to plate")


class HideAndRetrieveButterPlan(Plan):
    task_id = "S01-hide-and-retrieve-butter"

    def remember_cue(self, cue_states, scene: Scene, memory: Memory) -> None:
        memory["stage"] = "store"  # the episode starts: the butter still has to go in

    def remember(self, finished: Skill, scene: Scene, memory: Memory) -> None:
        if isinstance(finished, StoreButter) and finished.index >= 3:
            # the butter was seen in the drawer (Verify passed) before it was closed
            memory["butter_in"] = finished.level
            memory["stage"] = "retrieve"
        elif isinstance(finished, CloseDrawer) and memory.get("stage") == "store" and in_drawer(scene, finished.level):
            memory["butter_in"] = finished.level  # closed over the butter after a failed store chain
            memory["stage"] = "retrieve"

    def next_skill(self, scene: Scene, memory: Memory, rng: np.random.Generator) -> Skill | None:
        if scene.check("on", BUTTER, PLATE) and not scene.grasped(BUTTER):
            return None
        # drawers standing open (not shut): the binding's starts just past LIBERO's open threshold
        opened = [level for level in LEVELS if not is_closed(scene, level)]
        stage = memory.get("stage")  # None: no memory
        if scene.grasped(BUTTER):
            if stage != "retrieve" and opened:  # a drawer open for it: this butter goes in
                return Chain([place_at(drop_point(opened[0]), release_height=DRAWER_RELEASE),
                              CloseDrawer(opened[0], speed=CLOSE_SPEED)], name="drop in drawer")
            return place_at(lambda s: s.pos(PLATE), release_height=PLATE_RELEASE, carry_height=PLATE_CARRY)
        if scene.hidden(BUTTER):
            if opened:  # an open drawer, and the butter is not in it: close it again
                return CloseDrawer(opened[0])
            return OpenDrawer(memory.get("butter_in") or self.choose(LEVELS, rng))
        holding = [level for level in opened if in_drawer(scene, level)]
        if holding:  # the butter lies in an open drawer, in view
            if stage == "store":
                return CloseDrawer(holding[0], speed=CLOSE_SPEED)
            return RetrieveButter(holding[0], float(scene.pos(BUTTER)[2]))
        # the butter lies on the table (or somewhere in view); with a drawer open for it,
        # the scene says it still has to go in
        if stage != "retrieve" and opened:
            return StoreButter(opened[0])
        return Chain([pick(BUTTER, GRASP_HEIGHT, lift=0.25),
                      place_at(lambda s: s.pos(PLATE), release_height=PLATE_RELEASE, carry_height=PLATE_CARRY)],
                     name="butter to plate")
