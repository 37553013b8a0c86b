"""Certification verdicts from hand-made ledgers: the rule, the counting, the files."""

from __future__ import annotations

import csv
import json

import pytest

from memobench.evaluation.certify import (
    NOTES_MARKER,
    Certificate,
    certificates,
    certification_markdown,
    keep_hand_notes,
    write_certificates,
)
from memobench.evaluation.records import CheckpointResult, EpisodeRecord, EpisodeStatus
from memobench.metrics.rates import Rate
from memobench.spec import MemoryOp, MemoryType
from memobench.suite import Suite


def record(task_id: str, episode: int, success: bool, status: str = "ok",
           failure: str | None = None) -> EpisodeRecord:
    cp = CheckpointResult(index=0, op=MemoryOp.STORAGE, optional=False, completed=success,
                          step=5 if success else None)
    return EpisodeRecord(
        task_id=task_id, memory_type=MemoryType.OBJECT, episode=episode, seed=7 + episode,
        status=EpisodeStatus(status), success=success,
        end_reason="success" if success else ("adapter_error" if status != "ok" else "horizon"),
        checkpoints=[cp], stage_score=float(success), stages_complete=success, average_score=float(success), steps=10,
        failure_class=None if success else (failure or "storage_failure"), timings={"total": 2.5, "policy": 1.0},
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
    assert cert.memoryless_failures == {"storage_failure": 3}
    assert cert.episode_seconds == pytest.approx(8 * 2.5)  # the counted episodes' totals only


def test_memoryless_expert_is_judged_on_its_own_episode_count():
    task = Suite.load().get("O01-cued-milk")
    expert = [record(task.id, e, True) for e in range(6)]
    memoryless = [record(task.id, e, e % 2 == 0) for e in range(10)]
    (cert,) = certificates([task], expert, memoryless, episodes=4, memoryless_episodes=8)
    assert (cert.expert.k, cert.expert.n) == (4, 4)
    assert (cert.memoryless.k, cert.memoryless.n) == (4, 8)


def test_run_certification_asks_the_memoryless_expert_for_more_episodes(tmp_path, monkeypatch):
    """The two run requests: same seeds and protocol, the memoryless one longer (never shorter)."""
    from memobench.evaluation import runner
    from memobench.evaluation.certify import MEMORYLESS_EPISODES, run_certification
    from memobench.evaluation.ledger import LEDGER_FILENAME, Ledger
    from memobench.evaluation.protocol import Protocol

    task = Suite.load().get("O01-cued-milk")
    asked = {}

    def fake_evaluate(request, adapter, console=None):
        name = request.policy["name"]
        asked[name] = request.num_trials_per_task
        request.out_root.mkdir(parents=True, exist_ok=True)
        with Ledger(request.out_root / LEDGER_FILENAME) as ledger:
            for e in range(request.num_trials_per_task):
                ledger.append(record(task.id, e, name == "expert" or e % 4 == 0))

    monkeypatch.setattr(runner, "evaluate", fake_evaluate)
    (cert,) = run_certification([task], 3, Protocol(seed=7), tmp_path / "a")
    assert asked == {"expert": 3, "expert-memoryless": MEMORYLESS_EPISODES}
    assert (cert.expert.n, cert.memoryless.n, cert.memoryless.k) == (3, MEMORYLESS_EPISODES, MEMORYLESS_EPISODES // 4)
    assert json.loads((tmp_path / "a" / "certification.json").read_text())["memoryless_episodes"] == MEMORYLESS_EPISODES

    run_certification([task], 5, Protocol(seed=7), tmp_path / "b", memoryless_episodes=2)
    assert asked == {"expert": 5, "expert-memoryless": 5}


def test_markdown_table_has_every_task_the_rule_and_how_guessing_failed():
    certs = [Certificate("A", "object", 0.5, Rate(20, 20), Rate(9, 20), {"storage_failure": 11}, 5400.0),
             Certificate("B", "temporal", 0.25, Rate(20, 20), Rate(13, 20), {"over_execution": 7}, 1800.0)]
    text = certification_markdown(certs, {"command": "memobench certify --tasks all", "date": "2026-11-29",
                                          "episodes": 20, "memoryless_episodes": 100, "seed": 7,
                                          "replan_steps": 5})
    assert "Generated by `memobench certify --tasks all` on 2026-11-29. The episodes took 2.0 h in all" in text
    assert "20 expert episodes (seeds 7..26) and 100 memoryless ones (seeds 7..106), replan interval 5" in text
    assert "**1/2 tasks pass.**" in text
    assert "| A | object | 20/20 (100%) | 9/20 (45%) | 50.0% | 0.75 | pass | storage_failure 11 |" in text
    assert "| B | temporal | 20/20 (100%) | 13/20 (65%) | 25.0% | 0.00 | **FAIL**: memoryless SR 65%" in text


def test_markdown_pools_each_memory_type_against_chance():
    certs = [Certificate("T1", "temporal", 0.5, Rate(20, 20), Rate(40, 100), {"storage_failure": 60}),
             Certificate("T2", "temporal", 0.25, Rate(20, 20), Rate(30, 100), {"storage_failure": 50,
                                                                                "over_execution": 20}),
             Certificate("O1", "object", 0.2, Rate(20, 20), Rate(35, 100), {"storage_failure": 65})]
    text = certification_markdown(certs, {"episodes": 20, "memoryless_episodes": 100, "seed": 7, "replan_steps": 5})
    # 50 + 25 expected; sd sqrt(100 x .25 + 100 x .1875) = 6.6
    assert "| temporal | 2/2 | 70/200 | 75.0 ± 6.6 | over_execution 20, storage_failure 110 |" in text
    assert "| object | 0/1 | 35/100 | 20.0 ± 4.0 | storage_failure 65 |" in text


def test_markdown_points_out_chance_levels_the_memoryless_expert_beats_beyond_luck():
    meta = {"episodes": 20, "memoryless_episodes": 100, "seed": 7, "replan_steps": 5}
    # 19/100 at chance 1/9 (T03 before its level was corrected): passes, yet p(luck) 0.01.
    low = Certificate("T03", "temporal", 1 / 9, Rate(20, 20), Rate(19, 100))
    fair = Certificate("S01", "spatial", 1 / 3, Rate(20, 20), Rate(29, 100))
    assert low.passed and low.chance_looks_low and not fair.chance_looks_low
    text = certification_markdown([low, fair], meta)
    assert "**Chance levels to re-check:** T03 (p(luck) 0.014)." in text
    assert "S01 (p(luck)" not in text
    assert "re-check" not in certification_markdown([fair], meta)


def test_regenerating_the_markdown_keeps_the_hand_written_notes():
    notes = f"{NOTES_MARKER}\n\n## Notes on this run\n\n- written by hand\n"
    previous = "# old table\n\n| A | ... |\n\n" + notes
    assert keep_hand_notes("# new table\n", previous) == "# new table\n\n" + notes
    assert keep_hand_notes("# new table\n", "# old table, no marker\n") == "# new table\n"
    assert keep_hand_notes("# new table\n", None) == "# new table\n"


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
