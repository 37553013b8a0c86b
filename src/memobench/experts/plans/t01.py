"""T01 check top drawer: open the top drawer, then close it again.

Memory: ``checked`` - whether the top drawer has been opened and closed again
(``opened`` marks that it was seen open). After the check the cabinet looks
exactly as it did at the start, so without memory the plan cannot tell "done"
from "not yet begun": with the drawer shut it picks uniformly between opening
it and considering the task done (an open drawer always gets closed).
"""

from __future__ import annotations

import numpy as np

from memobench.experts.drawers import LEVELS, CloseDrawer, OpenDrawer, is_closed, is_open
from memobench.experts.expert import Memory, Plan
from memobench.experts.scene import Scene
from memobench.experts.skills import Skill

LEVEL = "top"


class DrawerCheckPlan(Plan):
    """What the drawer-check plans (T01, T02) remember: ``opened`` after a drawer was seen
    open, ``checked`` once the drawer ``level`` was closed again after that."""

    level: str

    def remember_cue(self, cue_states, scene: Scene, memory: Memory) -> None:
        memory["checked"] = False  # the episode starts: nothing checked yet (no cue in these tasks)

    def remember(self, finished: Skill, scene: Scene, memory: Memory) -> None:
        if isinstance(finished, OpenDrawer) and is_open(scene, finished.level):
            memory["opened"] = True
        elif isinstance(finished, CloseDrawer) and is_closed(scene, finished.level):
            was_opened = memory.pop("opened", False)
            if was_opened and finished.level == self.level and "checked" in memory:
                memory["checked"] = True

    def check_done(self, memory: Memory, rng: np.random.Generator) -> bool:
        """Whether the check is done: from memory, or a uniform guess when there is none
        (a shut cabinet looks the same before and after the check)."""
        checked = memory.get("checked")
        return self.choose([False, True], rng) if checked is None else checked


class CheckTopDrawerPlan(DrawerCheckPlan):
    task_id = "T01-check-top-drawer"
    level = LEVEL

    def next_skill(self, scene: Scene, memory: Memory, rng: np.random.Generator) -> Skill | None:
        ajar = [level for level in LEVELS if not is_closed(scene, level)]
        if ajar:  # a drawer stands open (the scene shows it): close it
            return CloseDrawer(ajar[0])
        return None if self.check_done(memory, rng) else OpenDrawer(LEVEL)
