"""Carrying a bowl by its rim from a chosen side, and setting held items down by their own origin.

The rim grasp itself (hand tilted to the wall's lean, one finger inside the
bowl, closing along world y) is P04's (``plans/p04.py``), reused here through
its geometry helpers; P04 picks the wall facing away from its row of bowls,
whereas a bowl carrying an item needs the wall with the most room between the
item and the inner finger, so here the side is the caller's choice.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from memobench.experts.control import CLOSE, OPEN
from memobench.experts.plans.p04 import LIFT_Z, _CheckGrasp, _Guarded, _wall, grasp_rot
from memobench.experts.scene import Scene
from memobench.experts.skills import Chain, Grip, MoveTo, Rise, Skill

LOWER_STEPS = 40  # a free descent of the last 3 cm takes ~10-15 steps
CARRY_MARGIN = 0.10  # held object's origin this much above its release point while carrying over


def room_side(scene: Scene, bowl: str, item: str | None) -> float:
    """+1 or -1 (world y): the wall farther from ``item`` lying in the bowl (+1 with no item)."""
    if item is None:
        return 1.0
    return 1.0 if scene.pos(item)[1] <= scene.pos(bowl)[1] else -1.0


def pick_bowl_from(bowl: str, side: float) -> Chain:
    """Grasp ``bowl`` by its rim on the ``side`` (+-1 along world y) wall and lift it."""
    site, up = _wall(bowl, side)
    rot = grasp_rot(bowl, side)

    def at(back: float):
        def target(s: Scene) -> np.ndarray:
            return s.pos(bowl) + site + back * up
        return target

    return Chain([
        MoveTo(at(0.09), rot, OPEN, tol=0.01, name="over"),
        MoveTo(at(0.0), rot, OPEN, tol=0.005, max_speed=0.5, name="descend"),
        Grip(CLOSE, rot=rot, name="close"),
        Rise(LIFT_Z, rot, CLOSE, name="lift"),
        _CheckGrasp(bowl),
    ], name=f"pick {bowl}")


def set_down(held: str, goal: Callable[[Scene], np.ndarray], rot, *, carry: float = CARRY_MARGIN,
             retreat_z: float = LIFT_Z) -> Chain:
    """Carry ``held`` until its origin is at ``goal(scene)`` (steered by the object itself), let go, rise.

    The hand target is ``goal + hand - object``, read every step, so an object
    that slipped in the fingers still lands where its origin should be.
    """
    def hand_for(extra: float):
        def target(s: Scene) -> np.ndarray:
            return goal(s) + np.array([0.0, 0.0, extra]) + (s.eef_pos() - s.pos(held))
        return target

    return Chain([
        _Guarded(held, hand_for(carry), rot, CLOSE, tol=0.012, name="carry"),
        _Guarded(held, hand_for(0.03), rot, CLOSE, tol=0.006, max_speed=0.6, name="align"),
        # tolerant: an object touching down short of its goal stalls the descent; let go there
        Chain([_Guarded(held, hand_for(0.0), rot, CLOSE, tol=0.004, max_steps=LOWER_STEPS, max_speed=0.4,
                        name="lower")], tolerant=True, name="lower"),
        Grip(OPEN, rot=rot, name="release"),
        Rise(retreat_z, rot, OPEN, name="retreat"),
    ], name=f"set down {held}")


def bowl_rot(scene: Scene, bowl: str):
    """The rim-grasp orientation for the side the hand holds ``bowl`` on."""
    side = 1.0 if scene.eef_pos()[1] >= scene.pos(bowl)[1] else -1.0
    return grasp_rot(bowl, side)


__all__ = ["pick_bowl_from", "room_side", "set_down", "bowl_rot", "Skill"]
