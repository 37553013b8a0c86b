"""The arena's drawer tasks (A04, A05, A11-A14, A17): items into wooden_cabinet_1's drawers on the coffee table.

Two plans, subclassed by the task modules (this module is not a plan module itself: its
name is no task prefix):

- :class:`DrawerStoragePlan` (A11-A14, A17): each item into its drawer, in the order the
  stages name them; a drawer that is not the next item's is shut first; the last drawer
  is shut at the end (an optional stage).
- :class:`CheckThenStorePlan` (A04, A05): open and close the top, middle and bottom
  drawers in turn, then open the target drawer again and put the butter in it.

The cabinet stands at y = +0.3 with its drawers facing the robot's centre line: they
slide along -y, 15 cm of travel fully out in front of the carcass (measured: inner floor
20.5 cm along x, 15 cm along y, walls 5.7 cm, the drawer above's bottom 0.5 cm over them).
The drawer skills of :mod:`memobench.experts.drawers` work the handles unchanged (they
read the slide axis from the joint). Items are picked from the table with the fingers
across their short side, then the hand turns a quarter turn about the vertical while
carried, so that its 20 cm palm lies along x, parallel to the cabinet's front: along y it
would hit the front of the closed drawer above. Two items in one drawer lie side by side
along x, each in its own slot.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

from memobench.experts.coffee_table import grasp_height, half_height
from memobench.experts.control import CLOSE, DOWN, OPEN, rot_z
from memobench.experts.drawers import LEVELS, CloseDrawer, OpenDrawer, is_closed, region_name
from memobench.experts.expert import Memory, Plan
from memobench.experts.scene import Scene
from memobench.experts.skills import Chain, Grip, MoveTo, Rise, Skill, pick

# Fingers along world x (closing across a pack turned long side along y): the palm parallel to the front.
ACROSS = rot_z(np.pi / 2) @ DOWN
LIFT = 0.30  # hand over the table's top after the grasp: a held pack clears the open top drawer's walls
CARRY = 0.08  # the held item's origin this far over its release point while carried over the drawer
RETREAT = 0.32  # hand over the table's top after letting go
FLOOR_BELOW_SITE = 0.028  # a drawer's inner floor under its region site (measured: 0.530 vs 0.558)
RELEASE_MARGIN = 0.012  # the held item's bottom over the drawer's floor when letting go
HOME_XY = (-0.06, 0.0)  # the grip site's start position over the coffee table (measured) ...
HOME_HEIGHT = 0.25  # ... and its height over the table's top
SLOT_SPACING = 0.075  # x between two items' slots in one drawer (packs 4-6 cm wide once turned)
# The stage rule: within 15 cm (xy) of the drawer's region site, -10 to +20 cm above it (task files).
IN_DRAWER_RADIUS, IN_DRAWER_Z = 0.15, (-0.10, 0.20)


def in_drawer(scene: Scene, item: str, level: str) -> bool:
    """True when ``item`` lies where its stage wants it (the ``level`` drawer) and is not in the hand."""
    offset = scene.pos(item) - scene.pos(region_name(level))
    inside = np.linalg.norm(offset[:2]) < IN_DRAWER_RADIUS and IN_DRAWER_Z[0] < offset[2] < IN_DRAWER_Z[1]
    return bool(inside) and not scene.grasped(item)


def slot(item: str, level: str, slot_x: float):
    """Where ``item``'s origin is let go in the open ``level`` drawer: ``slot_x`` along x from its centre."""

    def goal(scene: Scene) -> np.ndarray:
        site = scene.pos(region_name(level))
        return site + np.array([slot_x, 0.0, -FLOOR_BELOW_SITE + RELEASE_MARGIN + half_height(item)])

    return goal


class HeldItemSteering:
    """Where the hand must be for the held ``item``'s origin to reach ``goal`` (plus ``extra`` up).

    The grasp offset (hand minus item) is read live while the fingers hold the item, so one
    that slipped in them still lands where it should, and kept from the last step they held
    it once they do not, so the hand still goes to the slot. Steered by the live offset of a
    dropped item, the target moved with the hand and ran away from it (A17, seed 106: the
    butter fell onto the drawer's front during the carry; the hand ran into the cabinet under
    the top drawer and wedged there to the horizon).

    An object, not a closure: an expert is deep-copied at every planned step, and each copy
    must carry its own offset (``copy.deepcopy`` shares a closure's captured state).
    """

    def __init__(self, scene: Scene, item: str, goal: Callable[[Scene], np.ndarray]):
        self.item, self.goal = item, goal
        self.offset = scene.eef_pos() - scene.pos(item)

    def hand(self, scene: Scene, extra: float) -> np.ndarray:
        if scene.grasped(self.item):
            self.offset = scene.eef_pos() - scene.pos(self.item)
        return self.goal(scene) + np.array([0.0, 0.0, extra]) + self.offset


def put_in(scene: Scene, item: str, level: str, slot_x: float = 0.0) -> Skill:
    """Turn the held ``item`` a quarter turn where it is, carry it over the open ``level`` drawer,
    lower it until its bottom is just over the floor, let go and rise.

    The hand is steered by the item's own origin (:class:`HeldItemSteering`), so an item
    that slipped in the fingers still lands in its slot. Not guarded: an item that falls on
    the way is found where it lies by the next decision.
    """
    steer = HeldItemSteering(scene, item, slot(item, level, slot_x))
    here = scene.eef_pos()
    return Chain(
        [
            MoveTo(here, ACROSS, CLOSE, tol=0.015, rot_tol=0.05, max_speed=0.5, name="turn"),
            MoveTo(partial(steer.hand, extra=CARRY), ACROSS, CLOSE, tol=0.012, name="carry"),
            MoveTo(partial(steer.hand, extra=0.0), ACROSS, CLOSE, tol=0.005, max_steps=60, max_speed=0.4, name="lower"),
            Grip(OPEN, rot=ACROSS, name="release"),
            Rise(scene.table_top() + RETREAT, ACROSS, OPEN, name="retreat"),
        ],
        name=f"{item} into {level}",
        tolerant=True,
    )


def take(scene: Scene, item: str) -> Skill:
    """Rise, go back to the start pose, then pick ``item`` off the table and lift it over the drawers' walls.

    Straight from a drawer's handle (or from over an open drawer) to an item, turning from the
    handle's pitched pose to pointing down on the way, the hand swept into the open drawer
    and the wrist ran into its limit (measured, A17): from the start pose every item is a
    short, straight reach.
    """
    table = scene.table_top()
    home = np.array([HOME_XY[0], HOME_XY[1], table + HOME_HEIGHT])
    return Chain(
        [
            Rise(table + HOME_HEIGHT, None, OPEN, max_steps=60, name="rise"),
            MoveTo(home, DOWN, OPEN, tol=0.03, rot_tol=0.1, name="home"),
            pick(item, grasp_height(item), lift=LIFT, table_z=table),
        ],
        name=f"take {item}",
    )


def open_levels(scene: Scene) -> list[str]:
    return [level for level in LEVELS if not is_closed(scene, level)]


class DrawerStoragePlan(Plan):
    """Put each ``(item, level)`` of ``placements`` into its drawer, in order; shut the last drawer.

    Memory: none (see the task modules): whether each item lies on the table, in the hand,
    in an open drawer or hidden in a closed one tells what is left to do.
    """

    placements: tuple[tuple[str, str], ...] = ()

    def slot_x(self, item: str, level: str) -> float:
        sharing = [i for i, lv in self.placements if lv == level]
        offsets = (np.arange(len(sharing)) - (len(sharing) - 1) / 2) * SLOT_SPACING
        return float(offsets[sharing.index(item)])

    def done(self, scene: Scene, item: str, level: str) -> bool:
        """Stored: seen in its drawer, or hidden (a closed drawer is the only place out of view)."""
        return scene.hidden(item) or in_drawer(scene, item, level)

    def next_skill(self, scene: Scene, memory: Memory, rng: np.random.Generator) -> Skill | None:
        opened = open_levels(scene)
        for item, level in self.placements:
            if scene.grasped(item):
                if level in opened:
                    return put_in(scene, item, level, self.slot_x(item, level))
                return put_in(scene, item, opened[0]) if opened else None
        todo = [(i, lv) for i, lv in self.placements if not self.done(scene, i, lv)]
        if todo:
            item, level = todo[0]
            others = [lv for lv in opened if lv != level]
            if others:  # the stages want a drawer shut before the next one opens
                return CloseDrawer(others[0])
            if level not in opened:
                return OpenDrawer(level)
            return take(scene, item)
        last = self.placements[-1][1]
        if last in opened:
            return CloseDrawer(last, speed=0.4)  # gently: the items inside stay where they lie
        return None


class CheckThenStorePlan(Plan):
    """Open and shut the top, middle and bottom drawers in turn, then open the target drawer
    again and put :attr:`item` in it (shut it gently at the end: an optional stage).

    The target is :attr:`target_level` when the instruction names it (A05), else the drawer
    seen holding one of :attr:`contents` while it was checked (A04). The item goes
    :attr:`slot_x` along x from the drawer's centre, beside what already lies there.

    Memory: ``checked`` - the drawers opened and shut again so far, in order; ``holding`` -
    the drawers seen holding an object while open. Both start empty (:meth:`remember_cue`),
    so a plan whose memory lacks them is running memoryless. Without memory the scene does
    not tell how many checks were made (all drawers shut and the item on the table look the
    same before the first check and after the last): with every drawer shut it opens one
    uniformly (the reactive expert: the top one, first in view), and with a drawer open
    that could be the target it guesses between putting the item in and shutting it again
    (the reactive expert puts it in: an open drawer invites it). An item once stored is
    done for every variant: only the expert stores it after the three checks.
    """

    item = "butter_1"
    target_level: str | None = None
    contents: tuple[str, ...] = ()
    slot_x = 0.0

    def remember_cue(self, cue_states: Sequence[np.ndarray], scene: Scene, memory: Memory) -> None:
        memory["checked"], memory["holding"] = [], []

    def remember(self, finished: Skill, scene: Scene, memory: Memory) -> None:
        if "checked" not in memory:
            return
        for level in open_levels(scene):
            if self.holds_object(scene, level) and level not in memory["holding"]:
                memory["holding"].append(level)
        shut = isinstance(finished, CloseDrawer) and is_closed(scene, finished.level)
        if shut and finished.level not in memory["checked"]:
            memory["checked"].append(finished.level)

    def holds_object(self, scene: Scene, level: str) -> bool:
        """One of :attr:`contents` lies on the ``level`` drawer's floor. (Not :func:`in_drawer`:
        the stage's 20 cm window above a drawer's site takes in the drawer above, 7 cm higher.)"""
        site = scene.pos(region_name(level))
        for name in self.contents:
            offset = scene.pos(name) - site
            if np.linalg.norm(offset[:2]) < IN_DRAWER_RADIUS and -FLOOR_BELOW_SITE - 0.01 < offset[2] < 0.03:
                return True
        return False

    def could_be_target(self, scene: Scene, level: str) -> bool:
        """What the scene alone says of an open drawer: it is the target, or might be."""
        return level == self.target_level if self.target_level else self.holds_object(scene, level)

    def target(self, memory: Memory) -> str | None:
        if self.target_level:
            return self.target_level
        return memory["holding"][0] if memory["holding"] else None

    def next_skill(self, scene: Scene, memory: Memory, rng: np.random.Generator) -> Skill | None:
        opened = open_levels(scene)
        if scene.grasped(self.item):
            return put_in(scene, self.item, opened[0], self.slot_x) if opened else None
        if scene.hidden(self.item) or any(in_drawer(scene, self.item, level) for level in LEVELS):
            return CloseDrawer(opened[0], speed=0.4) if opened else None  # gently: the item stays put
        checked = memory.get("checked")
        if checked is None:
            return self._guess(scene, opened, rng)
        if len(checked) < len(LEVELS):  # checking: the open drawer is the one being checked
            return CloseDrawer(opened[0]) if opened else OpenDrawer(LEVELS[len(checked)])
        target = self.target(memory)
        if target is None:
            return None  # no drawer held an object: nothing the instruction asks can be done
        if target in opened:
            return take(scene, self.item)
        return CloseDrawer(opened[0]) if opened else OpenDrawer(target)

    def _guess(self, scene: Scene, opened: list[str], rng: np.random.Generator) -> Skill:
        """The memoryless decision (class docstring)."""
        if not opened:
            return OpenDrawer(self.choose(LEVELS, rng))
        level = opened[0]
        if self.could_be_target(scene, level) and self.choose(("store", "shut"), rng) == "store":
            return take(scene, self.item)
        return CloseDrawer(level)
