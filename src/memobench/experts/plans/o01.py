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
GRASP_HEIGHT = 0.045  # at the carton's origin, mid-height: higher, the gable top wedges in the open fingers
RELEASE_HEIGHT = 0.145  # hand above the plate's origin when letting go (carton bottom ~1 cm up)


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
            return place_at(lambda s: s.pos("plate_1"), release_height=RELEASE_HEIGHT)
        carton = memory.get("cued") or self.choose(CARTONS, rng)
        return pick(carton, GRASP_HEIGHT)
