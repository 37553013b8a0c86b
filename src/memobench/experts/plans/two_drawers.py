"""Two drawers, retrieve the first (S06-S08): A into the open drawer, B into another, then A to the plate.

The tasks differ only in the item pair, so one plan serves them all: a task's
plan module subclasses :class:`TwoDrawersPlan` and sets ``task_id``, ``first``
(A) and ``second`` (B), each a :class:`~memobench.experts.plans.hide_and_retrieve.HiddenItem`.
This module is not a plan module itself (its name is no task prefix).

Memory: ``a_in`` / ``b_in`` - the drawer each item was put in, noted when it
went in. Which drawer B goes into is the robot's choice: the plan draws it
uniformly among the two drawers that do not hold A. Once both drawers are shut,
all three look alike; without memory the plan cannot tell which one holds A:

- storing B, it opens a drawer uniformly among all three (A's drawer with
  probability 1/3: it sees A, closes that drawer again and draws again);
- retrieving A, it opens a drawer uniformly among all three (right with
  probability 1/3; a drawer showing B or nothing is closed again, then it draws again).

Every other decision is settled by the scene: whether each item is on the
table, in hand, in an open drawer or hidden tells the stage.
"""

from __future__ import annotations

import numpy as np

from memobench.experts.control import DOWN, OPEN
from memobench.experts.drawers import LEVELS, CloseDrawer, OpenDrawer, is_closed
from memobench.experts.expert import Memory, Plan
from memobench.experts.plans.hide_and_retrieve import (
    PLATE,
    HiddenItem,
    RetrieveItem,
    Verify,
    drop_point,
    in_drawer,
    to_plate,
)
from memobench.experts.scene import Scene
from memobench.experts.skills import BackOff, Chain, MoveTo, Rise, Skill, pick, place_at

LIFT = 0.30  # lift items this high over the table before carrying them to a drawer


class Store(Chain):
    """Pick the item off the table, lay it in the open drawer ``level``, close that drawer.

    As :class:`~memobench.experts.plans.hide_and_retrieve.StoreItem`, but lifting the item
    to ``LIFT`` first: carried from in front of the cabinet at the usual 15 cm, the item
    hanging under the hand caught the front wall of the open top drawer and fell (measured).
    """

    def __init__(self, item: HiddenItem, level: str):
        self.item, self.level = item, level
        super().__init__(
            [
                pick(item.name, item.grasp_height, lift=LIFT),
                place_at(drop_point(item, level), release_height=item.drawer_release, carry_height=0.12),
                Verify(lambda s: in_drawer(s, item, level), name=f"{item.name} in drawer"),
                CloseDrawer(level, speed=item.close_speed),
            ],
            name=f"store {item.name} in {level}",
        )


class DropAndClose(Chain):
    """Lay the held item in the open drawer ``level`` and push that drawer shut gently."""

    def __init__(self, item: HiddenItem, level: str):
        self.item, self.level = item, level
        super().__init__(
            [
                place_at(drop_point(item, level), release_height=item.drawer_release),
                CloseDrawer(level, speed=item.close_speed),
            ],
            name=f"drop {item.name} in {level}",
        )


HOME = np.array([-0.21, 0.0, 1.17])  # the hand's start pose (over the table, pointing down)


class OpenForB(Chain):
    """Open drawer ``level`` for B, then bring the hand back to its start pose.

    Straight from the handle pose to B's pick pose the wrist runs into its joint limit
    (joint 6 at 3.75 rad, measured after opening the bottom drawer) and the hand stalls.
    """

    def __init__(self, level: str):
        self.level = level
        super().__init__(
            [
                OpenDrawer(level),
                BackOff(0.08),  # off the handle first: rising from it wound the wrist to its limit
                Rise(HOME[2], DOWN, OPEN, max_steps=60, name="rise"),
                MoveTo(HOME, DOWN, OPEN, tol=0.02, name="home"),
            ],
            name=f"open {level} for B",
        )


class TwoDrawersPlan(Plan):
    """Subclasses set ``task_id``, ``first`` (A, brought back) and ``second`` (B, stays hidden)."""

    first: HiddenItem
    second: HiddenItem

    def remember_cue(self, cue_states, scene: Scene, memory: Memory) -> None:
        memory["a_in"] = memory["b_in"] = None  # the episode starts: nothing stored yet

    def remember(self, finished: Skill, scene: Scene, memory: Memory) -> None:
        if "a_in" not in memory:  # memoryless: nothing to keep
            return
        if not isinstance(finished, Store | DropAndClose | CloseDrawer):
            return
        for key, item in (("a_in", self.first), ("b_in", self.second)):
            # the item lies in the drawer this skill shut (or was about to shut)
            if in_drawer(scene, item, finished.level):
                memory[key] = finished.level

    def next_skill(self, scene: Scene, memory: Memory, rng: np.random.Generator) -> Skill | None:
        a, b = self.first, self.second
        if scene.check("on", a.name, PLATE) and not scene.grasped(a.name):
            return None
        opened = [level for level in LEVELS if not is_closed(scene, level)]
        a_open = [level for level in opened if in_drawer(scene, a, level)]
        b_open = [level for level in opened if in_drawer(scene, b, level)]
        free = [level for level in opened if level not in a_open and level not in b_open]
        a_hidden, b_hidden = scene.hidden(a.name), scene.hidden(b.name)
        b_stored = b_hidden or bool(b_open)

        if scene.grasped(a.name):
            if not b_stored and free:  # A still has to go in: into the drawer open for it
                return DropAndClose(a, free[0])
            return to_plate(a)
        if scene.grasped(b.name):
            if free:
                return DropAndClose(b, free[0])
            if a_open:  # the drawer standing open holds A: shut it before B goes anywhere
                return CloseDrawer(a_open[0], speed=a.close_speed)
            return self._open_for_b(memory, rng)
        if a_open:
            if b_hidden:  # both stored: this is A's drawer, reopened to fetch it
                return RetrieveItem(a, a_open[0], float(scene.pos(a.name)[2]))
            # A was just laid in (or its drawer was opened when looking for B's): hide it
            return CloseDrawer(a_open[0], speed=a.close_speed)
        if b_open:  # B was just laid in (or its drawer was opened when looking for A): hide it
            return CloseDrawer(b_open[0], speed=b.close_speed)
        if a_hidden:
            if free:  # an empty drawer stands open
                if not b_stored:
                    return Store(b, free[0])  # opened for B
                return CloseDrawer(free[0])  # opened looking for A: it is not here
            if not b_stored:
                return self._open_for_b(memory, rng)
            return OpenDrawer(memory.get("a_in") or self.choose(LEVELS, rng))
        # A lies in view outside any drawer: on the table at the start (the drawer open
        # for it), or dropped on the way to the plate once B is stored
        if not b_stored and free:
            return Store(a, free[0])
        return Chain([pick(a.name, a.grasp_height, lift=0.25), to_plate(a)], name=f"{a.name} to plate")

    def _open_for_b(self, memory: Memory, rng: np.random.Generator) -> Skill:
        """Open a drawer for B: the robot's choice among those not holding A (all three if unknown)."""
        a_in = memory.get("a_in")
        options = [level for level in LEVELS if level != a_in] if a_in else list(LEVELS)
        return OpenForB(self.choose(options, rng))
