"""Side grasp: hold a tall bottle upright by its body, the hand level, fingers closing horizontally.

Picked from above by its neck, a bottle hangs far under the fingers and
turns and slides in them (T10's wine bottle: 7 cm between the grip and its
centre of mass). From the side, the pads close on the body near the centre
of mass. The hand points along a horizontal direction ``approach`` (given by
its ``yaw`` from world +x); a pour is then a roll of the wrist about that
direction, the axis the pads hold firmly (``Pour(..., hand=side_rot(yaw),
axis=approach(yaw))``); about the finger axis the bottle would pivot
between the pads.

Straight ahead (+x, yaw 0) is out of reach at table height: the wrist runs
into its joint limits (joint 6 at 3.75, or joint 7 at 2.9). Turned +30 to
+90 degrees toward +y the OSC reaches the grasp, the pour rolls and the
release poses within 1 cm and 0.04 rad (measured on a T10 layout).

The hand comes in level from behind the bottle at the grasp height, closes
and lifts; it sets the bottle down upright, letting go over the support
(:func:`side_set_down`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from memobench.experts.control import CLOSE, DOWN, OPEN, rot_axis
from memobench.experts.pouring import CARRY_TILT, hand_rot
from memobench.experts.scene import Scene
from memobench.experts.skills import TABLE_Z, Chain, Grip, MoveTo, Rise, Skill

UP = np.array([0.0, 0.0, 1.0])
BACK_OFF = 0.12  # m, the hand lines up this far behind the bottle before closing in
PAD_LEAD = 0.004  # m, grip site past the bottle's axis: the pads' centre is 3.6 mm behind it


def approach(yaw: float) -> np.ndarray:
    """The horizontal unit vector the hand points along, ``yaw`` rad from world +x toward +y."""
    return np.array([np.cos(yaw), np.sin(yaw), 0.0])


def side_rot(yaw: float) -> np.ndarray:
    """Grip-site orientation pointing along :func:`approach` (``yaw``), level, third axis up.

    The start pose (``DOWN``) pitched up by 90 degrees, then turned ``yaw`` about the vertical."""
    return rot_axis(UP, yaw) @ rot_axis(np.array([0.0, 1.0, 0.0]), -np.pi / 2) @ DOWN


def side_pick(obj: str, grasp_height: float, yaw: float, *, lift: float) -> Chain:
    """Grasp ``obj`` from the side, pointing along ``approach(yaw)``, at ``grasp_height`` over its origin; lift.

    ``lift``: the hand's height over the table at the end."""
    rot, ahead = side_rot(yaw), approach(yaw)

    def at(along: float) -> Callable[[Scene], np.ndarray]:
        return lambda scene: scene.pos(obj) + along * ahead + np.array([0.0, 0.0, grasp_height])

    return Chain([
        MoveTo(at(-BACK_OFF), rot, OPEN, tol=0.01, max_steps=120, name="behind"),
        MoveTo(at(PAD_LEAD), rot, OPEN, tol=0.006, max_speed=0.5, name="in"),
        Grip(CLOSE, rot=rot, name="close"),
        Rise(TABLE_Z + lift, rot, CLOSE, name="lift"),
    ], name=f"side-pick {obj}")


def side_set_down(obj: str, spot: Callable[[Scene], np.ndarray], yaw: float, *,
                  release_z: Callable[[Scene], float], carry_height: float) -> Chain:
    """Carry the held ``obj`` over ``spot`` at the carry tilt, stand it upright, lower the hand to ``release_z``, let go.

    ``spot`` gives the table point under the hand (its z is ignored);
    ``release_z`` the grip site's world height when letting go; the open
    hand then rises.
    """
    rot = side_rot(yaw)

    def over(scene: Scene) -> np.ndarray:
        p = spot(scene)
        return np.array([p[0], p[1], TABLE_Z + carry_height])

    def down(scene: Scene) -> np.ndarray:
        p = spot(scene)
        return np.array([p[0], p[1], release_z(scene)])

    parts: list[Skill] = [
        MoveTo(over, hand_rot(CARRY_TILT, rot, approach(yaw)), CLOSE, tol=0.012, max_steps=150, name="carry"),
        MoveTo(over, rot, CLOSE, tol=0.012, max_steps=60, name="upright"),
        MoveTo(down, rot, CLOSE, tol=0.006, max_speed=0.5, max_steps=120, name="lower"),
        Grip(OPEN, steps=12, rot=rot, name="release"),
        Rise(TABLE_Z + 0.25, rot, OPEN, name="retreat"),
    ]
    return Chain(parts, name=f"set down {obj}")
