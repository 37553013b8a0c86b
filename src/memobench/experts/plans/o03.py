"""O03 cued butter row: put the butter pack the cue pointed at on the plate.

Memory: ``cued`` - the pack the cue pointed at. Five identical packs lie in a
row and the scene is restored after the cue, so without memory the plan picks a
pack drawn uniformly (chance 1/5); once a pack lies on the plate the scene looks
done, so it never tries a second pack.

The packs lie across the table (long side along x) 9 cm apart in y, the
direction the fingers close in: open, the fingers reach ~5.3 cm to either side
of the grasped pack's centre and the neighbours' near edges are 7 cm away.
"""

from __future__ import annotations

import numpy as np

from memobench.experts.expert import Memory, Plan
from memobench.experts.plans.cues import pointed_objects
from memobench.experts.scene import Scene
from memobench.experts.skills import Skill, pick, place_at

PACKS = tuple(f"butter_{i}" for i in range(1, 6))
PLATE = "plate_1"
GRASP_HEIGHT = -0.002  # grip site at the pack's centre (as in S01)
LIFT = 0.15  # hand above the table after the grasp: the pack clears its 1.7 cm neighbours
CARRY = 0.10  # hand above its release pose while carrying over the plate
RELEASE = 0.03  # hand over the plate's origin when letting go (as in S01)


def plate(scene: Scene) -> np.ndarray:
    return scene.pos(PLATE)


class CuedButterRowPlan(Plan):
    task_id = "O03-cued-butter-row"

    def remember_cue(self, cue_states, scene: Scene, memory: Memory) -> None:
        pointed = pointed_objects(cue_states, PACKS, scene)
        if pointed:
            memory["cued"] = pointed[0]

    def next_skill(self, scene: Scene, memory: Memory, rng: np.random.Generator) -> Skill | None:
        held = [p for p in PACKS if scene.grasped(p)]
        if held:
            return place_at(plate, carry_height=CARRY, release_height=RELEASE, held=held[0])
        if any(scene.check("on", p, PLATE) for p in PACKS):
            return None  # a pack lies on the plate: as far as the scene tells, done
        pack = memory.get("cued") or self.choose(PACKS, rng)
        return pick(pack, GRASP_HEIGHT, lift=LIFT)
