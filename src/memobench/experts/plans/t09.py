"""T09 pour twice: pour the tomato sauce over the bowl exactly twice, then set the bottle down.

Memory: ``pours`` - the pours done so far (one more each time a pour skill
succeeds). Nothing in the scene shows it: after any pour the bottle is back
near-upright in the hand over the bowl.

Decisions, from the scene (the same for the expert and the memoryless one):

- bottle standing on the table, released, hand *parked* (at :data:`PARK`,
  where only a finished set-down leaves it): done;
- bottle standing on the table, hand anywhere else (the start, a missed
  grasp): pick it up;
- bottle held, away from the bowl (just picked): pour;
- bottle held over the bowl (after a pour): pour again or set it down. With
  memory: pour again while fewer than the plan's ``pours`` are done (a
  constructor argument, default 2; ``PourTwicePlan(pours=3)`` is the
  over-pouring variant that tests the extra-pour rejection). Without: a
  uniform guess.

So the memoryless expert guesses exactly twice on its way to success (after
the first pour: "again"; after the second: "set down"), chance 1/4. Setting
down after one pour parks the hand and ends its plan (one pour: failure);
pouring a third time fails with ``extra_pour``.
"""

from __future__ import annotations

import numpy as np

from memobench.experts.expert import Memory, Plan
from memobench.experts.pouring import Pour, pour_spot, rest_height, set_down
from memobench.experts.scene import Scene
from memobench.experts.skills import Skill, pick

BOTTLE, BOWL = "tomato_sauce_1", "akita_black_bowl_1"
SPOT_REGION = "kitchen_table_tomato_sauce_init_region"
SPOT_SHIFT = np.array([-0.01, -0.01, 0.0])  # a little away from the plate
GRASP_HEIGHT = 0.012  # grip site above the bottle's origin (mid-height; the bottle is 7.6 cm tall)
PARK = np.array([-0.20, -0.18, 1.12])  # hand after setting the bottle down; not the start pose
PARK_RADIUS = 0.04
OVER_BOWL = 0.06  # m, xy: the held bottle is "at the bowl" within this of the pour spot


def set_down_spot(scene: Scene) -> np.ndarray:
    """Where the bottle goes back: its start region, clear of the bowl (> 0.15 m) and the plate."""
    return scene.pos(SPOT_REGION) + SPOT_SHIFT


class PourTwicePlan(Plan):
    task_id = "T09-pour-twice-bowl"

    def __init__(self, pours: int = 2):
        self.pours = int(pours)

    def remember(self, finished: Skill, scene: Scene, memory: Memory) -> None:
        if isinstance(finished, Pour) and finished.succeeded:
            memory["pours"] = memory.get("pours", 0) + 1

    def finished(self, scene: Scene) -> bool:
        # parked: only a finished set-down leaves the hand there (the trip home would not)
        return not scene.grasped(BOTTLE) and bool(np.linalg.norm(scene.eef_pos() - PARK) < PARK_RADIUS)

    def next_skill(self, scene: Scene, memory: Memory, rng: np.random.Generator) -> Skill | None:
        if scene.grasped(BOTTLE):
            at_bowl = np.linalg.norm(scene.pos(BOTTLE)[:2] - pour_spot(BOWL)(scene)[:2]) < OVER_BOWL
            if not at_bowl:
                return Pour(BOTTLE, BOWL)
            if "pours" in memory:
                again = memory["pours"] < self.pours
            else:  # memoryless: the scene looks the same after every pour
                again = self.choose((True, False), rng)
            if again:
                return Pour(BOTTLE, BOWL)
            return set_down(
                BOTTLE, set_down_spot, grasp_height=GRASP_HEIGHT, half_height=rest_height(scene, BOTTLE), park=PARK
            )
        memory.setdefault("pours", 0)  # the expert starts counting; the memoryless one forgets it
        return pick(BOTTLE, GRASP_HEIGHT)
