"""P04 stack in order: stack the three bowls in the order the cue's demonstration stacked them.

Memory: ``order`` - [bottom, middle, top], read from the demonstration: the
bowl it put the first one into (bottom, never picked up), the first bowl it
picked up (middle), the second (top). Without it the order is unknown: with
no stack on the table the plan guesses which bowl goes into which (uniform
over the 6 ordered (bottom, middle) pairs: a uniform bowl to pick, then a
uniform one of the other two to put it in); once a bowl sits in another the
stack is visible, and the remaining bowl can only go on top. Chance 1/6.

Bowls are too wide for the gripper (akita rim ~10.8 cm across, fingers open
~7.9 cm), so each is grasped at its rim: hand over the wall on the +-y side
facing away from the row's centre, one finger inside the bowl and one outside,
closing along world y on the wall, the hand tilted ~15 deg about world x so the
pads lie flat on the leaning wall. The held bowl is steered by its own origin
(hand target = goal + hand - bowl, read every step) and let go just above its
resting height, or higher where the outer finger would hit a rim below (the
white bowl drops ~3.5 cm into an akita bowl and settles inside it).

Geometry measured from the model (origins at the bowl's bottom, z above it):
- akita bowls (black, red): rim at z 0.052, wall radius 0.051-0.054 at the rim,
  0.041-0.045 at z 0.015 (slanted); 5.6 g.
- white bowl: rim at z 0.035, wall radius 0.039-0.041 at the rim, 0.031-0.034
  at z 0.010; 2.1 g.
- resting heights of a bowl's origin over the one it sits in: akita in akita
  0.018-0.019, white in akita 0.006-0.007, akita in white 0.024-0.025.
  All six stacks satisfy LIBERO's ``on`` (origins within 3 cm, in contact) once
  settled.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from memobench.experts.bowl_carry import (
    RIM,
    finger_reach,
    kind,
    pick_bowl_from,
    place_held_bowl,
)
from memobench.experts.expert import Memory, Plan
from memobench.experts.plans.cues import moves
from memobench.experts.scene import Scene
from memobench.experts.skills import Chain, Skill

BOWLS = ("akita_black_bowl_1", "red_akita_black_bowl_1", "white_bowl_1")

# Resting height of a bowl's origin over the origin of the bowl it sits in (measured).
NEST = {("akita", "akita"): 0.018, ("white", "akita"): 0.007, ("akita", "white"): 0.024, ("white", "white"): 0.024}
RELEASE_MARGIN = 0.006  # let go at least this much above the resting height
RIM_CLEARANCE = 0.004  # ... and with the outer finger this much above the lower bowl's rim
CARRY_MARGIN = 0.10  # held bowl's origin this much above the target's while carrying over it


def grasp_side(scene: Scene, bowl: str) -> float:
    """+1 or -1: grasp the wall facing away from the row's centre (outer finger away from neighbours)."""
    y = scene.pos(bowl)[1]
    others = [scene.pos(b)[1] for b in BOWLS if b != bowl]
    return 1.0 if y >= np.mean(others) else -1.0


def pick_bowl(scene: Scene, bowl: str) -> Chain:
    """Grasp ``bowl`` by its rim on the wall facing away from the row's centre, and lift it."""
    return pick_bowl_from(bowl, grasp_side(scene, bowl))


def release_height(scene: Scene, held: str, target: str) -> float:
    """World z of the held bowl's origin when letting go over ``target``.

    Just above where it will rest, and high enough that the outer finger clears the
    rims of the target and of any bowl it sits in.
    """
    z = scene.pos(target)[2] + NEST[(kind(held), kind(target))] + RELEASE_MARGIN
    txy = scene.pos(target)[:2]
    for other in BOWLS:
        p = scene.pos(other)
        if other != held and np.linalg.norm(p[:2] - txy) < 0.03:
            z = max(z, p[2] + RIM[kind(other)] + RIM_CLEARANCE - finger_reach(held))
    return float(z)


def place_bowl(scene: Scene, held: str, target: str) -> Chain:
    """Carry the held bowl over ``target``, lower it until just above where it rests in it, let go."""
    side = 1.0 if scene.eef_pos()[1] >= scene.pos(held)[1] else -1.0

    def goal(s: Scene, extra: float) -> np.ndarray:
        xy = s.pos(target)[:2]
        return np.array([xy[0], xy[1], release_height(s, held, target) + extra])

    return place_held_bowl(held, side, goal, carry=CARRY_MARGIN, name=f"place {held} in {target}")


class StackInOrderPlan(Plan):
    task_id = "P04-stack-in-order"

    def remember_cue(self, cue_states, scene: Scene, memory: Memory) -> None:
        stacked = moves(cue_states, BOWLS, BOWLS, scene)
        if len(stacked) < 2:
            return
        (middle, bottom), (top, _) = stacked[:2]
        if len({bottom, middle, top}) == 3:
            memory["order"] = [bottom, middle, top]

    def demonstrate_memory(self, binding: Mapping[str, Any], scene: Scene, memory: Memory) -> None:
        memory["order"] = [binding["order"][key] for key in ("bottom", "middle", "top")]

    @staticmethod
    def _stacked(scene: Scene, held: str | None) -> list[tuple[str, str]]:
        """(upper, lower) pairs of bowls resting one in the other (neither in the hand)."""
        return [(a, b) for a in BOWLS for b in BOWLS if a != b and a != held and b != held and scene.check("on", a, b)]

    def next_skill(self, scene: Scene, memory: Memory, rng: np.random.Generator) -> Skill | None:
        held_now = [b for b in BOWLS if scene.grasped(b)]
        held = held_now[0] if held_now else None
        stacks = self._stacked(scene, held)
        order = memory.get("order")
        if order is not None:
            bottom, middle, top = order
            if (top, middle) in stacks and (middle, bottom) in stacks:
                return None
            if (middle, bottom) in stacks:
                if held == top:
                    return place_bowl(scene, top, middle)
                if held is not None:  # a wrong bowl in the hand (never seen): put it back down on top
                    return place_bowl(scene, held, top)
                return pick_bowl(scene, top)
            if held == middle:
                return place_bowl(scene, middle, bottom)
            if held is not None:
                return place_bowl(scene, held, middle)
            return pick_bowl(scene, middle)

        # No memory: the scene tells only what is already stacked.
        uppers = {a for a, _ in stacks}
        lowers = {b for _, b in stacks}
        if len(stacks) >= 2:
            return None  # three bowls stacked: as far as the scene tells, done
        if stacks:
            upper = next(iter(uppers))
            rest = [b for b in BOWLS if b not in uppers | lowers]
            if held is not None:
                return place_bowl(scene, held, upper)
            return pick_bowl(scene, rest[0])
        if held is not None:
            return place_bowl(scene, held, self.choose([b for b in BOWLS if b != held], rng))
        return pick_bowl(scene, self.choose(BOWLS, rng))
