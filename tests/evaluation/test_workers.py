"""Worker processes give the in-process records: 1 or 2 local workers, Ray, and after faults.

Faults are real: an adapter SIGKILLs its worker process, or hangs it until
the episode timeout, on the first call of the run; that episode is run again
on a fresh worker and the ledger says so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memobench.core.suite import Suite
from memobench.evaluation.ledger import LEDGER_FILENAME, read_ledger
from memobench.evaluation.protocol import Protocol
from memobench.evaluation.run_request import RunRequest
from memobench.evaluation.runner import evaluate
from memobench.policies.loader import build_adapter, builtin_spec

pytestmark = pytest.mark.sim

FAULTY = str(Path(__file__).with_name("faulty_adapters.py"))


def records_by_episode(out: Path, keep_retries: bool = False) -> dict[tuple[str, int], dict]:
    out_records = {}
    for record in read_ledger(out / LEDGER_FILENAME):
        data = record.model_dump(mode="json")
        data.pop("timings")
        if not keep_retries:
            data.pop("attempts"), data.pop("retry_reasons")
        out_records[(record.task_id, record.episode)] = data
    return out_records


def run(out: Path, tasks, policy: dict, episodes: int = 3, **execution) -> None:
    request = RunRequest(
        tasks=tasks,
        num_trials_per_task=episodes,
        protocol=Protocol(horizon=40, adapter_timeout=0),
        out_root=out,
        policy=policy,
        **execution,
    )
    spec = policy.get("adapter_spec") or builtin_spec(policy["name"])
    evaluate(request, build_adapter(spec, policy.get("adapter_kwargs") or {}))


@pytest.fixture(scope="module")
def two_tasks():
    suite = Suite.load()
    return [suite.get("T03-check-all-drawers"), suite.get("O01-cued-milk")]


@pytest.fixture(scope="module")
def in_process(two_tasks, tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("w1")
    run(out, two_tasks, {"name": "expert", "adapter_kwargs": {}})
    return records_by_episode(out)


def test_one_worker_and_two_workers_write_the_same_records(two_tasks, in_process, tmp_path):
    run(tmp_path, two_tasks, {"name": "expert", "adapter_kwargs": {}}, workers=2)
    assert len(in_process) == 6 and records_by_episode(tmp_path) == in_process
    # the expert acted in every episode: 40 steps at replan 5 are 8 queries
    assert all(r["status"] == "ok" and r["policy_queries"] == 8 for r in in_process.values())


def test_ray_workers_write_the_same_records(two_tasks, in_process, tmp_path):
    pytest.importorskip("ray")
    run(tmp_path, two_tasks, {"name": "expert", "adapter_kwargs": {}}, workers=2, backend="ray")
    assert records_by_episode(tmp_path) == in_process


@pytest.fixture(scope="module")
def noop_reference(two_tasks, tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("noop")
    run(out, two_tasks[:1], {"name": "noop", "adapter_kwargs": {}})
    return records_by_episode(out)


def test_a_killed_worker_is_replaced_and_its_episode_rerun_once(two_tasks, noop_reference, tmp_path):
    policy = {"adapter_spec": f"{FAULTY}:dies_in_sim_once", "adapter_kwargs": {"marker": str(tmp_path / "died")}}
    run(tmp_path / "out", two_tasks[:1], policy, workers=2)
    records = records_by_episode(tmp_path / "out", keep_retries=True)
    retried = [r for r in records.values() if r["attempts"] > 1]
    assert len(read_ledger(tmp_path / "out" / LEDGER_FILENAME)) == 3  # each episode exactly once
    assert len(retried) == 1 and retried[0]["attempts"] == 2
    assert retried[0]["retry_reasons"] == ["worker process died (killed by SIGKILL)"]
    assert records_by_episode(tmp_path / "out") == noop_reference


def test_a_hung_worker_is_cut_off_at_the_episode_timeout(two_tasks, noop_reference, tmp_path):
    policy = {"adapter_spec": f"{FAULTY}:hangs_in_sim_once", "adapter_kwargs": {"marker": str(tmp_path / "hung")}}
    # one worker: the timeout alone isolates the episodes in a process
    run(tmp_path / "out", two_tasks[:1], policy, workers=1, episode_timeout=40)
    records = records_by_episode(tmp_path / "out", keep_retries=True)
    assert [r["retry_reasons"] for r in records.values() if r["attempts"] > 1] == [
        ["episode ran past --episode-timeout 40 s"]
    ]
    assert records_by_episode(tmp_path / "out") == noop_reference


@pytest.mark.parametrize("how, status", [("dies_once", "killed by SIGKILL"), ("exits_once", "exit status 3")])
def test_a_worker_the_policy_kills_is_its_adapter_error_recorded_once(two_tasks, noop_reference, tmp_path, how, status):
    policy = {"adapter_spec": f"{FAULTY}:{how}", "adapter_kwargs": {"marker": str(tmp_path / "died")}}
    run(tmp_path / "out", two_tasks[:1], policy, workers=2)
    records = records_by_episode(tmp_path / "out", keep_retries=True)
    assert len(read_ledger(tmp_path / "out" / LEDGER_FILENAME)) == 3
    (lost,) = [r for r in records.values() if r["status"] != "ok"]
    assert lost["status"] == "adapter_error" and lost["failure_class"] == "adapter_error"
    assert lost["error"] == (
        f"the policy was running infer_actions() when its worker was lost: worker process died ({status})"
    )
    assert lost["attempts"] == 1 and lost["retry_reasons"] == []  # not retried
    others = records_by_episode(tmp_path / "out")
    assert {k: v for k, v in others.items() if v["status"] == "ok"} == {
        k: v for k, v in noop_reference.items() if (k[0], k[1]) != (lost["task_id"], lost["episode"])
    }


def test_one_worker_by_default_a_policy_ending_its_process_fails_only_its_episode(tmp_path):
    # before, --workers 1 ran in-process: the run ended with exit 1 and no message
    memobench = Path(sys.executable).with_name("memobench")
    if not memobench.exists():
        pytest.skip(f"the memobench console script is not installed next to {sys.executable}")
    done = subprocess.run(
        [
            str(memobench),
            "eval",
            "--adapter-spec",
            f"{FAULTY}:exits_once",
            "--adapter-kwargs",
            json.dumps({"marker": str(tmp_path / "exited")}),
            "--tasks",
            "T03",
            "--num-trials-per-task",
            "2",
            "--horizon",
            "20",
            "--out-root",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    records = read_ledger(tmp_path / "out" / LEDGER_FILENAME)
    assert sorted(r.status.value for r in records) == ["adapter_error", "ok"]
    assert "worker process died (exit status 3)" in next(r.error for r in records if r.error)


def alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie waiting for a reaper does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


@pytest.mark.parametrize("where", ["a local worker", "this process", "a Ray actor"])
@pytest.mark.parametrize("how", ["starts_a_subprocess", "forks_a_child"])
def test_nothing_an_adapter_starts_outlives_the_run(tmp_path, how, where):
    if where == "a Ray actor":
        pytest.importorskip("ray")
    execution = {
        "a local worker": {"workers": 1},
        "this process": {"workers": 0},
        "a Ray actor": {"workers": 1, "backend": "ray"},
    }[where]
    marker = tmp_path / "child.pid"
    policy = {"adapter_spec": f"{FAULTY}:{how}", "adapter_kwargs": {"marker": str(marker)}}
    run(tmp_path / "out", [Suite.load().get("T01-check-top-drawer")], policy, episodes=1, **execution)
    pid = int(marker.read_text())
    deadline = time.monotonic() + 5  # SIGKILL is delivered asynchronously
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid), f"the adapter's child {pid} outlived the run"
