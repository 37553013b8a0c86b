"""Ending a finished policy's episode early (``Protocol.end_when_finished``): same outcome, less time."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from memobench.core.suite import Suite
from memobench.evaluation.episode import (
    POLICY_FINISHED,
    STILL_SPEED,
    STILL_STEPS,
    Stillness,
    run_episode,
)
from memobench.evaluation.protocol import Protocol, plan_episode
from memobench.policies.adapter import AdapterGuard
from memobench.policies.builtin import NoopPolicy


@dataclass
class FakeTracker:
    completed_steps: list = field(default_factory=lambda: [None, None])
    violation: str | None = None
    required_done: bool = False


def test_settles_after_still_steps_with_nothing_changing() -> None:
    stillness, tracker = Stillness(), FakeTracker()
    assert [stillness.settled(0.0, tracker) for _ in range(STILL_STEPS + 1)] == [False] * STILL_STEPS + [True]


def test_motion_or_a_tracker_change_restarts_the_count() -> None:
    stillness, tracker = Stillness(), FakeTracker()
    for _ in range(STILL_STEPS):
        stillness.settled(0.0, tracker)
    assert not stillness.settled(STILL_SPEED * 2, tracker)  # something moved
    for _ in range(STILL_STEPS - 1):
        assert not stillness.settled(0.0, tracker)
    tracker.completed_steps = [40, None]  # a checkpoint completed
    assert not stillness.settled(0.0, tracker)
    assert [stillness.settled(0.0, tracker) for _ in range(STILL_STEPS)][-1]


def test_never_while_the_required_checkpoints_are_complete() -> None:
    stillness, tracker = Stillness(), FakeTracker(completed_steps=[3, 9], required_done=True)
    assert not any(stillness.settled(0.0, tracker) for _ in range(5 * STILL_STEPS))


class FinishedNoop(NoopPolicy):
    """Holds still and says so."""

    def finished(self) -> bool:
        return True


@pytest.mark.sim
def test_a_finished_policy_in_a_still_scene_ends_early_with_the_horizons_outcome() -> None:
    from memobench.sim.env import SimEnv

    task = Suite.load().get("T01-check-top-drawer")
    plan = plan_episode(task, 0, 7)
    env = SimEnv(task.bddl(plan.binding))
    try:

        def run(adapter, early: bool):
            protocol = Protocol(horizon=150, adapter_timeout=0, end_when_finished=early)
            return run_episode(task, plan, env, AdapterGuard(adapter, timeout=None), protocol).record

        early, full = run(FinishedNoop(), True), run(FinishedNoop(), False)
        unannounced = run(NoopPolicy(), True)  # no finished(): the flag changes nothing
    finally:
        env.close()
    assert (early.end_reason, full.end_reason, unannounced.end_reason) == (POLICY_FINISHED, "horizon", "horizon")
    assert STILL_STEPS <= early.steps < 100 and full.steps == unannounced.steps == 150
    assert not early.success and early.failure_class == full.failure_class
    assert early.checkpoints == full.checkpoints and early.violation == full.violation is None
