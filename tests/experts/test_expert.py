"""The plan runner and the chunking policy, with scripted plans and a fake forward model."""

from __future__ import annotations

import numpy as np
import pytest

from memobench.experts import policy as policy_module
from memobench.experts.expert import Expert, Plan
from memobench.experts.skills import Skill


class Count(Skill):
    """Emits ``n`` actions whose first component is the skill's label."""

    def __init__(self, label: float, n: int):
        super().__init__()
        self.label, self.n, self.name = label, n, str(label)

    def step(self, scene):
        if self.steps >= self.n:
            return self.finish(True)
        return np.array([self.label, self.steps, 0, 0, 0, 0, -1.0])


class Counting(Plan):
    """Remembers how many skills finished; stops after three. Guesses 10 or 20 when it forgot."""

    def remember_cue(self, cue_states, scene, memory):
        memory["done"] = 0

    def remember(self, finished, scene, memory):
        memory["done"] = memory.get("done", 0) + 1

    def next_skill(self, scene, memory, rng):
        if "done" not in memory and self.choose([True, False], rng):
            return Count(10 + 10 * int(rng.integers(2)), 3)
        if memory.get("done", 0) >= 3:
            return None
        return Count(memory.get("done", 0), 2)


def run(expert, steps):
    return np.array([expert.act(None) for _ in range(steps)])


def test_expert_runs_skills_in_turn_and_holds_when_done():
    expert = Expert(Counting(), np.random.default_rng(1))
    expert.start(None, [])
    actions = run(expert, 8)
    assert list(actions[:6, 0]) == [0, 0, 1, 1, 2, 2]
    assert expert.done and expert.decisions == 4
    np.testing.assert_array_equal(actions[6], [0, 0, 0, 0, 0, 0, -1.0])


def test_memoryless_expert_clears_memory_before_every_decision():
    expert = Expert(Counting(), np.random.default_rng(1), memoryless=True)
    actions = run(expert, 60)
    assert not expert.done  # it never remembers reaching three
    assert set(actions[:, 0]) <= {0.0, 10.0, 20.0}
    assert expert.memory == {} or expert.memory == {"done": 1}


def test_memoryless_guesses_come_from_the_episode_generator():
    a = run(Expert(Counting(), np.random.default_rng(5), memoryless=True), 40)
    b = run(Expert(Counting(), np.random.default_rng(5), memoryless=True), 40)
    c = run(Expert(Counting(), np.random.default_rng(6), memoryless=True), 40)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


class FakeModel:
    """Stands in for the simulator copy: the 'state' is the number of steps taken."""

    def __init__(self, task):
        self.scene, self.synced = None, []

    def sync(self, snapshot):
        self.synced.append(snapshot)

    def step(self, action):
        pass

    def close(self):
        pass


class Task:
    id = "fake"


@pytest.fixture
def fake_policy(monkeypatch):
    monkeypatch.setattr(policy_module, "ForwardModel", FakeModel)

    def make():
        p = policy_module.ExpertPolicy(chunk=4, plan_factory=lambda task_id: Counting())
        p.reset()
        return p

    return make


def query(policy, step):
    return policy.infer_actions({"privileged/task": Task(), "privileged/snapshot": step, "step": step}, "", 224)


@pytest.mark.parametrize("replan", [1, 2, 3, 4])
def test_policy_resumes_the_plan_where_the_harness_stopped_executing(fake_policy, replan):
    """Whatever the replan interval, the executed actions are the closed-loop sequence."""
    closed_loop = Expert(Counting(), np.random.default_rng(0))
    closed_loop.start(None, [])
    reference = run(closed_loop, 8)
    policy = fake_policy()
    policy.begin_episode(np.random.default_rng(0))
    executed, step = [], 0
    while step < 8:
        chunk = query(policy, step)
        assert chunk.shape == (4, 7)
        executed += list(chunk[:replan])
        step += replan
    np.testing.assert_array_equal(np.array(executed[:8]), reference)
