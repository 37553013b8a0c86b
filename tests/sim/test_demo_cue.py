"""The ``demo`` cue on the real simulator: the expert performs the routine, then the scene is restored.

For one variant each of P01 and P04 (camera-free): during the cue the
routine's objects really move and every checkpoint of the task completes;
afterwards the simulator is bit-for-bit where it was (state and future);
and the task's plan reads the episode's binding back from the cue's robot
states, as recorded (every 4th step) and at every step.
"""

from __future__ import annotations

import numpy as np
import pytest

from memobench.core.bindings import all_bindings
from memobench.evaluation.episode import DemoPerformer, build_tracker
from memobench.evaluation.protocol import Protocol
from memobench.experts.expert import Memory
from memobench.experts.plans import plan_for
from memobench.experts.scene import Scene
from memobench.sim.cue import DEMO_MAX_STEPS, FRAME_EVERY, run_cue
from memobench.sim.env import SimEnv
from memobench.sim.world import WorldView

pytestmark = pytest.mark.sim

ACTIONS = np.random.default_rng(0).uniform(-1, 1, size=(20, 7))


class Watched:
    """Wraps a performer: tracks the task's checkpoints and how far each object got from its start."""

    def __init__(self, performer: DemoPerformer, env: SimEnv, tracker, world: WorldView):
        self.performer, self.env, self.tracker, self.world = performer, env, tracker, world
        self.start = {name: world.position(name) for name in env.libero.objects_dict}
        self.moved = dict.fromkeys(self.start, 0.0)
        self.calls = 0

    def __call__(self) -> np.ndarray | None:
        if self.calls:  # a call comes after each executed step but the first
            self.tracker.update(self.world, self.calls - 1)
        for name, start in self.start.items():
            self.moved[name] = max(self.moved[name], float(np.linalg.norm(self.world.position(name) - start)))
        self.calls += 1
        return self.performer()


def trajectory(env: SimEnv) -> np.ndarray:
    states = []
    for action in ACTIONS:
        env.step(action)
        states.append(env.physics_state())
    return np.array(states)


@pytest.mark.parametrize("task_id, variant", [("P01-assembly", 1), ("P04-stack-in-order", 3)])
def test_demo_cue_performs_the_routine_restores_the_scene_and_teaches_the_binding(suite, task_id, variant):
    task = suite.get(task_id)
    binding = all_bindings(task.spec)[variant]
    env = SimEnv(task.bddl(binding))
    try:
        env.reset(11)
        without_cue = trajectory(env)
        env.reset(11)
        before = env.physics_state()
        world = WorldView(env)
        world.set_reference()
        tracker = build_tracker(task, binding, Protocol())
        tracker.reset(world)
        performer = DemoPerformer(task, binding, env, np.random.default_rng(0), settle=10)
        watched = Watched(performer, env, tracker, world)
        rec = run_cue(env, world, task.spec.cue.kind, [], performer=watched, frame_every=1)

        # The expert performed the whole routine, objects and all.
        assert performer.expert.done and rec.steps < DEMO_MAX_STEPS
        assert all(step is not None for step in tracker.completed_steps), tracker.completed_steps
        assert sum(distance > 0.05 for distance in watched.moved.values()) >= 2, watched.moved
        # ... and left no trace: the same state, the same future.
        np.testing.assert_array_equal(before, env.physics_state())
        expected = Memory()
        plan_for(task_id).demonstrate_memory(binding, Scene(env), expected)
        for every in (1, FRAME_EVERY["demo"]):
            memory = Memory()
            plan_for(task_id).remember_cue(rec.states[::every], Scene(env), memory)
            assert memory == expected, every
        np.testing.assert_array_equal(without_cue, trajectory(env))
    finally:
        env.close()


def test_a_demo_cue_without_a_performer_or_an_unknown_kind_fails_before_acting():
    # Nothing is read from the env before the checks, so none is needed.
    with pytest.raises(ValueError, match="performer"):
        run_cue(None, None, "demo", [])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown cue kind"):
        run_cue(None, None, "wave", [])  # type: ignore[arg-type]
