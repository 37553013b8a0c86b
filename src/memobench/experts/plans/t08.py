"""T08 stove on-off, pan on shelf: turn the stove on and off, then put the frying pan on the shelf.

Memory: ``stove`` - "untouched", "was on" or "cycled" (see
:func:`memobench.experts.stove.note_turn`). Decisions, from the scene:

- pan lying in the shelf's upper compartment: done (this plan only puts it
  there after the cycle);
- pan in the hand: slide it into the shelf (:func:`memobench.experts.shelf.shelve_pan`);
- knob on: turn it off;
- knob at rest, pan elsewhere: with memory, turn the stove on (untouched) or
  pick the pan up (cycled). Without memory the scene is the same before the
  first turn and after the on-off cycle (each turn ends with the hand back at
  its start pose), so the plan guesses between the two: 1/2 per guess.
"""

from __future__ import annotations

import numpy as np

from memobench.experts.expert import Memory
from memobench.experts.frypan import PAN, pick_pan
from memobench.experts.plans.t06 import StoveCheckPlan
from memobench.experts.scene import Scene
from memobench.experts.shelf import pan_shelved, shelve_pan
from memobench.experts.skills import Skill
from memobench.experts.stove import knob_to_turn


class StovePanOnShelfPlan(StoveCheckPlan):
    task_id = "T08-stove-on-off-pan-on-shelf"

    def next_skill(self, scene: Scene, memory: Memory, rng: np.random.Generator) -> Skill | None:
        if pan_shelved(scene):
            return None
        if scene.grasped(PAN):
            return shelve_pan()
        turn = knob_to_turn(scene, memory, lambda options: self.choose(options, rng))
        return turn if turn is not None else pick_pan()
