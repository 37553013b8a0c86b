"""T09 pour twice: pour the tomato sauce over the bowl exactly twice, standing the bottle back in
its place after each pour, then put it on the plate.

Memory: ``pours`` - the pours done so far (one more each time a pour skill
succeeds). Nothing in the scene shows it: after any pour the bottle stands back
in its place and the arm goes home (the task's home gates), so the scene looks
the same after one pour as after two.

Decisions, from the scene (the same for the expert and the memoryless one):

- bottle on the plate, released: done;
- bottle standing anywhere else, released (in its place, or after a missed
  grasp): pick it up (the arm home first, as before every decision with the
  hand empty);
- bottle held over the bowl (after a pour): stand it back in its place;
- bottle held elsewhere (just picked): pour, or take it to the plate. With
  memory: pour while fewer than the plan's ``pours`` are done (a constructor
  argument, default 2; ``PourTwicePlan(pours=3)`` is the over-pouring variant
  that tests the extra-pour rejection). Without: a uniform guess.

So the memoryless expert guesses three times on its way to success ("pour",
"pour", "plate"): 1/8. The best memoryless strategy does better, 1/4 (the task
file's chance level): it tells the untouched bottle from one put back. The
reactive expert always pours and fails on the third pour.
"""

from __future__ import annotations

import numpy as np

from memobench.experts.expert import Memory, Plan
from memobench.experts.pouring import Pour, pour_spot, rest_height, set_down, steered
from memobench.experts.scene import Scene
from memobench.experts.skills import Skill, pick

BOTTLE, BOWL, PLATE = "tomato_sauce_1", "akita_black_bowl_1", "plate_1"
# The bottle's place: its start region's centre (the home gates want it within 3 cm of it).
PLACE = "kitchen_table_tomato_sauce_init_region"
GRASP_HEIGHT = 0.012  # grip site above the bottle's origin (mid-height; the bottle is 7.6 cm tall)
PLATE_TOP = 0.006  # the plate's flat centre over its origin (measured from its collision boxes)
OVER_BOWL = 0.06  # m, xy: the held bottle is "at the bowl" within this of the pour spot


def put_back(scene: Scene) -> Skill:
    """Stand the held bottle back in its place."""
    return set_down(BOTTLE, steered(BOTTLE, PLACE), grasp_height=GRASP_HEIGHT, half_height=rest_height(scene, BOTTLE))


def to_plate(scene: Scene) -> Skill:
    """Stand the held bottle on the plate's centre."""
    return set_down(
        BOTTLE,
        steered(BOTTLE, PLATE),
        grasp_height=GRASP_HEIGHT,
        half_height=rest_height(scene, BOTTLE),
        surface=lambda sc: sc.pos(PLATE)[2] + PLATE_TOP,
    )


class PourTwicePlan(Plan):
    task_id = "T09-pour-twice-bowl"

    def __init__(self, pours: int = 2):
        self.pours = int(pours)

    def remember(self, finished: Skill, scene: Scene, memory: Memory) -> None:
        if isinstance(finished, Pour) and finished.succeeded:
            memory["pours"] = memory.get("pours", 0) + 1

    def next_skill(self, scene: Scene, memory: Memory, rng: np.random.Generator) -> Skill | None:
        if scene.grasped(BOTTLE):
            if np.linalg.norm(scene.pos(BOTTLE)[:2] - pour_spot(BOWL)(scene)[:2]) < OVER_BOWL:
                return put_back(scene)
            if "pours" in memory:
                again = memory["pours"] < self.pours
            else:  # memoryless: the scene looks the same after every pour
                again = self.choose((True, False), rng)
            return Pour(BOTTLE, BOWL) if again else to_plate(scene)
        if scene.check("on", BOTTLE, PLATE):
            return None  # the bottle stands on the plate: the last step is done
        memory.setdefault("pours", 0)  # the expert starts counting; the memoryless one forgets it
        return pick(BOTTLE, GRASP_HEIGHT)
