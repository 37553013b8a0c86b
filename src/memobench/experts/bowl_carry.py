"""Carrying a bowl by its rim from a chosen side, and setting held items down by their own origin.

The rim grasp (hand tilted to the wall's lean, one finger inside the bowl,
closing along world y), measured for P04 and shared by every plan that moves
a bowl (P01, P02, P04, T02, T05). The side is the caller's choice: P04 grasps
the wall facing away from its row of bowls, a bowl carrying an item the wall
with the most room between the item and the inner finger.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from memobench.experts.control import CLOSE, DOWN, OPEN, rot_axis
from memobench.experts.scene import Scene
from memobench.experts.skills import TABLE_Z, Chain, Grip, MoveTo, Rise, Skill

LOWER_STEPS = 40  # a free descent of the last 3 cm takes ~10-15 steps
CARRY_MARGIN = 0.10  # held object's origin this much above its release point while carrying over

# The upper wall: a ring of thin boxes leaning outward. Per kind: radius and height of the
# box centre over the bowl's origin, half its slant length, and the sine of its lean.
WALL = {"akita": (0.0471, 0.0337, 0.01875, 0.253), "white": (0.0357, 0.0226, 0.01266, 0.284)}
RIM = {"akita": 0.052, "white": 0.035}  # rim height over the bowl's origin
# The hand is tilted to the wall's lean so the finger pads lie flat on it (held on an edge,
# a bowl pivots out of the fingers within ~50 steps). The grip site sits on the wall's mid
# surface this far below the rim (along the wall): the pads (-0.005..+0.012 along the
# approach axis around the site) then cover the top ~1.5 cm of the wall.
GRIP_BELOW_RIM = 0.010
FINGER_BOTTOM = 0.011  # the finger bodies reach this far past the grip site along the approach axis
LIFT_Z = TABLE_Z + 0.20  # hand height after grasping (held akita bowl's bottom ~16 cm above the table)


def kind(bowl: str) -> str:
    """The wall geometry a bowl has: the white bowl's, or the (black or red) akita bowls'."""
    return "white" if bowl.startswith("white_bowl") else "akita"


class Guarded(MoveTo):
    """MoveTo that gives up as soon as ``bowl`` is no longer in the hand."""

    def __init__(self, bowl: str, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.bowl = bowl

    def step(self, scene: Scene) -> np.ndarray | None:
        if not scene.grasped(self.bowl):
            return self.finish(False)
        return super().step(scene)


class CheckGrasp(Skill):
    """Succeeds (at once, no action) when ``bowl`` is held, fails otherwise."""

    def __init__(self, bowl: str):
        super().__init__()
        self.bowl, self.name = bowl, f"check {bowl}"

    def step(self, scene: Scene) -> np.ndarray | None:
        return self.finish(scene.grasped(self.bowl))


def wall_grip(bowl: str, side: float) -> tuple[np.ndarray, np.ndarray]:
    """(grip site over the bowl's origin, wall's up direction) for the wall on ``side`` (+-y)."""
    r, z, half, sin = WALL[kind(bowl)]
    up = np.array([0.0, side * sin, np.sqrt(1.0 - sin**2)])
    top = np.array([0.0, side * r, z]) + half * up
    return top - GRIP_BELOW_RIM * up, up


def grasp_rot(bowl: str, side: float) -> np.ndarray:
    """Hand orientation with the approach axis along the wall, pointing down (fingers close across it)."""
    sin = WALL[kind(bowl)][3]
    return rot_axis(np.array([1.0, 0.0, 0.0]), -side * np.arcsin(sin)) @ DOWN


def finger_reach(bowl: str) -> float:
    """Height of the fingers' lowest point over the origin of a bowl held by its rim."""
    site, up = wall_grip(bowl, 1.0)
    return float(site[2] - FINGER_BOTTOM * up[2])


def room_side(scene: Scene, bowl: str, item: str | None) -> float:
    """+1 or -1 (world y): the wall farther from ``item`` lying in the bowl (+1 with no item)."""
    if item is None:
        return 1.0
    return 1.0 if scene.pos(item)[1] <= scene.pos(bowl)[1] else -1.0


def pick_bowl_from(bowl: str, side: float) -> Chain:
    """Grasp ``bowl`` by its rim on the ``side`` (+-1 along world y) wall and lift it."""
    site, up = wall_grip(bowl, side)
    rot = grasp_rot(bowl, side)

    def at(back: float):
        def target(s: Scene) -> np.ndarray:
            return s.pos(bowl) + site + back * up

        return target

    return Chain(
        [
            MoveTo(at(0.09), rot, OPEN, tol=0.01, name="over"),
            MoveTo(at(0.0), rot, OPEN, tol=0.005, max_speed=0.5, name="descend"),
            Grip(CLOSE, rot=rot, name="close"),
            Rise(LIFT_Z, rot, CLOSE, name="lift"),
            CheckGrasp(bowl),
        ],
        name=f"pick {bowl}",
    )


def place_held_bowl(
    held: str, side: float, goal: Callable[[Scene, float], np.ndarray], *, carry: float, name: str
) -> Chain:
    """Carry the bowl held on its ``side`` wall, lower it and let go.

    ``goal(scene, extra)`` is where the bowl's origin should be ``extra`` metres above
    its release point; the hand is steered by the bowl's own origin (the grasp offset is
    read live), carrying ``carry`` above, aligning 3 cm above, then lowering.
    """
    rot = grasp_rot(held, side)

    def hand_for(extra: float):
        def target(s: Scene) -> np.ndarray:
            return goal(s, extra) + (s.eef_pos() - s.pos(held))

        return target

    return Chain(
        [
            Guarded(held, hand_for(carry), rot, CLOSE, tol=0.012, name="carry"),
            Guarded(held, hand_for(0.03), rot, CLOSE, tol=0.006, max_speed=0.6, name="align"),
            Guarded(held, hand_for(0.0), rot, CLOSE, tol=0.004, max_speed=0.4, name="lower"),
            Grip(OPEN, rot=rot, name="release"),
            Rise(LIFT_Z, rot, OPEN, name="retreat"),
        ],
        name=name,
    )


def set_down(
    held: str, goal: Callable[[Scene], np.ndarray], rot, *, carry: float = CARRY_MARGIN, retreat_z: float = LIFT_Z
) -> Chain:
    """Carry ``held`` until its origin is at ``goal(scene)`` (steered by the object itself), let go, rise.

    The hand target is ``goal + hand - object``, read every step, so an object
    that slipped in the fingers still lands where its origin should be.
    """

    def hand_for(extra: float):
        def target(s: Scene) -> np.ndarray:
            return goal(s) + np.array([0.0, 0.0, extra]) + (s.eef_pos() - s.pos(held))

        return target

    return Chain(
        [
            Guarded(held, hand_for(carry), rot, CLOSE, tol=0.012, name="carry"),
            Guarded(held, hand_for(0.03), rot, CLOSE, tol=0.006, max_speed=0.6, name="align"),
            # tolerant: an object touching down short of its goal stalls the descent; let go there
            Chain(
                [
                    Guarded(
                        held, hand_for(0.0), rot, CLOSE, tol=0.004, max_steps=LOWER_STEPS, max_speed=0.4, name="lower"
                    )
                ],
                tolerant=True,
                name="lower",
            ),
            Grip(OPEN, rot=rot, name="release"),
            Rise(retreat_z, rot, OPEN, name="retreat"),
        ],
        name=f"set down {held}",
    )


def bowl_rot(scene: Scene, bowl: str):
    """The rim-grasp orientation for the side the hand holds ``bowl`` on."""
    side = 1.0 if scene.eef_pos()[1] >= scene.pos(bowl)[1] else -1.0
    return grasp_rot(bowl, side)


__all__ = ["pick_bowl_from", "room_side", "set_down", "bowl_rot", "Skill"]
