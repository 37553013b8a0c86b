"""Into the microwave (A20, A21, A23, A24; A22's last steps): open the door wide, put packs inside.

The arena's microwave stands on the coffee table at its +y end with its door on the -y
face, hinged on the -x side (toward the robot), the handle bar on the +x side. The
kitchen microwave's :class:`~memobench.experts.microwave.OpenMicrowave` pulls it open
unchanged (its geometry is read from the model). The stage needs only 0.30 or 0.50 rad,
but a door that far open stands in front of the opening; pulled to :data:`OPEN_GOAL`, a
little past the perpendicular, it leaves the opening free (the hand cannot follow the
handle much further: it stalled at -1.58). The hand then lets go and rises over the door's
top (0.64 m) before it goes anywhere: a hand going straight from the handle to the table
swept the door shut (seen).

The open door stands along x = -0.2 from the hinge to y = -0.07, 22 cm tall: the forearm of
a hand reaching the table at x <= -0.06 anywhere from y = -0.16 to the microwave hits its
top edge and swings it shut (measured on a grid). The packs therefore start at x >= 0 in
these tasks (their task files' notes say so).

A pack goes in held from above (the hand pointing down, fingers across its short side): in
front of the opening, down to just over the cavity's floor, straight in along +y, let go on
the floor. The palm (20 cm along y, across the fingers) fits under the cavity's ceiling only
with the grip site within ~2 cm of the floor (measured on the collision meshes), so the hand
can never rise over a pack in there, and backing straight out the far finger drags the pack
out with it (seen). The open fingers leave sideways instead, past the pack's end (there is
room for that beside one pack, not beside two side by side), come round to its near face
with the fingers closed and push it on: the first pack to the back, the second in front of
it (:func:`put_inside`).

This module is not a plan module itself (its name is no task prefix):
:class:`MicrowavePairPlan` serves the four two-pack tasks; A22 uses its skills.

Memory: none. What is left to do is in view: the door stays open (no task asks to close
it), so a pack inside shows through the opening, and a pack on the table is still to go
in; a door that is not open is to be opened first. The instruction names the order (an
item already inside when its stage comes up completes it at once). The plan makes no
choice the scene leaves open, so the expert, the memoryless and the reactive expert do the
same thing. Chance 1 (the best memoryless strategy is the expert's): by MEMOBench's rule
these tasks do not need memory.
"""

from __future__ import annotations

import numpy as np

from memobench.experts.bottles import kind
from memobench.experts.bowl_carry import Guarded
from memobench.experts.coffee_table import grasp_height, half_height
from memobench.experts.control import CLOSE, DOWN, OPEN
from memobench.experts.expert import Plan
from memobench.experts.microwave import MICROWAVE, OpenMicrowave, is_open
from memobench.experts.scene import Scene
from memobench.experts.skills import Chain, Grip, MoveTo, Rise, Skill, pick

OPEN_GOAL = -1.5  # rad: pull the door to here, a little past the perpendicular (module doc)
CLEAR_Z = 0.35  # hand over the table's top when clear of the door (its top is 0.22 over the table)
LIFT = 0.15  # hand over the table's top after picking a pack
# The cavity, relative to the microwave's origin (yaw 0 in every task file, so world axes):
# inside walls at x -0.144 / +0.064, opening (door face) at y -0.088, back wall +0.081,
# floor top +0.024, ceiling +0.168 (collision boxes of microwave_1_main, measured).
CAVITY_X, CAVITY_Y, FLOOR, CEILING = (-0.144, 0.064), (-0.088, 0.081), 0.024, 0.168
# The hand (measured on the collision meshes, relative to the grip site, pointing down): the
# palm reaches 0.123 m up and 0.104 m along y either way, the fingertips 0.01 m down and
# 0.013 m along x. With the grip site at floor + 0.016 the palm clears the ceiling by ~5 mm:
# the hand can move in the cavity only at that height, never rise over a pack there.
PALM_UP, PALM_Y, FINGER_X = 0.123, 0.104, 0.013
# The packs' half footprints (long side along x, short along y; coffee_table's sizes).
HALF_LENGTH = {"butter": 0.038, "cream_cheese": 0.0405, "chocolate_pudding": 0.040, "cookies": 0.0415, "popcorn": 0.031}
HALF_WIDTH = {"butter": 0.020, "cream_cheese": 0.0215, "chocolate_pudding": 0.023, "cookies": 0.031, "popcorn": 0.021}
# Every pack goes in at the cavity's middle in x, to IN_Y, and is then pushed on until its
# near (-y) face is at its slot's PUSH_FACE: the first to the back (the palm then stops
# ~8 mm short of the back wall), the second just in from the opening, in front of the first.
# (Side by side, a pack's release leaves too little room beside it for the fingers to leave.)
SLOT_X = -0.04
IN_Y = -0.068  # pack origin when let go: its middle ~2 cm in from the opening, the far finger short of the first pack
PUSH_FACE = (-0.018, -0.076)  # per slot, the pack's near face after the push
FRONT_Y = -0.20  # in front of the opening, where a pack goes down and the hand comes back out
MOVE_Z = 0.016  # grip site over the floor while the hand moves in the cavity (fingertips 6 mm over it)
SLIDE_CLEARANCE = 0.006  # a held pack's bottom over the floor while it goes in (the palm then clears the ceiling)
RELEASE_CLEARANCE = 0.004  # ... and when let go
SIDE_CLEARANCE = 0.008  # fingers clear of a pack's end or face when leaving or coming round it


def inside(scene: Scene, item: str, microwave: str = MICROWAVE) -> bool:
    """True when ``item`` lies in the cavity (its origin between the walls, over the floor), not in the hand."""
    offset = scene.pos(item) - scene.pos(microwave)
    within = (
        CAVITY_X[0] < offset[0] < CAVITY_X[1]
        and CAVITY_Y[0] < offset[1] < CAVITY_Y[1]
        and FLOOR - 0.01 < offset[2] < CEILING
    )
    return bool(within) and not scene.grasped(item)


def open_wide(scene: Scene, microwave: str = MICROWAVE) -> Chain:
    """Pull the door open to :data:`OPEN_GOAL`, then raise the hand over the door's top."""
    # tolerant: an opening that ran out of steps still lets go of the handle and rises (the
    # next skill would drag the door along otherwise); the plan checks the door afterwards
    return Chain(
        [
            OpenMicrowave(microwave, goal=OPEN_GOAL),
            Grip(OPEN, rot=None, name="let go"),
            Rise(scene.table_top() + CLEAR_Z, None, OPEN, name="clear door"),
        ],
        name=f"open {microwave} wide",
        tolerant=True,
    )


def put_inside(held: str, slot: int, table_z: float, microwave: str = MICROWAVE) -> Chain:
    """Put the held pack in the cavity and push it to slot ``slot`` (0: the back, 1: the front).

    In front of the opening, down to just over the floor, straight in (steered by the pack
    itself: the hand goes to ``goal + hand - pack``, so a pack that slipped in the fingers
    still goes where it should), let go. The open fingers straddle the pack along y and the
    palm cannot rise over it under the ceiling, so they leave sideways (+x, past the pack's
    end), come round to its near face with the fingers closed, and push it in; the hand then
    backs out and rises.
    """
    hh, half_x, half_y = half_height(held), HALF_LENGTH[kind(held)], HALF_WIDTH[kind(held)]
    floor_z = FLOOR  # the cavity's floor over the microwave's origin

    def point(x: float, y: float, z: float):
        """A world point at (x, y, z) from the microwave's origin, read live."""
        return lambda s: s.pos(microwave) + np.array([x, y, z])

    def steer(goal):
        return lambda s: goal(s) + (s.eef_pos() - s.pos(held))

    high = table_z + CLEAR_Z

    def over_front(s: Scene) -> np.ndarray:
        return np.array([*point(SLOT_X, FRONT_Y, 0.0)(s)[:2], high])

    move_z = floor_z + MOVE_Z
    aside_x = SLOT_X + half_x + FINGER_X + SIDE_CLEARANCE
    behind_y = IN_Y - half_y - FINGER_X - 2 * SIDE_CLEARANCE
    push_y = PUSH_FACE[slot] - FINGER_X
    slow = {"max_speed": 0.5}
    return Chain(
        [
            Guarded(held, over_front, DOWN, CLOSE, tol=0.015, name="carry"),
            Guarded(
                held,
                steer(point(SLOT_X, FRONT_Y, floor_z + SLIDE_CLEARANCE + hh)),
                DOWN,
                CLOSE,
                tol=0.008,
                name="front",
            ),
            Guarded(
                held,
                steer(point(SLOT_X, IN_Y, floor_z + SLIDE_CLEARANCE + hh)),
                DOWN,
                CLOSE,
                tol=0.006,
                name="slide in",
                **slow,
            ),
            Chain(
                [
                    Guarded(
                        held,
                        steer(point(SLOT_X, IN_Y, floor_z + RELEASE_CLEARANCE + hh)),
                        DOWN,
                        CLOSE,
                        tol=0.004,
                        max_steps=40,
                        max_speed=0.4,
                        name="lower",
                    )
                ],
                tolerant=True,
                name="lower",
            ),
            Grip(OPEN, rot=DOWN, name="release"),
            MoveTo(point(aside_x, IN_Y, move_z), DOWN, OPEN, tol=0.006, max_steps=80, name="aside", **slow),
            MoveTo(point(aside_x, behind_y, move_z), DOWN, OPEN, tol=0.008, max_steps=80, name="round"),
            Grip(CLOSE, rot=DOWN, name="close"),
            MoveTo(point(SLOT_X, behind_y, move_z), DOWN, CLOSE, tol=0.006, max_steps=80, name="behind", **slow),
            MoveTo(point(SLOT_X, push_y, move_z), DOWN, CLOSE, tol=0.006, max_steps=120, name="push", **slow),
            MoveTo(point(SLOT_X, FRONT_Y, move_z), DOWN, CLOSE, tol=0.015, max_steps=100, name="back out"),
            Rise(high, DOWN, CLOSE, name="retreat"),
        ],
        name=f"put {held} in {microwave}",
    )


class MicrowavePairPlan(Plan):
    """Open the microwave, then put each of ``items`` inside, in their order (module doc)."""

    items: tuple[str, ...] = ()

    def next_skill(self, scene: Scene, memory, rng: np.random.Generator) -> Skill | None:
        table = scene.table_top()
        held = [i for i in self.items if scene.grasped(i)]
        if held:
            return put_inside(held[0], self.items.index(held[0]), table)
        if not is_open(scene):
            return open_wide(scene)
        todo = [i for i in self.items if not inside(scene, i)]
        if not todo:
            return None  # every pack inside: done, as the scene shows
        return pick(todo[0], grasp_height(todo[0]), lift=LIFT, table_z=table)
