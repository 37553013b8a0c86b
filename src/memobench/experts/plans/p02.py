"""P02 clear and serve: the butter on the plate into the bowl, then the cued bottle on the plate.

Memory: ``serve`` - the bottle the cue's demonstration stood on the plate
(after it cleared the butter into the bowl). Clearing needs no memory: the
butter lies on the plate in view. Serving does: three bottles (ketchup,
barbecue sauce, orange juice) stand by and without memory the plan guesses
uniformly among them; a bottle standing on the plate after the clearing
looks done. Chance 1/3.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from memobench.experts.bottles import HALF, STAND_MARGIN, kind, stand_on
from memobench.experts.bowl_carry import set_down
from memobench.experts.control import DOWN
from memobench.experts.expert import Memory, Plan
from memobench.experts.plans.cues import moves
from memobench.experts.scene import Scene
from memobench.experts.skills import TABLE_Z, Chain, Skill, pick

BOTTLES = ("ketchup_1", "bbq_sauce_1", "orange_juice_1")
BUTTER, BOWL, PLATE = "butter_1", "akita_black_bowl_1", "yellow_plate_1"
# Yellow plate's top over its origin: 0.007 measured (plate origin 0.9025, a bottle standing
# on it has its bottom at 0.909, the butter 0.910). It was 0.016, so bottles were let go
# 1.7 cm up: they dropped and stood at full speed, but the slow expert's orange juice stuck
# to the opening finger, was carried off and fell (4 of 20 slow-expert episodes never ended).
PLATE_TOP = 0.007
TOUCH = -0.003  # bottles are set down on the plate (descent stalls on touching) before letting go
GRASP_HEIGHT = -0.002  # grip site at the butter's centre (1.7 cm tall), as in S01
IN_BOWL = 0.068  # butter's origin over the bowl's when letting go: fingers above the rim (see P01)


def clear(held: bool = False) -> Chain:
    """(Pick the butter and) drop it in the bowl."""
    parts = [] if held else [pick(BUTTER, GRASP_HEIGHT, lift=0.18)]
    return Chain(
        parts + [set_down(BUTTER, lambda s: s.pos(BOWL) + np.array([0.0, 0.0, IN_BOWL]), DOWN)], name="butter into bowl"
    )


def put_back(scene: Scene, bottle: str) -> Skill:
    """Stand a held bottle on the table below where it is now."""
    goal = np.array([*scene.pos(bottle)[:2], TABLE_Z + STAND_MARGIN + HALF[kind(bottle)]])
    return set_down(bottle, lambda s: goal, DOWN)


class ClearAndServePlan(Plan):
    task_id = "P02-clear-and-serve"

    def remember_cue(self, cue_states, scene: Scene, memory: Memory) -> None:
        served = [bottle for bottle, _ in moves(cue_states, BOTTLES, [PLATE], scene)]
        if served:
            memory["serve"] = served[0]

    def demonstrate_memory(self, binding: Mapping[str, Any], scene: Scene, memory: Memory) -> None:
        memory["serve"] = binding["serve"]["target"]

    def next_skill(self, scene: Scene, memory: Memory, rng: np.random.Generator) -> Skill | None:
        held = [o for o in (BUTTER, *BOTTLES) if scene.grasped(o)]
        cleared = scene.check("on", BUTTER, BOWL) and not held
        served = [b for b in BOTTLES if scene.check("on", b, PLATE)]
        if cleared and served and not held:
            return None  # butter in the bowl, a bottle on the plate: as far as the scene tells, done
        if BUTTER in held:
            return clear(held=True)
        if not scene.check("on", BUTTER, BOWL):
            if held:  # a bottle in the hand before the plate is cleared (never seen): stand it back down
                return put_back(scene, held[0])
            return clear()
        if held:  # a bottle in the hand: it goes on the plate
            return stand_on(held[0], PLATE, PLATE_TOP, held=True, margin=TOUCH)
        bottle = memory.get("serve") or self.choose(BOTTLES, rng)
        return stand_on(bottle, PLATE, PLATE_TOP, margin=TOUCH)
