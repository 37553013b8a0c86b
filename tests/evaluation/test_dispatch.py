"""The dispatcher's fault handling and env-affinity, on a scripted in-memory backend (no simulator)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from memobench.evaluation.executors import WorkerLost, dispatch
from memobench.evaluation.protocol import EpisodePlan


def plan(task: str, episode: int, variant: int = 0) -> EpisodePlan:
    return EpisodePlan(task_id=task, episode=episode, seed=7 + episode, variant=variant, binding={}, layout_seed=0)


@dataclass
class Record:
    """Stands in for an EpisodeRecord: only what the dispatcher touches."""

    key: tuple[str, int]
    worker: int
    error: str | None = None
    attempts: int = 1
    retry_reasons: list[str] = field(default_factory=list)

    def model_copy(self, update):
        return Record(**{**self.__dict__, **update})


class ScriptedBackend:
    """Workers finish instantly unless the script says an execution dies or hangs.

    ``script[(task, episode)]`` lists the fate of successive executions: "die",
    "hang" (in the simulator), "die in policy", "hang in policy" (inside an
    adapter call) or "ok" (the default once the list runs out).
    """

    def __init__(self, script=None):
        self.script = {k: list(v) for k, v in (script or {}).items()}
        self.spawned = 0
        self.killed = 0
        self.log: list[tuple[int, tuple[str, int], int]] = []  # (worker, plan key, variant)
        self.shut = False

    def spawn(self):
        self.spawned += 1
        return FakeWorker(self, self.spawned)

    def wait(self, workers, timeout):
        ready = [w for w in workers if not w.fate.startswith("hang")]
        assert ready or timeout is not None, "would block forever"
        return ready

    def shutdown(self):
        self.shut = True


class FakeWorker:
    def __init__(self, backend, number):
        self.backend, self.number, self.last_affinity = backend, number, None
        self.fate, self.plan = None, None

    def submit(self, p):
        self.plan = p
        key = (p.task_id, p.episode)
        fates = self.backend.script.get(key, [])
        self.fate = fates.pop(0) if fates else "ok"
        self.backend.log.append((self.number, key, p.variant))

    def collect(self):
        if self.fate.startswith("die"):
            raise WorkerLost("worker process died (killed by SIGKILL)")
        return Record((self.plan.task_id, self.plan.episode), self.number)

    def policy_call(self):
        return "infer_actions()" if self.fate.endswith("in policy") else None

    def kill(self):
        self.backend.killed += 1


def failed(p, reason):
    return Record((p.task_id, p.episode), 0, error=reason)


def policy_failed(p, reason):
    return Record((p.task_id, p.episode), 0, error="policy: " + reason)


def run(plans, backend, workers=2, **kw):
    return list(dispatch(plans, backend, workers, failed_record=failed, policy_failed_record=policy_failed, **kw))


def test_every_plan_gives_one_record_and_workers_are_shut_down():
    backend = ScriptedBackend()
    plans = [plan("A", e) for e in range(5)]
    records = run(plans, backend)
    assert sorted(r.key for r in records) == [("A", e) for e in range(5)]
    assert all(r.attempts == 1 and r.retry_reasons == [] for r in records)
    assert backend.spawned == 2 and backend.shut


def test_a_dead_worker_is_replaced_and_its_episode_rerun_and_flagged():
    backend = ScriptedBackend({("A", 1): ["die"]})
    records = {r.key: r for r in run([plan("A", e) for e in range(3)], backend)}
    assert len(records) == 3
    assert records[("A", 1)].attempts == 2
    assert records[("A", 1)].retry_reasons == ["worker process died (killed by SIGKILL)"]
    assert records[("A", 1)].error is None
    assert backend.spawned == 3 and backend.killed >= 1


def test_an_episode_that_keeps_killing_workers_is_given_up_after_max_attempts():
    backend = ScriptedBackend({("A", 0): ["die", "die", "die", "die"]})
    records = {r.key: r for r in run([plan("A", e) for e in range(2)], backend, max_attempts=3)}
    bad = records[("A", 0)]
    assert bad.attempts == 3 and len(bad.retry_reasons) == 3
    assert bad.error.startswith("gave up after 3 attempts; last: worker process died")
    assert records[("A", 1)].attempts == 1
    executions = [key for _, key, _ in backend.log]
    assert executions.count(("A", 0)) == 3


def test_a_hung_episode_is_cut_off_at_the_timeout_and_rerun():
    backend = ScriptedBackend({("A", 0): ["hang"]})
    records = {r.key: r for r in run([plan("A", e) for e in range(2)], backend, episode_timeout=0.2)}
    assert records[("A", 0)].attempts == 2
    assert records[("A", 0)].retry_reasons == ["episode ran past --episode-timeout 0.2 s"]


def test_a_worker_lost_inside_the_policy_is_the_policys_failure_recorded_once():
    backend = ScriptedBackend({("A", 1): ["die in policy", "die in policy"]})
    records = {r.key: r for r in run([plan("A", e) for e in range(3)], backend)}
    assert len(records) == 3
    lost = records[("A", 1)]
    assert lost.error == (
        "policy: the policy was running infer_actions() when its worker was lost: "
        "worker process died (killed by SIGKILL)"
    )
    assert lost.attempts == 1 and lost.retry_reasons == []
    assert [key for _, key, _ in backend.log].count(("A", 1)) == 1  # not run again
    assert backend.spawned == 3  # the dead worker was replaced for the episodes left


def test_a_policy_still_running_at_the_episode_timeout_is_the_policys_failure():
    backend = ScriptedBackend({("A", 0): ["die", "hang in policy"]})
    records = {r.key: r for r in run([plan("A", e) for e in range(2)], backend, episode_timeout=0.2)}
    hung = records[("A", 0)]
    assert hung.error.startswith(
        "policy: the policy was running infer_actions() when its worker was lost: "
        "episode ran past --episode-timeout 0.2 s"
    )
    # an earlier loss in the simulator stays on the record
    assert hung.attempts == 2 and hung.retry_reasons == ["worker process died (killed by SIGKILL)"]


def test_a_free_worker_takes_the_next_episode_of_the_variant_it_has_built():
    backend = ScriptedBackend()
    plans = [plan("A", 0, 0), plan("A", 1, 1), plan("A", 2, 0), plan("A", 3, 1)]
    run(plans, backend, workers=2)
    by_worker: dict[int, list[int]] = {}
    for worker, _, variant in backend.log:
        by_worker.setdefault(worker, []).append(variant)
    # two workers, two variants: each worker keeps to one variant (one env build each)
    assert sorted(map(tuple, by_worker.values())) == [(0, 0), (1, 1)]


def test_closing_the_generator_early_kills_the_workers():
    backend = ScriptedBackend()
    gen = dispatch(
        [plan("A", e) for e in range(4)], backend, 2, failed_record=failed, policy_failed_record=policy_failed
    )
    next(gen)
    gen.close()
    assert backend.shut and backend.killed == 2


@pytest.mark.parametrize("workers", [1, 3])
def test_no_more_workers_than_episodes_are_started(workers):
    backend = ScriptedBackend()
    run([plan("A", 0)], backend, workers=workers)
    assert backend.spawned == 1


def test_a_worker_that_dies_past_the_timeout_is_handled_once():
    class DiesLate(ScriptedBackend):
        def wait(self, workers, timeout):
            import time

            time.sleep(0.05)  # the death is noticed after the timeout has passed
            return workers

    backend = DiesLate({("A", 0): ["die"]})
    records = run([plan("A", 0)], backend, workers=1, episode_timeout=0.01)
    assert [(r.attempts, r.retry_reasons) for r in records] == [(2, ["worker process died (killed by SIGKILL)"])]
