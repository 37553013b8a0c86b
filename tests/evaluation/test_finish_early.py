"""Ending a finished policy's episode early (``Protocol.end_when_finished``): the outcome it would
have at the horizon, success included, in less time."""

from __future__ import annotations

import pytest

from memobench.core.expr import parse
from memobench.core.spec import MemoryOp
from memobench.core.suite import Suite
from memobench.core.tracker import CheckpointTracker, TrackedCheckpoint, TrackedViolation
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


class FakeView:
    """A StateView over a dict {(predicate, *args): value}; bools default False."""

    def __init__(self, facts: dict | None = None) -> None:
        self.facts = dict(facts or {})

    def query(self, name: str, args: tuple[str, ...]) -> bool | float:
        return self.facts.get((name, *args), 0.0 if name == "opening" else False)


def drawer_tracker(post_goal_steps: int = 10, rule: str = "opening(top) > 0.03") -> CheckpointTracker:
    """T01's shape: open the top drawer, then close it; reopening it after the check is a violation."""
    checkpoints = [
        TrackedCheckpoint(parse("was_open(top)"), MemoryOp.STORAGE),
        TrackedCheckpoint(parse("closed_after_open(top)"), MemoryOp.UPDATE),
    ]
    violations = [TrackedViolation("reopened", parse(rule), after=1)]
    return CheckpointTracker(checkpoints, violations=violations, post_goal_steps=post_goal_steps)


def step_through(tracker: CheckpointTracker, facts: list[dict], start: int = 0) -> FakeView:
    view = FakeView(facts[0])
    if start == 0:
        tracker.reset(view)
    for i, f in enumerate(facts):
        view.facts = f
        tracker.update(view, start + i)
    return view


OPEN, SHUT = {("open", "top"): True, ("opening", "top"): 0.2}, {("closed", "top"): True}


def test_settles_after_still_steps_with_nothing_changing() -> None:
    tracker = drawer_tracker()
    step_through(tracker, [SHUT])
    stillness = Stillness(tracker)
    assert stillness.needed == STILL_STEPS  # no held() window longer than it
    assert [stillness.settled(0.0) for _ in range(STILL_STEPS + 1)] == [False] * STILL_STEPS + [True]


def test_motion_or_a_tracker_change_restarts_the_count() -> None:
    tracker = drawer_tracker()
    step_through(tracker, [SHUT])
    stillness = Stillness(tracker)
    for _ in range(STILL_STEPS):
        stillness.settled(0.0)
    assert not stillness.settled(STILL_SPEED * 2)  # something moved
    for _ in range(STILL_STEPS - 1):
        assert not stillness.settled(0.0)
    step_through(tracker, [OPEN], start=1)  # a checkpoint completed
    assert not stillness.settled(0.0)
    assert [stillness.settled(0.0) for _ in range(STILL_STEPS)][-1]


def test_a_held_window_longer_than_the_still_steps_is_waited_out() -> None:
    stillness = Stillness(drawer_tracker(rule=f"held(opening(top) > 0.01, {STILL_STEPS + 7})"))
    assert stillness.needed == STILL_STEPS + 8


def test_complete_and_unbroken_it_ends_as_the_success_it_would_be_at_the_horizon() -> None:
    # The goal at step 2, a post-goal window of 10: at step 5 the episode cannot be a success
    # yet, but nothing can change any more, so at the horizon (100 steps) it is one.
    tracker = drawer_tracker(post_goal_steps=10)
    step_through(tracker, [SHUT, OPEN, SHUT, SHUT, SHUT, SHUT])
    assert tracker.required_done and not tracker.finished
    assert Stillness(tracker).end(horizon=100) == "success"
    assert tracker.finished and tracker.stages_complete


def test_a_goal_too_late_for_its_window_or_an_incomplete_task_ends_unsuccessful() -> None:
    late = drawer_tracker(post_goal_steps=10)
    step_through(late, [SHUT, OPEN, SHUT])  # goal at step 2; the window would end at step 12
    assert Stillness(late).end(horizon=12) == POLICY_FINISHED and not late.finished
    incomplete = drawer_tracker()
    step_through(incomplete, [SHUT, OPEN])
    assert Stillness(incomplete).end(horizon=100) == POLICY_FINISHED and not incomplete.finished


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


@pytest.mark.sim
def test_a_finished_expert_ends_early_with_the_success_it_would_have_at_the_horizon() -> None:
    from memobench.experts.policy import ExpertPolicy
    from memobench.sim.env import SimEnv

    task = Suite.load().get("T01-check-top-drawer")
    plan = plan_episode(task, 0, 7)
    env = SimEnv(task.bddl(plan.binding))
    try:

        def run(early: bool):
            protocol = Protocol(horizon=600, adapter_timeout=0, end_when_finished=early)
            return run_episode(task, plan, env, AdapterGuard(ExpertPolicy(), timeout=None), protocol).record

        early, full = run(True), run(False)
    finally:
        env.close()
    assert (early.end_reason, full.end_reason) == ("success", "success") and early.success and full.success
    assert full.steps == 600 and early.steps < full.steps
    assert early.checkpoints == full.checkpoints and early.stages_complete and early.violation is None
    # It ended once the plan was done and the scene still: before the post-goal window had run
    # (from the goal: T01's end gate, the arm home after the drawer was shut).
    goal = early.gates[-1]
    assert goal > early.checkpoints[-1].step and early.steps < goal + task.spec.monitor_steps
