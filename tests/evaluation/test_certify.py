"""Certification verdicts from hand-made ledgers: the rule, the counting, the files."""

from __future__ import annotations

import csv
import json

import pytest

from memobench.evaluation.certify import Certificate, certificates, write_certificates
from memobench.evaluation.records import CheckpointResult, EpisodeRecord, EpisodeStatus
from memobench.metrics.rates import Rate
from memobench.spec import MemoryOp, MemoryType
from memobench.suite import Suite


def record(task_id: str, episode: int, success: bool, status: str = "ok") -> EpisodeRecord:
    cp = CheckpointResult(index=0, op=MemoryOp.STORAGE, optional=False, completed=success,
                          step=5 if success else None)
    return EpisodeRecord(
        task_id=task_id, memory_type=MemoryType.OBJECT, episode=episode, seed=7 + episode,
        status=EpisodeStatus(status), success=success,
        end_reason="success" if success else ("adapter_error" if status != "ok" else "horizon"),
        checkpoints=[cp], stage_score=float(success), stages_complete=success, average_score=float(success), steps=10,
    )


@pytest.mark.parametrize(("expert", "memoryless", "chance", "passed"), [
    ((20, 20), (10, 20), 0.5, True),     # memoryless exactly at chance
    ((19, 20), (12, 20), 0.5, True),     # 95% and chance + 10 points are both inclusive
    ((18, 20), (0, 20), 0.5, False),     # expert 90%
    ((20, 20), (13, 20), 0.5, False),    # memoryless 65% > 60%
    ((20, 20), (2, 20), 0.0, True),      # T03-like: chance 0, 10% allowed
    ((0, 0), (0, 0), 0.5, False),        # nothing ran: never a pass
])
def test_rule(expert, memoryless, chance, passed):
    cert = Certificate("O01-cued-milk", "object", chance, Rate(*expert), Rate(*memoryless))
    assert cert.passed is passed
    assert cert.verdict.startswith("pass" if passed else "fail:")


def test_p_above_chance_is_the_binomial_tail():
    cert = Certificate("O", "object", 0.5, Rate(20, 20), Rate(13, 20))
    assert cert.p_above_chance == pytest.approx(0.131588, abs=1e-6)  # sum C(20,i) / 2**20, i >= 13
    assert Certificate("T", "temporal", 0.0, Rate(1, 1), Rate(0, 20)).p_above_chance == 1.0
    assert Certificate("T", "temporal", 0.0, Rate(1, 1), Rate(1, 20)).p_above_chance == 0.0


def test_failing_verdict_names_both_reasons():
    cert = Certificate("T", "temporal", 0.25, Rate(10, 20), Rate(10, 20))
    assert "expert SR 50% < 95%" in cert.verdict
    assert "memoryless SR 50% > chance 25.0% + 10 points" in cert.verdict


def test_certificates_count_errors_as_failures_and_only_the_asked_episodes():
    task = Suite.load().get("O01-cued-milk")
    expert = [record(task.id, e, True) for e in range(3)] + [record(task.id, 3, False, "adapter_error")]
    expert.append(record(task.id, 4, True))  # from an earlier, longer run: not counted
    memoryless = [record(task.id, e, e == 0) for e in range(4)] + [record("other", 0, True)]
    (cert,) = certificates([task], expert, memoryless, episodes=4)
    assert (cert.expert.k, cert.expert.n) == (3, 4)
    assert (cert.memoryless.k, cert.memoryless.n) == (1, 4)
    assert cert.chance == pytest.approx(0.5)


def test_files_hold_every_task_and_the_rule(tmp_path):
    certs = [Certificate("A", "object", 0.5, Rate(20, 20), Rate(9, 20)),
             Certificate("B", "temporal", 0.0, Rate(15, 20), Rate(0, 20))]
    write_certificates(certs, tmp_path, {"episodes": 20, "seed": 7})
    doc = json.loads((tmp_path / "certification.json").read_text())
    assert doc["passed"] is False and doc["episodes"] == 20
    assert doc["rule"] == {"expert_min_sr": 0.95, "memoryless_margin": 0.10}
    assert [t["passed"] for t in doc["tasks"]] == [True, False]
    rows = list(csv.DictReader((tmp_path / "certification.csv").read_text().splitlines()))
    assert [r["task_id"] for r in rows] == ["A", "B"]
    assert rows[1]["verdict"].startswith("fail: expert SR 75%")
