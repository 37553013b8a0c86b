"""T06 stove on-off: turn the stove on, then turn it off again.

Memory: ``stove`` - "untouched", "was on" or "cycled" (see
:func:`memobench.experts.stove.note_turn`). A knob that reads on is always
turned off; a knob at rest looks the same at the start and after the on-off
cycle (each turn ends with the hand back at its start pose), so without
memory the plan guesses between "turn it on" and "done" (chance 1/2: a
"done" guess at the start ends the attempt; "turn it on" forces the off turn,
which completes the task).
"""

from __future__ import annotations

import numpy as np

from memobench.experts.expert import Memory, Plan
from memobench.experts.scene import Scene
from memobench.experts.skills import Skill
from memobench.experts.stove import knob_to_turn, note_turn, start_memory


class StoveCheckPlan(Plan):
    """What the stove plans (T06-T08) remember: the knob turns done so far (:mod:`~memobench.experts.stove`)."""

    def remember_cue(self, cue_states, scene: Scene, memory: Memory) -> None:
        start_memory(memory)  # no cue in these tasks: the episode starts untouched

    def remember(self, finished: Skill, scene: Scene, memory: Memory) -> None:
        note_turn(finished, scene, memory)


class StoveOnOffPlan(StoveCheckPlan):
    task_id = "T06-stove-on-off"

    def next_skill(self, scene: Scene, memory: Memory, rng: np.random.Generator) -> Skill | None:
        return knob_to_turn(scene, memory, lambda options: self.choose(options, rng))
