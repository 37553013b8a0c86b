"""A run gives the same ledger records with one worker or a pool of two."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from memobench.evaluation.ledger import LEDGER_FILENAME, read_ledger
from memobench.evaluation.protocol import Protocol
from memobench.evaluation.runner import RunRequest, evaluate
from memobench.policies.loader import build_adapter, builtin_spec
from memobench.suite import Suite

pytestmark = pytest.mark.sim


def records_by_episode(out: Path) -> dict[tuple[str, int], dict]:
    out_records = {}
    for record in read_ledger(out / LEDGER_FILENAME):
        data = record.model_dump(mode="json")
        data.pop("timings")
        out_records[(record.task_id, record.episode)] = data
    return out_records


def test_one_worker_and_two_workers_write_the_same_records(tmp_path):
    suite = Suite.load()
    tasks = [suite.get("T03-check-all-drawers"), suite.get("O01-cued-milk")]
    for workers in (1, 2):
        request = RunRequest(tasks=tasks, num_trials_per_task=3, protocol=Protocol(horizon=40, adapter_timeout=0),
                             out_root=tmp_path / f"w{workers}", policy={"name": "expert", "adapter_kwargs": {}},
                             workers=workers)
        evaluate(request, build_adapter(builtin_spec("expert")), console=Console(file=io.StringIO()))
    one, two = records_by_episode(tmp_path / "w1"), records_by_episode(tmp_path / "w2")
    assert len(one) == 6 and one == two
    # the expert acted in every episode: 40 steps at replan 5 are 8 queries
    assert all(r["status"] == "ok" and r["policy_queries"] == 8 for r in one.values())
