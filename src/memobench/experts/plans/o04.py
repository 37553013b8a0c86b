"""O04 cued carton row: put the milk carton the cue pointed at on the plate.

Memory: ``cued`` - the carton the cue pointed at. Five identical cartons stand
in a row and the scene is restored after the cue, so without memory the plan
picks a carton drawn uniformly (chance 1/5); once a carton stands on the plate
the scene looks done, so it never tries a second carton.

The grasp and the release are O01's (same carton, same plate). The cartons
(5.3 cm square, 13 cm tall) stand 10 cm apart in y, the direction the fingers
close in: open, the fingers reach ~5.3 cm from the grasped carton's centre and
the neighbours' near faces are 7.35 cm away.
"""

from __future__ import annotations

import numpy as np

from memobench.experts.expert import Memory, Plan
from memobench.experts.plans.cues import pointed_objects
from memobench.experts.plans.o01 import CARRY, GRASP_HEIGHT, LIFT, release_pose
from memobench.experts.scene import Scene
from memobench.experts.skills import Skill, pick, place_at

CARTONS = tuple(f"milk_{i}" for i in range(1, 6))
PLATE = "plate_1"


class CuedCartonRowPlan(Plan):
    task_id = "O04-cued-carton-row"

    def remember_cue(self, cue_states, scene: Scene, memory: Memory) -> None:
        pointed = pointed_objects(cue_states, CARTONS, scene)
        if pointed:
            memory["cued"] = pointed[0]

    def next_skill(self, scene: Scene, memory: Memory, rng: np.random.Generator) -> Skill | None:
        held = [c for c in CARTONS if scene.grasped(c)]
        if held:
            return place_at(release_pose(held[0]), carry_height=CARRY, held=held[0])
        if any(scene.check("on", c, PLATE) for c in CARTONS):
            return None  # a carton stands on the plate: as far as the scene tells, done
        carton = memory.get("cued") or self.choose(CARTONS, rng)
        return pick(carton, GRASP_HEIGHT, lift=LIFT)
