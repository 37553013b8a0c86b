"""O02 cued bowl: put the butter in the bowl the cue pointed at.

Memory: ``cued`` - the bowl the cue pointed at. The three yellow bowls are
identical and the scene is restored after the cue, so without memory the plan
puts the butter in a bowl drawn uniformly (chance 1/3); once the butter lies in
a bowl the scene looks done, so it never tries a second bowl.

Geometry measured from the model: yellow bowl rim ~5.3 cm from its origin
(its bottom), 5.2 cm tall; butter 7.6 x 4.0 x 1.7 cm, origin at its centre.
"""

from __future__ import annotations

import numpy as np

from memobench.experts.expert import Memory, Plan
from memobench.experts.plans.cues import pointed_objects
from memobench.experts.scene import Scene
from memobench.experts.skills import Skill, pick, place_at

BOWLS = ("yellow_bowl_1", "yellow_bowl_2", "yellow_bowl_3")
BUTTER = "butter_1"
GRASP_HEIGHT = -0.002  # grip site at the butter's centre (as in S01)
LIFT = 0.20  # hand over the table after the grasp: the butter (~1 cm below it) clears 5.2 cm bowls
CARRY = 0.10  # hand above its release pose while carrying over the bowl
RELEASE = 0.035  # hand over the bowl's origin (its bottom) at the release: the butter drops ~1.5 cm
RELEASE_STEPS = 7  # fingers open this long: wide enough to let the butter go, clear of the bowl's rim


def over_bowl(bowl: str):
    def target(scene: Scene) -> np.ndarray:
        return scene.pos(bowl)

    return target


class CuedBowlPlan(Plan):
    task_id = "O02-cued-bowl"

    def remember_cue(self, cue_states, scene: Scene, memory: Memory) -> None:
        pointed = pointed_objects(cue_states, BOWLS, scene)
        if pointed:
            memory["cued"] = pointed[0]

    def next_skill(self, scene: Scene, memory: Memory, rng: np.random.Generator) -> Skill | None:
        if scene.grasped(BUTTER):
            bowl = memory.get("cued") or self.choose(BOWLS, rng)
            return place_at(
                over_bowl(bowl), carry_height=CARRY, release_height=RELEASE, held=BUTTER, release_steps=RELEASE_STEPS
            )
        if any(scene.check("on", BUTTER, b) for b in BOWLS):
            return None  # the butter lies in a bowl: as far as the scene tells, done
        return pick(BUTTER, GRASP_HEIGHT, lift=LIFT)
