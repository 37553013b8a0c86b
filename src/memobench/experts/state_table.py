"""``adversary-state``'s decision table: the expert's memory at each of its decisions, found again
by the nearest state observation.

A memoryless policy in state mode sees one vector per step (robot state, every visible
object's pose, the fixture joints as :func:`~memobench.sim.scene_state.state_observation`
masks them). If any number in it depends on the episode's history (the arm back home a few
millimetres off its start pose, a bottle stood back a little off where it started), a policy
fit on the expert's data can read that history out of it. This table is the strongest such
policy we can script without training: the expert runs :data:`TRAIN_EPISODES` episodes of the
task on layouts no evaluation uses (seeds from :data:`TRAIN_SEED`; :func:`build_table`), and at
each of its decisions the table keeps the state vector and the expert's memory then. The adversary
decides with the memory of the nearest recorded vector (each number scaled by its spread
over the table): where the vector tells histories apart it recovers the expert's memory and
solves the task; where it does not, it gets another episode's memory, a guess.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from memobench.core.bindings import all_bindings
from memobench.experts.expert import Expert, Memory, Mode
from memobench.experts.scene import Scene
from memobench.sim.env import ARM_START_JITTER, NOOP_ACTION, SimEnv
from memobench.sim.scene_state import SceneLayout, state_observation

if TYPE_CHECKING:
    from memobench.core.suite import Task
    from memobench.experts.expert import Plan

TRAIN_SEED = 100_000  # layouts of the table's episodes; evaluation uses seeds 7 + episode (< 100,000)
TRAIN_EPISODES = 10
STABILIZATION_STEPS = 10  # the harness's no-ops before a policy's first action (MEMOBench's protocol)
SPREAD_FLOOR = 1e-9  # a number that never varies over the table cannot tell two decisions apart


def state_vector(scene: Scene, layout: SceneLayout) -> np.ndarray:
    """The state observation a policy would get now, flattened (float64)."""
    obs = state_observation(scene.env, scene.world, layout)
    return np.concatenate([np.asarray(obs[key], np.float64).ravel() for key in sorted(obs)])


class Shared:
    """A reference deep copies keep sharing: the expert is deep-copied at every look-ahead step,
    and the table (read-only once built) or the recorder must not be copied with it."""

    def __init__(self, value: Any):
        self.value = value

    def __deepcopy__(self, memo: dict) -> Shared:
        return self


class DecisionTable:
    """State vectors of the expert's decisions and its memory at each."""

    def __init__(self, layout: SceneLayout):
        self.layout = layout
        self._vectors: list[np.ndarray] = []
        self._memories: list[Memory] = []
        self._scaled: tuple[np.ndarray, np.ndarray] | None = None  # (vectors / spread, 1 / spread)

    def __len__(self) -> int:
        return len(self._vectors)

    def entries(self) -> list[tuple[np.ndarray, Memory]]:
        """(state vector, memory) of each recorded decision, in order (copies)."""
        return [(v.copy(), copy.deepcopy(m)) for v, m in zip(self._vectors, self._memories, strict=True)]

    def record(self, scene: Scene, memory: Memory) -> None:
        """Keep the state now and a copy of ``memory`` (a decision of the expert)."""
        self.add(state_vector(scene, self.layout), memory)

    def lookup(self, scene: Scene) -> Memory:
        """The memory recorded at the decision whose state is nearest the state now (:meth:`nearest`)."""
        return self.nearest(state_vector(scene, self.layout))

    def add(self, vector: np.ndarray, memory: Memory) -> None:
        self._vectors.append(np.asarray(vector, np.float64))
        self._memories.append(copy.deepcopy(memory))
        self._scaled = None

    def nearest(self, vector: np.ndarray) -> Memory:
        """A copy of the memory recorded with the vector nearest ``vector`` (Euclidean, each number
        divided by its standard deviation over the table; numbers that never vary are left out;
        the first recorded wins a tie). An empty table gives an empty memory."""
        if not self._vectors:
            return Memory()
        if self._scaled is None:
            vectors = np.stack(self._vectors)
            spread = vectors.std(axis=0)
            inverse = np.where(spread > SPREAD_FLOOR, 1.0 / np.maximum(spread, SPREAD_FLOOR), 0.0)
            self._scaled = (vectors * inverse, inverse)
        scaled, inverse = self._scaled
        distance = np.linalg.norm(scaled - np.asarray(vector, np.float64) * inverse, axis=1)
        return copy.deepcopy(self._memories[int(np.argmin(distance))])


def build_table(
    task: Task,
    plan_factory: Callable[[str], Plan],
    episodes: int = TRAIN_EPISODES,
    seed: int = TRAIN_SEED,
    stabilization_steps: int = STABILIZATION_STEPS,
) -> DecisionTable:
    """Run the expert ``episodes`` times on ``task`` (layouts ``seed``, ``seed`` + 1, ...; binding
    variants in turn), recording its decisions.

    The expert acts straight on the env, as the harness would have it act after the
    stabilisation no-ops, until its plan is done or the task's horizon; it is shown no cue
    (where a cue would tell it what to do it guesses, and its memory holds the guess, so
    the adversary gets another episode's guess: no cue reaches it either way)."""
    bindings = all_bindings(task.spec)
    envs: dict[int, SimEnv] = {}
    table: DecisionTable | None = None
    try:
        for episode in range(episodes):
            variant = episode % len(bindings)
            if variant not in envs:
                envs[variant] = SimEnv(task.bddl(bindings[variant]), render=False)
            env = envs[variant]
            env.reset(seed + episode, ARM_START_JITTER)  # MEMOBench's protocol's start
            for _ in range(stabilization_steps):
                env.step(NOOP_ACTION)
            scene = Scene(env)
            table = table or DecisionTable(SceneLayout.of(env))
            expert = Expert(plan_factory(task.id), np.random.default_rng(seed + episode), Mode.EXPERT)
            expert.recorder = Shared(table)
            expert.start(scene, [])
            for _ in range(task.spec.horizon):
                if expert.done:
                    break
                env.step(expert.act(scene))
    finally:
        for env in envs.values():
            env.close()
    assert table is not None  # episodes >= 1
    return table
