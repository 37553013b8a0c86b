"""T04 microwave open-close: open the microwave door, then close it again.

Memory: ``opened`` - the door was pulled open in this episode; ``checked`` -
it was closed again after that. A shut door looks the same before and after
the check, so without memory the plan cannot tell "not yet" from "done".

Decisions, from the scene (the same for the expert and the memoryless one):

- the door is not shut (open, or left ajar by a slipped pull): close it;
- the door is shut: with memory, open it unless the check is done, then stop.
  Without memory both "open it" and "stop" are consistent with the scene, so
  the plan picks one uniformly. The hand's position is not read: it says
  nothing about the door that the door does not.

So the memoryless expert guesses once, at the start: "open" (1/2) leads to
success (the episode ends as soon as the closed-after-open checkpoint holds),
"stop" leaves the door shut and untouched. Chance 1/2.
"""

from __future__ import annotations

import numpy as np

from memobench.experts.expert import Memory, Plan
from memobench.experts.microwave import CloseMicrowave, OpenMicrowave, is_closed, is_open
from memobench.experts.scene import Scene
from memobench.experts.skills import Skill


class MicrowaveCheckPlan(Plan):
    """What the microwave-check plans (T04, T05) remember: ``opened`` after the door was
    seen open, ``checked`` once it was closed again after that."""

    def remember_cue(self, cue_states, scene: Scene, memory: Memory) -> None:
        memory["checked"] = False  # the episode starts: nothing done yet (no cue in these tasks)

    def remember(self, finished: Skill, scene: Scene, memory: Memory) -> None:
        if isinstance(finished, OpenMicrowave) and is_open(scene):
            memory["opened"] = True
        elif isinstance(finished, CloseMicrowave) and is_closed(scene) and "checked" in memory:
            memory["checked"] = memory["checked"] or bool(memory.get("opened"))

    def check_done(self, memory: Memory, rng: np.random.Generator) -> bool:
        """Whether the open-close check of the (shut) microwave is done: from memory, or a uniform
        guess when there is none (a shut door looks the same before and after the check)."""
        if "checked" in memory:
            return bool(memory["checked"])
        return bool(self.choose((False, True), rng))


class MicrowaveOpenClosePlan(MicrowaveCheckPlan):
    task_id = "T04-microwave-open-close"

    def next_skill(self, scene: Scene, memory: Memory, rng: np.random.Generator) -> Skill | None:
        if not is_closed(scene):  # the door stands open (the scene shows it): close it
            return CloseMicrowave()
        return None if self.check_done(memory, rng) else OpenMicrowave()
