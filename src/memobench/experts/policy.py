"""The built-in scripted policies (adapter contract): ``expert``, its three baselines
``expert-memoryless``, ``expert-reactive`` and ``expert-slow``, and the adversaries
``adversary-slow``, ``adversary-arm``, ``adversary-state`` and ``adversary-scene``
(:class:`~memobench.experts.expert.Mode`).

They are privileged (``privileged = True``): the harness adds to each query
``privileged/task`` (the :class:`~memobench.core.suite.Task`),
``privileged/snapshot`` (the env's exact state) and ``privileged/step`` (the
policy step: how many actions ran since the last query); ``adversary-arm``, which
says ``wants_gate``, also ``privileged/gate`` (a home gate is next). Nothing else
changes: they return 50-action chunks and the harness executes the first ``k``.
The cue query (``cue`` True; its chunk is discarded) is answered with a still
chunk and changes nothing: the plan starts at the first executed query, having
read the cue from the states ``observe`` was given.

How a chunk is made: the state is copied into the policy's forward model
(:mod:`memobench.experts.model`), the plan runs closed-loop there, and its
actions are returned. The plan's own state (current skill, memory, random
generator) is saved at every look-ahead step; at the next query the policy
sees how many steps were executed and resumes from the saved state at that
step, so the expert behaves identically under every replan interval.
Only as many actions as were executed last time are planned ahead (the whole
chunk on the first query), and the model simulates all but the last of them (the
next query syncs it to the real state anyway; at replan interval 1 it simulates
nothing); the rest of the chunk holds still, and would only run if the interval
changed mid-episode, after which the next query corrects.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from memobench.experts.control import OPEN, hold_action
from memobench.experts.expert import Expert, Mode, Plan
from memobench.experts.model import ForwardModel
from memobench.experts.plans import plan_for
from memobench.experts.state_table import Shared

CHUNK = 50


class ExpertPolicy:
    """The scripted expert, with memory."""

    needs_images = False
    privileged = True
    mode = Mode.EXPERT

    def __init__(self, chunk: int = CHUNK, plan_factory: Callable[[str], Plan] = plan_for):
        self.chunk = int(chunk)
        self.plan_factory = plan_factory  # task id -> plan (tests swap in variants)
        self._models: dict[str, ForwardModel] = {}
        self._rng = np.random.default_rng(0)
        self.reset()

    def reset(self) -> None:
        self._expert: Expert | None = None
        self._finished = False  # the plan was done at the last query's step
        self._cue: list[np.ndarray] = []
        self._saved: list[Expert] = []
        self._last_step: int | None = None
        self._lookahead = self.chunk

    def begin_episode(self, rng: np.random.Generator) -> None:
        self._rng = rng

    def observe(self, obs: dict[str, Any]) -> None:
        if obs.get("cue"):
            self._cue.append(np.asarray(obs["observation/state"], dtype=float))

    def prepare(self, task) -> None:
        """Build ``task``'s forward model now (the first query of its episode would): a timing
        that should not include the build calls this first."""
        self._model(task)

    def _model(self, task) -> ForwardModel:
        # One model at a time: an env holds ~0.8 GB, and the harness runs a task's
        # episodes together, so a suite of 30 tasks must not keep 30 models.
        if task.id not in self._models:
            self.close()
            self._models[task.id] = ForwardModel(task)
        return self._models[task.id]

    def infer_actions(self, obs: dict[str, Any], prompt: str, resize_size: int) -> np.ndarray:
        if obs.get("cue"):  # the cue query: its chunk is discarded, the plan starts at the next query
            return np.array([hold_action(OPEN)] * self.chunk)
        task, step = obs["privileged/task"], int(obs["privileged/step"])
        model = self._model(task)
        model.sync(obs["privileged/snapshot"])
        if self._expert is None:
            self._expert = self._new_expert(task)
            self._expert.start(model.scene, self._cue)
        else:
            executed = step - self._last_step
            if 0 < executed <= len(self._saved):
                self._expert = self._saved[executed - 1]
                self._lookahead = executed
            else:  # ran past the look-ahead (interval changed): continue from its end
                self._expert = self._saved[-1]
                self._lookahead = self.chunk
        self._last_step = step
        self._expert.gate_pending = bool(obs.get("privileged/gate", False))
        self._finished = self._expert.done
        return self._plan_chunk(model)

    def _new_expert(self, task) -> Expert:
        return Expert(self.plan_factory(task.id), self._rng, self.mode)

    def finished(self) -> bool:
        """True once the plan considered the task done by the last query's step: every
        action from then on holds still (the harness may end the episode early)."""
        return self._finished

    def _plan_chunk(self, model: ForwardModel) -> np.ndarray:
        """Plan the next chunk in the model; ``_saved[i - 1]`` is the expert after the chunk's first ``i``
        actions, which the next query resumes from once ``i`` of them were executed.

        A query follows at least one executed step, so the state before the first action is never
        resumed from, and the state after the last planned one is the expert itself (nothing
        changes it before the next query): an expert is copied only before it acts again, at the
        replan interval k once per action but the last (none at k = 1, as in perturbed collection).
        """
        expert = self._expert
        saved: list[Expert] = []
        actions = []
        for _ in range(min(self._lookahead, self.chunk)):
            if expert.done:  # nothing left to do: hold still without simulating ahead
                break
            if actions:  # the model advances only to plan another action from (the next query re-syncs it)
                saved.append(copy.deepcopy(expert))  # after the actions so far, before the next one
                model.step(actions[-1])
            action = expert.act(model.scene)
            actions.append(action)
        saved.append(expert)
        self._saved = saved
        grip = actions[-1][6] if actions else OPEN
        actions += [hold_action(grip)] * (self.chunk - len(actions))
        return np.array(actions)

    def close(self) -> None:
        for model in self._models.values():
            model.close()
        self._models.clear()


class MemorylessExpertPolicy(ExpertPolicy):
    """The same skills and plans, with the memory cleared before every decision."""

    mode = Mode.MEMORYLESS


class ReactiveExpertPolicy(ExpertPolicy):
    """Memoryless and deterministic: acts on what the current scene invites."""

    mode = Mode.REACTIVE


class SlowExpertPolicy(ExpertPolicy):
    """The expert with its full memory, taking up to twice its steps: after each skill that leaves
    its hand empty it holds still as long as the skill took (:data:`~memobench.experts.expert.SLOW_FACTOR`)."""

    mode = Mode.SLOW


class CrawlingReactivePolicy(ExpertPolicy):
    """``adversary-slow``: the reactive expert at about a quarter of its speed. A memoryless policy
    that redoes a finished step (reopens the checked drawer) only long after the goal: a rule
    watched for a window shorter than the episode would miss the redo."""

    mode = Mode.CRAWL


class ArmRegisterPolicy(ExpertPolicy):
    """``adversary-arm``: the expert whose memory survives only while the hand stays away from home
    (:attr:`~memobench.experts.expert.Mode.ARM`): a memoryless policy that stores its decision in
    the arm's pose. It goes home only when a home gate makes the episode wait for it."""

    mode = Mode.ARM
    wants_gate = True  # told when a home gate is next: the only time it goes home


class StateTablePolicy(ExpertPolicy):
    """``adversary-state``: memoryless, it decides with the expert's memory at the recorded decision
    whose state observation is nearest the current one (:mod:`~memobench.experts.state_table`).
    A task's table is built the first time the task is queried (the expert's episodes on
    layouts no evaluation uses), one task's at a time."""

    mode = Mode.STATE

    def __init__(
        self, chunk: int = CHUNK, plan_factory: Callable[[str], Plan] = plan_for, table_episodes: int | None = None
    ):
        from memobench.experts.state_table import TRAIN_EPISODES

        self.table_episodes = TRAIN_EPISODES if table_episodes is None else int(table_episodes)
        self._tables: dict[str, Shared] = {}
        super().__init__(chunk, plan_factory)

    def prepare(self, task) -> None:
        """Build ``task``'s forward model and decision table now (the first query would)."""
        super().prepare(task)
        self._table(task)

    def _table(self, task) -> Shared:
        from memobench.experts.state_table import build_table

        if task.id not in self._tables:
            self._tables.clear()
            self._tables[task.id] = Shared(build_table(task, self.plan_factory, self.table_episodes))
        return self._tables[task.id]

    def _new_expert(self, task) -> Expert:
        expert = super()._new_expert(task)
        expert.table = self._table(task)
        return expert


class SceneTallyPolicy(ExpertPolicy):
    """``adversary-scene``: the expert whose memory survives only while an object it shoved off its
    place stands there (:mod:`~memobench.experts.scene_tally`): a memoryless policy that keeps a
    tally in the scene."""

    mode = Mode.SCENE

    def __init__(self, chunk: int = CHUNK, plan_factory: Callable[[str], Plan] = plan_for):
        self._tallies: dict[str, Shared] = {}  # task id -> its register (the same every episode)
        super().__init__(chunk, plan_factory)

    def _new_expert(self, task) -> Expert:
        from memobench.experts.scene_tally import Tally

        if task.id not in self._tallies:
            self._tallies = {task.id: Shared(Tally(task, self._model(task).env.bddl))}
        expert = super()._new_expert(task)
        expert.tally = self._tallies[task.id]
        return expert
