"""O05 cued mug: put the mug the cue pointed at on the tray.

Memory: ``cued`` - the mug the cue pointed at. The three red mugs are
identical and the scene is restored after the cue, so without memory the plan
picks a mug drawn uniformly (chance 1/3); once a mug stands on the tray the
scene looks done, so it never tries a second mug.

Geometry measured from the model (mug at rest, origin at its bottom): a cup
13.1 cm tall, ~8 cm across (too wide for the 7.9 cm finger opening), its axis
~1.6 cm to +y of the origin, the handle on -y. The mug is grasped by its rim
on the -x side (towards the robot): the hand turned a quarter turn so the
fingers close along x, one inside the cup and one outside, the pads on the top
~1.5 cm of the 7 mm wall. Neighbouring mugs stand along y, clear of the
fingers. The held mug is steered by its own origin (hand target = goal + hand
- mug, read every step): LIBERO's ``on`` needs the mug's origin within 3 cm
(xy) of the tray's.
"""

from __future__ import annotations

import numpy as np

from memobench.experts.control import CLOSE, DOWN, OPEN, rot_z
from memobench.experts.expert import Memory, Plan
from memobench.experts.plans.cues import pointed_objects
from memobench.experts.scene import Scene
from memobench.experts.skills import TABLE_Z, Chain, Grip, MoveTo, Rise, Skill

MUGS = tuple(f"red_coffee_mug_{i}" for i in range(1, 4))
TRAY = "wooden_tray_1"
ROT = rot_z(np.pi / 2) @ DOWN  # fingers closing along world x
# Grip site over the mug's origin, in the mug's frame: the -x wall's mid surface 1.3 cm
# below the 13.1 cm rim (world offset at rest (-0.035, +0.016, 0.118)).
GRIP_LOCAL = np.array([-0.016, -0.035, 0.118])
APPROACH = 0.08  # hand this far above the grip point before descending onto the rim
# Hand after the grasp: the held mug's bottom ~19 cm over the table, above the tray's 8 cm walls.
LIFT_Z = TABLE_Z + 0.32
CARRY = 0.06  # held mug's bottom this much above its release height while carrying over the tray
TRAY_FLOOR = 0.008  # the tray's floor over its origin (T10)
RELEASE_GAP = 0.006  # mug's bottom over the floor when letting go


def grip_point(mug: str, back: float):
    def target(scene: Scene) -> np.ndarray:
        return scene.pos(mug) + scene.rot(mug) @ GRIP_LOCAL + np.array([0.0, 0.0, back])

    return target


class _Holding(Skill):
    """Succeeds (at once, no action) when ``mug`` is held, fails otherwise."""

    def __init__(self, mug: str):
        super().__init__()
        self.mug, self.name = mug, f"check {mug}"

    def step(self, scene: Scene) -> np.ndarray | None:
        return self.finish(scene.grasped(self.mug))


def pick_mug(mug: str) -> Chain:
    """Grasp ``mug`` by its rim (fingers either side of the -x wall) and lift it."""
    return Chain(
        [
            MoveTo(grip_point(mug, APPROACH), ROT, OPEN, tol=0.01, name="over"),
            MoveTo(grip_point(mug, 0.0), ROT, OPEN, tol=0.005, max_speed=0.5, name="descend"),
            Grip(CLOSE, rot=ROT, name="close"),
            Rise(LIFT_Z, ROT, CLOSE, name="lift"),
            _Holding(mug),
        ],
        name=f"pick {mug}",
    )


def place_on_tray(mug: str) -> Chain:
    """Carry the held mug over the tray's origin, lower it onto the floor, let go, rise."""

    def hand_for(extra: float):
        def target(scene: Scene) -> np.ndarray:
            goal = scene.pos(TRAY) + np.array([0.0, 0.0, TRAY_FLOOR + RELEASE_GAP + extra])
            return goal + scene.eef_pos() - scene.pos(mug)

        return target

    def carry_to(scene: Scene) -> np.ndarray:  # over the release pose, at the lift height
        return np.array([*hand_for(0.0)(scene)[:2], LIFT_Z])

    return Chain(
        [
            MoveTo(carry_to, ROT, CLOSE, tol=0.012, name="carry"),
            MoveTo(hand_for(CARRY), ROT, CLOSE, tol=0.008, name="over tray"),
            MoveTo(hand_for(0.0), ROT, CLOSE, tol=0.005, max_speed=0.5, name="lower"),
            Grip(OPEN, rot=ROT, name="release"),
            Rise(LIFT_Z, ROT, OPEN, name="retreat"),
        ],
        name=f"place {mug} on tray",
        tolerant=True,
    )


class CuedMugPlan(Plan):
    task_id = "O05-cued-mug"

    def remember_cue(self, cue_states, scene: Scene, memory: Memory) -> None:
        pointed = pointed_objects(cue_states, MUGS, scene)
        if pointed:
            memory["cued"] = pointed[0]

    def next_skill(self, scene: Scene, memory: Memory, rng: np.random.Generator) -> Skill | None:
        held = [m for m in MUGS if scene.grasped(m)]
        if held:
            return place_on_tray(held[0])
        if any(scene.check("on", m, TRAY) for m in MUGS):
            return None  # a mug stands on the tray: as far as the scene tells, done
        mug = memory.get("cued") or self.choose(MUGS, rng)
        return pick_mug(mug)
