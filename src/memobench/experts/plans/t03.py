"""T03 check all drawers: open and close the top, then the middle, then the bottom drawer.

Memory: ``checked`` - the drawers opened and closed so far, in order (``opened``
marks the drawer currently being checked). After a check the cabinet looks
exactly as before, so without memory every decision is a uniform pick among
checking one of the three drawers and stopping (the reactive expert always
checks the top one).
"""

from __future__ import annotations

import numpy as np

from memobench.experts.drawers import LEVELS, CloseDrawer, OpenDrawer, is_closed, is_open
from memobench.experts.expert import Memory, Plan
from memobench.experts.scene import Scene
from memobench.experts.skills import Skill


class CheckAllDrawersPlan(Plan):
    task_id = "T03-check-all-drawers"

    def remember_cue(self, cue_states, scene: Scene, memory: Memory) -> None:
        memory["checked"] = []  # the episode starts: nothing checked yet (no cue in this task)

    def remember(self, finished: Skill, scene: Scene, memory: Memory) -> None:
        if isinstance(finished, OpenDrawer) and is_open(scene, finished.level):
            memory["opened"] = finished.level
        elif isinstance(finished, CloseDrawer) and is_closed(scene, finished.level):
            if memory.get("opened") == finished.level and "checked" in memory:
                memory["checked"].append(finished.level)
            memory.pop("opened", None)

    def next_skill(self, scene: Scene, memory: Memory, rng: np.random.Generator) -> Skill | None:
        ajar = [level for level in LEVELS if not is_closed(scene, level)]
        if ajar:  # a drawer stands open (the scene shows it): close it
            return CloseDrawer(ajar[0])
        if "checked" not in memory:  # no memory: every drawer looks unchecked, or all look checked
            level = self.choose([*LEVELS, None], rng)
            return None if level is None else OpenDrawer(level)
        todo = [level for level in LEVELS if level not in memory["checked"]]
        return OpenDrawer(todo[0]) if todo else None
