"""The shared mark of the adapter call a worker is in, read by its parent (no simulator)."""

from __future__ import annotations

import multiprocessing
import os
import threading

import numpy as np
import pytest

from memobench.evaluation.policy_phase import CALLS, PolicyPhase
from memobench.policies.adapter import AdapterGuard

SPAWN = multiprocessing.get_context("spawn")


def test_no_call_in_flight_reads_none_and_a_call_names_itself() -> None:
    phase = PolicyPhase(SPAWN)
    assert phase.policy_call() is None
    with phase.call("infer_actions()"):
        assert phase.policy_call() == "infer_actions()"
    assert phase.policy_call() is None


def test_a_call_left_by_an_exception_is_unmarked() -> None:
    phase = PolicyPhase(SPAWN)
    with pytest.raises(RuntimeError), phase.call("observe()"):
        raise RuntimeError
    assert phase.policy_call() is None


def test_an_abandoned_call_still_counts_while_a_later_one_ends() -> None:
    # a call cut off by --adapter-timeout keeps running in its thread: it is still policy code
    phase, release, entered = PolicyPhase(SPAWN), threading.Event(), threading.Event()

    def hung() -> None:
        with phase.call("infer_actions()"):
            entered.set()
            release.wait(10)

    thread = threading.Thread(target=hung)
    thread.start()
    entered.wait(10)
    with phase.call("reset()"):
        pass
    assert phase.policy_call() == "reset()"  # the last call begun, while one is in flight
    release.set()
    thread.join()
    assert phase.policy_call() is None


def test_unknown_call_names_are_refused() -> None:
    with pytest.raises(ValueError), PolicyPhase(SPAWN).call("teleport()"):
        pass
    assert "infer_actions()" in CALLS


def _die_inside(phase: PolicyPhase) -> None:
    with phase.call("infer_actions()"):
        os._exit(3)  # as a policy ending its process would


def test_the_parent_reads_the_call_a_dead_child_was_in() -> None:
    phase = PolicyPhase(SPAWN)
    child = SPAWN.Process(target=_die_inside, args=(phase,))
    child.start()
    child.join(60)
    assert child.exitcode == 3
    assert phase.policy_call() == "infer_actions()"


class EveryHook:
    """An adapter with every optional hook the guard may call."""

    def reset(self):
        pass

    def begin_episode(self, rng):
        pass

    def infer_actions(self, obs, prompt, resize_size):
        return np.zeros((1, 7))

    def observe(self, obs):
        pass

    def finished(self):
        return False

    def close(self):
        pass


@pytest.mark.parametrize("timeout", [None, 30.0])
def test_every_call_the_guard_makes_has_a_mark(timeout) -> None:
    # finished() once had none: every worker episode that could end early became an adapter_error
    phase = PolicyPhase(SPAWN)
    guard = AdapterGuard(EveryHook(), timeout=timeout, mark=phase.call)
    guard.reset()
    guard.begin_episode(np.random.default_rng(0))
    guard.observe({})
    guard.infer({}, "prompt", 8)
    assert guard.finished() is False
    guard.close()
    assert phase.policy_call() is None
