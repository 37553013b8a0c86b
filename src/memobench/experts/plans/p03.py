"""P03 discard then plate: the bottle the cue showed as waste into the basket, then the other on the plate.

Memory: ``waste`` - the bottle the cue's demonstration dropped into the
basket (ketchup or barbecue sauce; it then stood the other on the plate).
Without it both bottles look alike as far as the routine goes: with neither
moved, the plan guesses which one is waste (1/2); once one lies in the
basket the scene shows it, and plating the other follows. Each of "discard
X" and "plate X" is one skill (pick and set down), so a guess is made once.
Chance 1/2.

Bottles are picked from above and lifted until their bottoms clear the
basket's rim (14.6 cm); they are lowered into the basket's middle and let go
4 cm over its floor, or stood on the plate (skills in ``experts/bottles.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from memobench.experts.bottles import drop_into, stand_on
from memobench.experts.expert import Memory, Plan
from memobench.experts.plans.cues import moves
from memobench.experts.scene import Scene
from memobench.experts.skills import Chain, Skill

BOTTLES = ("ketchup_1", "bbq_sauce_1")
BASKET, PLATE = "basket_1", "yellow_plate_1"
BASKET_RIM = 0.146  # basket's top over its origin
BASKET_FLOOR = 0.022  # basket's inner floor over its origin (a bottle standing in it: bottom 0.917, origin 0.895)
PLATE_TOP = 0.016  # yellow plate's top over its origin


def discard(bottle: str, held: bool = False) -> Chain:
    return drop_into(bottle, BASKET, BASKET_RIM, BASKET_FLOOR, held=held)


def serve(bottle: str, held: bool = False) -> Chain:
    return stand_on(bottle, PLATE, PLATE_TOP, held=held)


class DiscardThenPlatePlan(Plan):
    task_id = "P03-discard-then-plate"

    def remember_cue(self, cue_states, scene: Scene, memory: Memory) -> None:
        binned = [bottle for bottle, _ in moves(cue_states, BOTTLES, [BASKET], scene)]
        if binned:
            memory["waste"] = binned[0]

    def demonstrate_memory(self, binding: Mapping[str, Any], scene: Scene, memory: Memory) -> None:
        memory["waste"] = binding["waste"]["target"]

    def next_skill(self, scene: Scene, memory: Memory, rng: np.random.Generator) -> Skill | None:
        def at_rest_on(bottle: str, support: str) -> bool:
            return scene.check("on", bottle, support) and not scene.grasped(bottle)

        binned = [b for b in BOTTLES if at_rest_on(b, BASKET)]
        plated = [b for b in BOTTLES if at_rest_on(b, PLATE)]
        if binned and plated:
            return None  # one bottle in the basket, the other on the plate: as far as the scene tells, done
        held = [b for b in BOTTLES if scene.grasped(b)]
        waste = memory.get("waste")
        if waste is None and binned:
            waste = binned[0]
        if waste is None and plated:
            waste = next(b for b in BOTTLES if b not in plated)
        if held:
            if waste is None:  # a bottle in the hand, nothing placed yet: basket or plate
                return self.choose([discard(held[0], held=True), serve(held[0], held=True)], rng)
            return discard(held[0], held=True) if held[0] == waste else serve(held[0], held=True)
        if waste is None:
            waste = self.choose(BOTTLES, rng)
        if waste not in binned:
            return discard(waste)
        keep = next(b for b in BOTTLES if b != waste)
        return serve(keep)
