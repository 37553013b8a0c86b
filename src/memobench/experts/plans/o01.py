"""O01 cued milk: put the carton the cue pointed at on the plate.

Memory: ``cued`` - the carton the cue pointed at. Without it, the two
cartons are indistinguishable and the plan guesses (chance 1/2).
"""

from __future__ import annotations

import numpy as np

from memobench.experts.expert import Memory, Plan
from memobench.experts.plans.cues import pointed_objects
from memobench.experts.scene import Scene
from memobench.experts.skills import Skill, pick, place_at

CARTONS = ("milk_1", "milk_2")
GRASP_HEIGHT = 0.045  # above the carton's origin (mid-height); at 0.03 or lower the gable top wedges in the fingers
LIFT = 0.27  # hand above the table after the grasp: the held carton clears the other (13 cm tall)
CARRY = 0.13  # hand above its release pose while carrying over the plate
# carton origin over the plate's origin at release: standing on it (plate 1.6 cm + 7 cm) pressed
# ~6 mm, so it touches
RESTING = 0.080


def release_pose(carton: str):
    """Hand target that puts the held carton's origin at its resting height over the plate.

    Steered by the carton itself (hand offset read live), so a carton that slid
    in the fingers still lands centred and touching the plate.
    """

    def target(scene: Scene) -> np.ndarray:
        goal = scene.pos("plate_1") + np.array([0.0, 0.0, RESTING])
        return goal + scene.eef_pos() - scene.pos(carton)

    return target


class CuedMilkPlan(Plan):
    task_id = "O01-cued-milk"

    def remember_cue(self, cue_states, scene: Scene, memory: Memory) -> None:
        pointed = pointed_objects(cue_states, CARTONS, scene)
        if pointed:
            memory["cued"] = pointed[0]

    def next_skill(self, scene: Scene, memory: Memory, rng: np.random.Generator) -> Skill | None:
        on_plate = [c for c in CARTONS if scene.check("on", c, "plate_1") and not scene.grasped(c)]
        if on_plate:
            return None  # a carton stands on the plate: as far as the scene tells, done
        held = [c for c in CARTONS if scene.grasped(c)]
        if held:
            return place_at(release_pose(held[0]), carry_height=CARRY, held=held[0])
        carton = memory.get("cued") or self.choose(CARTONS, rng)
        return pick(carton, GRASP_HEIGHT, lift=LIFT)
