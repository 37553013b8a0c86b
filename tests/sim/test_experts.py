"""The scripted experts on the real simulator, through the real harness.

For every pilot task: an expert episode succeeds, and run again at another replan
interval it gives the same actions and checkpoint steps (the same seed gives the same
episode, and its chunks come from an exact forward model). The other tasks with a
plan get one episode each in the test_expert_episodes_* files. Camera-free.
"""

from __future__ import annotations

import numpy as np
import pytest
from tests.sim.expert_episodes import PILOTS

from memobench.evaluation.episode import run_episode
from memobench.evaluation.protocol import Protocol, plan_episode
from memobench.experts.policy import ArmRegisterPolicy, ExpertPolicy, SceneTallyPolicy
from memobench.policies.adapter import AdapterGuard
from memobench.sim.env import SimEnv

pytestmark = pytest.mark.sim


class Recording:
    """Wraps a policy and keeps every chunk it returned in the rollout (executed or not; not the cue query's)."""

    def __init__(self, policy):
        self.policy, self.chunks = policy, []
        for attr in ("needs_images", "privileged", "wants_gate", "observe", "begin_episode", "finished", "close"):
            if hasattr(policy, attr):
                setattr(self, attr, getattr(policy, attr))

    def reset(self):
        self.policy.reset()

    def infer_actions(self, obs, prompt, resize_size):
        chunk = self.policy.infer_actions(obs, prompt, resize_size)
        if not obs.get("cue"):  # the cue query's chunk is discarded
            self.chunks.append((obs["privileged/step"], np.array(chunk)))
        return chunk


def executed(chunks, replan):
    """The actions the harness executed: the first ``replan`` of each chunk, in order."""
    return np.concatenate([c[:replan] for _, c in chunks])


@pytest.fixture(scope="module")
def envs(suite):
    built = {}

    def get(task, plan):
        key = (task.id, plan.variant)
        if key not in built:
            built[key] = SimEnv(task.bddl(plan.binding))
        return built[key]

    yield get
    for env in built.values():
        env.close()


def run_expert(suite, envs, task_id, episode, replan, policy=None):
    task = suite.get(task_id)
    plan = plan_episode(task, episode, 7)
    own = policy is None
    policy = policy or ExpertPolicy()
    recorder = Recording(policy)
    try:
        outcome = run_episode(
            task,
            plan,
            envs(task, plan),
            AdapterGuard(recorder, timeout=None),
            Protocol(replan_steps=replan, adapter_timeout=0, end_when_finished=True),  # not to the horizon
        )
    finally:
        if own:  # its forward model holds an env (~0.8 GB): do not leave it to the GC
            policy.close()
    return outcome.record, recorder.chunks


def run_episodes(suite, envs, policy, *episodes):
    """The records of ``policy`` on each (task id, episode) in turn, at replan interval 5; the
    policy closed after them."""
    records = []
    try:
        for task_id, episode in episodes:
            policy.reset()
            records.append(run_expert(suite, envs, task_id, episode, 5, policy)[0])
    finally:
        policy.close()
    return records


@pytest.mark.parametrize("task_id", PILOTS)
def test_expert_succeeds_and_acts_the_same_at_every_replan_interval(suite, envs, task_id):
    """The same episode at replan 5 and at 50: both succeed, with the same checkpoint steps and the
    same executed actions. It is the determinism check too: an expert that depended on anything but
    the seed (the interval, the run) would differ between the two."""
    short, chunks_short = run_expert(suite, envs, task_id, 0, 5)
    long, chunks_long = run_expert(suite, envs, task_id, 0, 50)
    assert short.success and long.success, (short.end_reason, long.end_reason)
    assert [c.step for c in long.checkpoints] == [c.step for c in short.checkpoints]
    n = min(len(executed(chunks_short, 5)), len(executed(chunks_long, 50)), short.steps)
    np.testing.assert_array_equal(executed(chunks_long, 50)[:n], executed(chunks_short, 5)[:n])


def test_an_expert_that_pours_three_times_fails(suite, envs):
    """Its third pour comes after the bottle was stood back and the arm went home, long after the
    extra-pour monitor's 30 steps: the third-pour rule fails it (the monitor: test_pilot_tasks)."""
    from memobench.experts.plans.t09 import PourTwicePlan

    over_pourer = ExpertPolicy(plan_factory=lambda task_id: PourTwicePlan(pours=3))
    record, _ = run_expert(suite, envs, "T09-pour-twice-bowl", 0, 5, policy=over_pourer)
    assert not record.success
    assert (record.end_reason, record.failure_class) == ("violation", "over_execution")
    assert record.violation.name == "third-pour"
    assert record.pour_counts == {"tomato_sauce_1->akita_black_bowl_1": 3}
    assert all(c.completed for c in record.checkpoints[:2])


def test_the_expert_pours_exactly_twice(suite, envs):
    record, _ = run_expert(suite, envs, "T09-pour-twice-bowl", 2, 5)
    assert record.success and record.end_reason == "success"
    assert record.pour_counts == {"tomato_sauce_1->akita_black_bowl_1": 2}
    # Full pours (POUR_TILT, 0.6 rad), far past the counter's 0.15: a count of them is no wobble.
    (tilts,) = record.pour_tilts.values()
    assert len(tilts) == 2 and all(t > 0.5 for t in tilts), tilts


def test_adversary_arm_forgets_at_every_home_gate(suite, envs):
    """T09's gates after each pour send the adversary home with the bottle back in its place, where
    its count is wiped: it starts counting again and pours a third time (the count rode in the
    hand that held the bottle between pours before the gates). S01's gate after the hiding does
    the same to where the butter went: episode 1 (butter in the bottom drawer) opens the wrong
    drawer, as the memoryless expert's guess would."""
    t09, s01 = run_episodes(
        suite, envs, ArmRegisterPolicy(), ("T09-pour-twice-bowl", 0), ("S01-hide-and-retrieve-butter", 1)
    )
    assert None not in t09.gates and t09.violation.name == "third-pour" and t09.violation.step > t09.gates[1]
    assert s01.gates[0] is not None and not s01.success
    assert s01.violation.name == "wrong-drawer-opened" and s01.violation.step > s01.gates[0]


def test_adversary_scene_is_caught_by_the_register_rules(suite, envs):
    """adversary-scene keeps what it learnt by shoving an object off its place; the register rules
    end the episode at the shove. T07: the pan the task moves only after the stove was turned off
    (``moved-early``); P05: a plate (flat: the push runs low enough not to ride over its rim)."""
    t07, p05 = run_episodes(
        suite, envs, SceneTallyPolicy(), ("T07-stove-on-off-pan-on-stove", 0), ("P05-buffered-swap", 0)
    )
    assert t07.violation.name == "moved-early:chefmate_8_frypan_1" and not t07.success
    assert p05.violation.name.startswith("disturbed:plate_") and not p05.success
