"""T07 stove on-off, pan on stove: turn the stove on and off, then put the frying pan on it.

Memory: ``stove`` - "untouched", "was on" or "cycled" (see
:func:`memobench.experts.stove.note_turn`). Decisions, from the scene:

- pan resting on the burner: done (this plan only puts it there after the cycle);
- pan in the hand: put it on the burner;
- knob on: turn it off;
- knob at rest, pan on the table: with memory, turn the stove on (untouched) or
  pick the pan up (cycled). Without memory the scene is the same before the
  first turn and after the on-off cycle (each turn ends with the hand back at
  its start pose), so the plan guesses between the two: 1/2 per guess.
"""

from __future__ import annotations

import numpy as np

from memobench.experts.expert import Memory
from memobench.experts.frypan import PAN, pan_rests_on, pick_pan, place_pan
from memobench.experts.plans.t06 import StoveCheckPlan
from memobench.experts.scene import Scene
from memobench.experts.skills import Skill
from memobench.experts.stove import knob_to_turn

COOK = "flat_stove_1_cook_region"
BURNER_TOP = 0.021  # m: the burner plate's top over the cook region site (where the pan's bottom rests)


def burner_spot(scene: Scene) -> np.ndarray:
    return scene.pos(COOK) + np.array([0.0, 0.0, BURNER_TOP])


class StovePanOnStovePlan(StoveCheckPlan):
    task_id = "T07-stove-on-off-pan-on-stove"

    def next_skill(self, scene: Scene, memory: Memory, rng: np.random.Generator) -> Skill | None:
        if pan_rests_on(scene, COOK):
            return None
        if scene.grasped(PAN):
            return place_pan(burner_spot)
        turn = knob_to_turn(scene, memory, lambda options: self.choose(options, rng))
        return turn if turn is not None else pick_pan()
