"""The scripted experts on the real simulator, through the real harness.

For every pilot task with a plan: an expert episode succeeds, the same seed
gives the same actions and checkpoint steps, and the replan interval does not
change what the expert does (its chunks come from an exact forward model).
Camera-free; one episode per case to keep the suite fast.
"""

from __future__ import annotations

import numpy as np
import pytest

from memobench.evaluation.episode import run_episode
from memobench.evaluation.ledger import LEDGER_FILENAME, read_ledger
from memobench.evaluation.protocol import Protocol, plan_episode
from memobench.evaluation.run_request import RunRequest
from memobench.evaluation.runner import evaluate
from memobench.experts.plans import plans
from memobench.experts.policy import ExpertPolicy
from memobench.policies.adapter import AdapterGuard
from memobench.policies.loader import build_adapter, builtin_spec
from memobench.sim.env import SimEnv

pytestmark = pytest.mark.sim

# Determinism and replan invariance are checked on the pilots (four episodes each);
# every other task with a plan gets one expert episode, to keep CI short.
PILOTS = [
    "O01-cued-milk",
    "P04-stack-in-order",
    "S01-hide-and-retrieve-butter",
    "T03-check-all-drawers",
    "T09-pour-twice-bowl",
]
# The arena's 26 plans share six modules; one episode of a task per module and grasp (each
# arena plan's decisions are tested without a simulator in tests/experts/test_arena_*.py),
# to keep `make test` short: arena episodes run 500-1,200 steps.
ARENA_SAMPLE = [
    "A01-cookies-tomato-basket",  # basket_sequence
    "A06-pour-tomato-sauce-into-bowl-drainer",  # arena_pour, grasped from above
    "A10-pour-wine-bottle-into-mug",  # arena_pour, held from the side
    "A12-cookies-chocolate-middle-drawer",  # arena_drawers
    "A19-tomato-milk-orange-cabinet",  # cabinet_transfer (the jar and the cartons upright; A18's packs lie as A25's)
    "A20-cookies-chocolate-microwave",  # arena_microwave
    "A22-pour-tomato-cookies-microwave",  # a22: pours, set aside, then the microwave
    "A25-butter-cream",  # plate_transfer
]
OTHER_TASKS_WITH_PLANS = sorted(
    {t for t in plans() if not t.startswith("A")} - set(PILOTS) | set(ARENA_SAMPLE) & set(plans())
)


class Recording:
    """Wraps a policy and keeps every executed-or-not chunk it returned."""

    def __init__(self, policy):
        self.policy, self.chunks = policy, []
        for attr in ("needs_images", "privileged", "observe", "begin_episode", "close"):
            if hasattr(policy, attr):
                setattr(self, attr, getattr(policy, attr))

    def reset(self):
        self.policy.reset()

    def infer_actions(self, obs, prompt, resize_size):
        chunk = self.policy.infer_actions(obs, prompt, resize_size)
        self.chunks.append((obs["step"], np.array(chunk)))
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
            Protocol(replan_steps=replan, adapter_timeout=0),
        )
    finally:
        if own:  # its forward model holds an env (~0.8 GB): do not leave it to the GC
            policy.close()
    return outcome.record, recorder.chunks


@pytest.mark.parametrize("task_id", PILOTS)
def test_expert_succeeds_and_is_deterministic(suite, envs, task_id):
    first, chunks_a = run_expert(suite, envs, task_id, 0, 5)
    again, chunks_b = run_expert(suite, envs, task_id, 0, 5)
    assert first.success, (first.end_reason, first.checkpoints)
    assert [c.step for c in again.checkpoints] == [c.step for c in first.checkpoints]
    np.testing.assert_array_equal(executed(chunks_b, 5), executed(chunks_a, 5))


@pytest.mark.parametrize("task_id", PILOTS)
def test_replan_interval_does_not_change_the_expert(suite, envs, task_id):
    short, chunks_short = run_expert(suite, envs, task_id, 1, 5)
    long, chunks_long = run_expert(suite, envs, task_id, 1, 50)
    assert short.success and long.success
    assert [c.step for c in long.checkpoints] == [c.step for c in short.checkpoints]
    n = min(len(executed(chunks_short, 5)), len(executed(chunks_long, 50)), short.steps)
    np.testing.assert_array_equal(executed(chunks_long, 50)[:n], executed(chunks_short, 5)[:n])


@pytest.mark.parametrize("task_id", OTHER_TASKS_WITH_PLANS)
def test_expert_solves_an_episode(suite, task_id, tmp_path):
    # Through the harness, in a worker process: a built env keeps ~0.2 GB after it is closed,
    # and ~50 tasks' envs in this test process reached 9.7 GB (killed for memory in CI); a
    # worker's memory goes back to the system when it exits, after each task.
    request = RunRequest(
        tasks=[suite.get(task_id)],
        num_trials_per_task=1,
        protocol=Protocol(replan_steps=50, adapter_timeout=0),
        out_root=tmp_path,
        policy={"name": "expert"},
        workers=1,
    )
    evaluate(request, build_adapter(builtin_spec("expert")))
    [record] = read_ledger(tmp_path / LEDGER_FILENAME)
    assert record.status == "ok" and record.success, (record.end_reason, record.error, record.checkpoints)


def test_an_expert_that_pours_three_times_fails_with_extra_pour(suite, envs):
    from memobench.experts.plans.t09 import PourTwicePlan

    over_pourer = ExpertPolicy(plan_factory=lambda task_id: PourTwicePlan(pours=3))
    record, _ = run_expert(suite, envs, "T09-pour-twice-bowl", 0, 5, policy=over_pourer)
    assert not record.success
    assert (record.end_reason, record.failure_class) == ("extra_pour", "over_execution")
    assert record.pour_counts == {"tomato_sauce_1->akita_black_bowl_1": 3}
    assert all(c.completed for c in record.checkpoints[:2])


def test_the_expert_pours_exactly_twice(suite, envs):
    record, _ = run_expert(suite, envs, "T09-pour-twice-bowl", 2, 5)
    assert record.success and record.end_reason == "success"
    assert record.pour_counts == {"tomato_sauce_1->akita_black_bowl_1": 2}
