"""The plan runner: one skill at a time, decisions from the scene and an explicit memory.

A :class:`Plan` (one per task) answers two questions: what did I just learn
(:meth:`Plan.remember`, after every skill and from the cue), and what do I do
next (:meth:`Plan.next_skill`). Everything a plan needs to remember goes in
the :class:`Memory`; a plan keeps no other state between decisions.

The memoryless expert is the same runner with ``memoryless=True``: its memory
is cleared before every decision, so each decision sees only the current
scene. Where the scene does not settle a choice, the plan draws uniformly
from the choices consistent with it (:meth:`Plan.choose`), from the episode's
generator, so the memoryless expert scores what guessing scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from memobench.experts.control import OPEN, hold_action
from memobench.experts.scene import Scene
from memobench.experts.skills import Skill


class Memory(dict):
    """What the expert remembers within an episode (a plain dict, cleared between episodes)."""


class Plan:
    """How an expert solves one task; subclasses implement :meth:`next_skill`."""

    task_id: str = ""

    def remember_cue(self, cue_states: Sequence[np.ndarray], scene: Scene, memory: Memory) -> None:
        """Store what the cue showed (hand positions of the cue video) before the first decision."""

    def remember(self, finished: Skill, scene: Scene, memory: Memory) -> None:
        """Store what the skill that just finished changed or revealed."""

    def next_skill(self, scene: Scene, memory: Memory, rng: np.random.Generator) -> Skill | None:
        """The next skill, or None when the plan considers the task done."""
        raise NotImplementedError

    @staticmethod
    def choose(options: Sequence[Any], rng: np.random.Generator) -> Any:
        """Uniform pick among ``options`` (the choices consistent with what is known)."""
        return options[int(rng.integers(len(options)))]


class Expert:
    """Runs a plan step by step; copied whole (``copy.deepcopy``) to roll back a look-ahead."""

    def __init__(self, plan: Plan, rng: np.random.Generator, *, memoryless: bool = False):
        self.plan, self.rng, self.memoryless = plan, rng, memoryless
        self.memory = Memory()
        self.skill: Skill | None = None
        self.done = False
        self.decisions = 0

    def start(self, scene: Scene, cue_states: Sequence[np.ndarray]) -> None:
        self.plan.remember_cue(cue_states, scene, self.memory)

    def act(self, scene: Scene) -> np.ndarray:
        """The action for this step."""
        for _ in range(8):  # a few instant transitions (skills finishing at once) per step
            if self.skill is None:
                if self.done:
                    break
                if self.memoryless:
                    self.memory.clear()
                self.skill = self.plan.next_skill(scene, self.memory, self.rng)
                self.decisions += 1
                if self.skill is None:
                    self.done = True
                    break
            action = self.skill.act(scene)
            if action is not None:
                return action
            self.plan.remember(self.skill, scene, self.memory)
            self.skill = None
        return hold_action(OPEN)
