"""Certification verdicts from hand-made ledgers: the rule, the counting, the files."""

from __future__ import annotations

import csv
import json

import pytest

from memobench.core.records import CheckpointResult, EpisodeRecord, EpisodeStatus
from memobench.core.spec import MemoryOp, MemoryType
from memobench.core.suite import Suite
from memobench.metrics.rates import Rate
from memobench.report.certify import (
    ADVERSARIES,
    NOTES_MARKER,
    Certificate,
    certificates,
    certification_markdown,
    episode_counts,
    keep_hand_notes,
    write_certificates,
)

COUNTS = episode_counts(20, memoryless=100, reactive=100)


def record(task_id: str, episode: int, success: bool, status: str = "ok", failure: str | None = None) -> EpisodeRecord:
    cp = CheckpointResult(index=0, op=MemoryOp.STORAGE, optional=False, completed=success, step=5 if success else None)
    return EpisodeRecord(
        task_id=task_id,
        memory_type=MemoryType.OBJECT,
        episode=episode,
        seed=7 + episode,
        status=EpisodeStatus(status),
        success=success,
        end_reason="success" if success else ("adapter_error" if status != "ok" else "horizon"),
        checkpoints=[cp],
        stage_score=float(success),
        stages_complete=success,
        average_score=float(success),
        steps=10,
        failure_class=None if success else (failure or "storage_failure"),
        timings={"total": 2.5, "policy": 1.0},
    )


def cert(
    task_id="O01-cued-milk",
    memory_type="object",
    chance=0.5,
    expert=(20, 20),
    slow=(20, 20),
    memoryless=(0, 100),
    reactive=(0, 100),
    failures=None,
    seconds=0.0,
    adversaries=(0, 20),
) -> Certificate:
    """A certificate from (k, n) pairs per policy (every adversary: ``adversaries``)."""
    rates = {
        "expert": Rate(*expert),
        "expert-slow": Rate(*slow),
        "expert-memoryless": Rate(*memoryless),
        "expert-reactive": Rate(*reactive),
        **{adversary: Rate(*adversaries) for adversary in ADVERSARIES},
    }
    return Certificate(task_id, memory_type, chance, rates, failures or {}, seconds)


@pytest.mark.parametrize(
    ("expert", "slow", "memoryless", "reactive", "chance", "passed"),
    [
        ((20, 20), (18, 20), (10, 20), (0, 20), 0.5, True),  # memoryless exactly at chance, slow at 90%
        ((19, 20), (20, 20), (12, 20), (12, 20), 0.5, True),  # 95% and chance + 10 points are both inclusive
        ((18, 20), (20, 20), (0, 20), (0, 20), 0.5, False),  # expert 90%
        ((20, 20), (17, 20), (0, 20), (0, 20), 0.5, False),  # slow expert 85%
        ((20, 20), (20, 20), (13, 20), (0, 20), 0.5, False),  # memoryless 65% > 60%
        ((20, 20), (20, 20), (0, 20), (20, 20), 0.5, False),  # reactive 100% (T01 before its commitment)
        ((20, 20), (20, 20), (2, 20), (2, 20), 0.0, True),  # chance 0, 10% allowed
        ((0, 0), (0, 0), (0, 0), (0, 0), 0.5, False),  # nothing ran: never a pass (pending)
    ],
)
def test_rule(expert, slow, memoryless, reactive, chance, passed):
    c = cert(chance=chance, expert=expert, slow=slow, memoryless=memoryless, reactive=reactive)
    assert c.passed is passed
    assert c.verdict.startswith("pass" if passed else ("pending" if expert == (0, 0) else "fail:"))


def test_a_chance_level_near_one_is_no_memory_needed_not_a_pass():
    c = cert(chance=1.0, expert=(20, 20), slow=(20, 20), memoryless=(20, 20), reactive=(20, 20))
    assert not c.passed and not c.problems and not c.memory_testable
    assert c.verdict == "no memory needed: chance level 100% (the task file derives it)"
    assert cert(chance=0.9, memoryless=(20, 20), reactive=(20, 20)).verdict.startswith("no memory needed")
    assert cert(chance=0.89, memoryless=(0, 20), reactive=(0, 20)).passed  # 99% < 100%: the rule can fail
    assert "1 need no memory" in certification_markdown([c], {"seed": 7, "episodes": {"expert": 20}})


def test_a_policy_that_never_ran_leaves_the_task_pending_not_passed():
    c = Certificate("O", "object", 0.5, {"expert": Rate(20, 20)})
    assert not c.passed and c.pending == [
        "expert-slow",
        "expert-memoryless",
        "expert-reactive",
        *ADVERSARIES,
    ]
    assert c.verdict == "pending: slow, memoryless, reactive, adv-slow, adv-arm, adv-state, adv-scene not run yet"
    failed = Certificate("O", "object", 0.5, {"expert": Rate(10, 20)})
    assert failed.verdict == "fail: expert SR 50% < 95%"  # a failure seen is not hidden as pending


def test_a_policy_short_of_its_episodes_leaves_the_task_pending_whatever_its_partial_rate():
    required = {"expert": 20, "expert-slow": 20, "expert-memoryless": 100, "expert-reactive": 100}
    required |= dict.fromkeys(ADVERSARIES, 20)
    rates = {
        "expert": Rate(20, 20),
        "expert-slow": Rate(20, 20),
        "expert-memoryless": Rate(25, 100),
        **{adversary: Rate(0, 20) for adversary in ADVERSARIES},
    }
    # 20 of 100 reactive episodes at 0%: not yet a pass (80 more could all succeed).
    low = Certificate("O", "object", 0.5, {**rates, "expert-reactive": Rate(0, 20)}, required=required)
    assert not low.passed and low.pending == ["expert-reactive"] and not low.problems
    assert low.verdict == "pending: reactive at 20/100 episodes"
    # 13/20 is above 60% now, yet the whole 100 could end at 13%: not yet a failure either.
    high = Certificate("O", "object", 0.5, {**rates, "expert-reactive": Rate(13, 20)}, required=required)
    assert not high.problems and high.verdict == "pending: reactive at 20/100 episodes"
    # A complete policy's failure is reported whatever else is pending.
    rates["expert"] = Rate(15, 20)
    both = Certificate("O", "object", 0.5, {**rates, "expert-memoryless": Rate(1, 40)}, required=required)
    assert both.verdict == "fail: expert SR 75% < 95%"
    idle = Certificate("O", "object", 0.5, {"expert": Rate(20, 20), "expert-slow": Rate(3, 3)}, required=required)
    assert (
        idle.verdict
        == "pending: slow at 3/20 episodes; memoryless, reactive, adv-slow, adv-arm, adv-state, adv-scene not run yet"
    )


def test_certificates_leave_a_task_pending_until_every_policy_ran_its_episodes():
    task = Suite.load().get("O01-cued-milk")
    full = [record(task.id, e, True) for e in range(4)]
    blind = [record(task.id, e, False) for e in range(8)]
    ledgers = {"expert": full, "expert-slow": full, "expert-memoryless": blind, "expert-reactive": blind[:5]}
    ledgers |= dict.fromkeys(ADVERSARIES, blind)
    counts = episode_counts(4, 8, 8, 8)
    (c,) = certificates([task], ledgers, counts)
    assert c.pending == ["expert-reactive"] and c.verdict == "pending: reactive at 5/8 episodes"
    (done,) = certificates([task], {**ledgers, "expert-reactive": blind}, counts)
    assert done.passed
    text = certification_markdown([c, done], {"episodes": counts, "seed": 7})
    assert "**1/2 tasks pass.** 1 pending: not every policy has run all its episodes on them yet." in text


def test_p_above_chance_is_the_binomial_tail():
    c = cert(chance=0.5, memoryless=(13, 20), reactive=(0, 20))
    assert c.p_above_chance("expert-memoryless") == pytest.approx(0.131588, abs=1e-6)  # sum C(20,i) / 2**20, i >= 13
    assert c.p_above_chance("expert-reactive") == 1.0
    assert cert(chance=0.0, memoryless=(0, 20)).p_above_chance("expert-memoryless") == 1.0
    assert cert(chance=0.0, memoryless=(1, 20)).p_above_chance("expert-memoryless") == 0.0


def test_failing_verdict_names_every_reason():
    c = cert(chance=0.25, expert=(10, 20), slow=(9, 20), memoryless=(10, 20), reactive=(20, 20))
    assert "expert SR 50% < 95%" in c.verdict and "expert-slow SR 45% < 90%" in c.verdict
    assert "expert-memoryless SR 50% > chance 25.0% + 10 points" in c.verdict
    assert "expert-reactive SR 100% > chance 25.0% + 10 points" in c.verdict


def test_certificates_count_errors_as_failures_and_only_the_asked_episodes():
    task = Suite.load().get("O01-cued-milk")
    expert = [record(task.id, e, True) for e in range(3)] + [record(task.id, 3, False, "adapter_error")]
    expert.append(record(task.id, 4, True))  # from an earlier, longer run: not counted
    memoryless = [record(task.id, e, e == 0) for e in range(4)] + [record("other", 0, True)]
    reactive = [record(task.id, e, False, failure="over_execution") for e in range(4)]
    ledgers = {
        "expert": expert,
        "expert-slow": expert[:4],
        "expert-memoryless": memoryless,
        "expert-reactive": reactive,
        **dict.fromkeys(ADVERSARIES, reactive),
    }
    (c,) = certificates([task], ledgers, episode_counts(4, 4, 4, 4))
    assert (c.rate("expert").k, c.rate("expert").n) == (3, 4)
    assert (c.rate("expert-memoryless").k, c.rate("expert-memoryless").n) == (1, 4)
    assert c.chance == pytest.approx(0.5)
    over = {"over_execution": 4}
    assert c.failures == {
        "expert-memoryless": {"storage_failure": 3},
        "expert-reactive": over,
        **dict.fromkeys(ADVERSARIES, over),
    }
    # the counted episodes' totals only: 4 each (the adapter error counts, the fifth does not)
    assert c.episode_seconds == pytest.approx((16 + 4 * len(ADVERSARIES)) * 2.5)


def test_each_policy_is_judged_on_its_own_episode_count():
    task = Suite.load().get("O01-cued-milk")
    expert = [record(task.id, e, True) for e in range(6)]
    blind = [record(task.id, e, e % 2 == 0) for e in range(10)]
    ledgers = {"expert": expert, "expert-slow": expert, "expert-memoryless": blind, "expert-reactive": blind}
    ledgers |= dict.fromkeys(ADVERSARIES, blind)
    (c,) = certificates([task], ledgers, episode_counts(4, memoryless=8, reactive=6, adversaries=2))
    assert (c.rate("expert").k, c.rate("expert").n) == (4, 4)
    assert (c.rate("expert-slow").k, c.rate("expert-slow").n) == (4, 4)
    assert (c.rate("expert-memoryless").k, c.rate("expert-memoryless").n) == (4, 8)
    assert (c.rate("expert-reactive").k, c.rate("expert-reactive").n) == (3, 6)
    # never fewer than the experts' (their seeds include the experts')
    assert (c.rate("adversary-arm").k, c.rate("adversary-arm").n) == (2, 4)


def test_run_certification_asks_the_baselines_for_more_episodes(tmp_path, monkeypatch):
    """The four run requests: same seeds and protocol, the baselines' longer (never shorter)."""
    from memobench.evaluation import runner
    from memobench.evaluation.ledger import LEDGER_FILENAME, Ledger
    from memobench.evaluation.protocol import Protocol
    from memobench.report.certify import ADVERSARY_EPISODES, MEMORYLESS_EPISODES, REACTIVE_EPISODES, run_certification

    task = Suite.load().get("O01-cued-milk")
    asked = {}

    def fake_evaluate(request, adapter, events=None):
        name = request.policy["name"]
        asked[name] = request.num_trials_per_task
        request.out_root.mkdir(parents=True, exist_ok=True)
        with Ledger(request.out_root / LEDGER_FILENAME) as ledger:
            for e in range(request.num_trials_per_task):
                ledger.append(record(task.id, e, name in ("expert", "expert-slow") or e % 4 == 0))
            return runner.RunResult(out_root=request.out_root, records=ledger.records())

    monkeypatch.setattr(runner, "evaluate", fake_evaluate)
    (c,) = run_certification([task], episode_counts(3), Protocol(seed=7), tmp_path / "a")
    n = MEMORYLESS_EPISODES
    adversaries = ADVERSARY_EPISODES
    assert (
        asked
        == {"expert": 3, "expert-slow": 3, "expert-memoryless": n, "expert-reactive": REACTIVE_EPISODES} | adversaries
    )
    assert (c.rate("expert").n, c.rate("expert-memoryless").n, c.rate("expert-memoryless").k) == (3, n, -(-n // 4))
    assert json.loads((tmp_path / "a" / "certification.json").read_text())["episodes"] == asked

    run_certification([task], episode_counts(5, 2, 2, 2), Protocol(seed=7), tmp_path / "b")
    assert set(asked.values()) == {5}


def test_report_only_judges_the_records_there_without_running_an_episode(tmp_path, monkeypatch):
    from memobench.evaluation import runner
    from memobench.evaluation.ledger import LEDGER_FILENAME, Ledger
    from memobench.evaluation.protocol import Protocol
    from memobench.report.certify import run_certification

    def no_evaluate(*args, **kwargs):
        raise AssertionError("report-only ran an episode")

    monkeypatch.setattr(runner, "evaluate", no_evaluate)
    task = Suite.load().get("O01-cued-milk")
    (tmp_path / "expert").mkdir()
    with Ledger(tmp_path / "expert" / LEDGER_FILENAME) as ledger:
        for e in range(2):
            ledger.append(record(task.id, e, True))
    (c,) = run_certification([task], episode_counts(2), Protocol(seed=7), tmp_path, run=False)
    assert (c.rate("expert").k, c.rate("expert").n) == (2, 2)
    assert not c.rate("expert-slow").defined and not c.passed  # the slow expert has not run yet
    assert c.verdict.startswith("pending: slow")
    assert (tmp_path / "certification.json").exists()


def test_markdown_table_has_every_task_the_rule_and_how_guessing_failed():
    certs = [
        cert(
            "A",
            "object",
            0.5,
            memoryless=(45, 100),
            reactive=(50, 100),
            seconds=5400.0,
            failures={"expert-memoryless": {"storage_failure": 55}, "expert-reactive": {"storage_failure": 50}},
        ),
        cert(
            "B",
            "temporal",
            0.25,
            memoryless=(65, 100),
            reactive=(0, 100),
            seconds=1800.0,
            failures={"expert-memoryless": {"over_execution": 35}, "expert-reactive": {"over_execution": 100}},
        ),
    ]
    text = certification_markdown(
        certs,
        {
            "command": "memobench certify --tasks all",
            "date": "2026-11-29",
            "episodes": COUNTS,
            "seed": 7,
            "replan_steps": 5,
        },
    )
    assert "Generated by `memobench certify --tasks all` on 2026-11-29. The episodes took 2.0 h in all" in text
    assert (
        "Episodes per task (expert 20, slow 20, memoryless 100, reactive 100, adv-slow 30, adv-arm 50, "
        "adv-state 30, adv-scene 30), each "
        "policy's from seed 7 on, replan interval 5"
    ) in text
    assert "**1/2 tasks pass.**" in text
    assert (
        "| A | object | 20/20 (100%) | 20/20 (100%) | 45/100 (45%) | 50/100 (50%) | 0/20 (0%) | 0/20 (0%) "
        "| 0/20 (0%) | 0/20 (0%) | 50.0% | 0.86 / 0.54 / 1.00 / 1.00 / 1.00 / 1.00 | pass | storage_failure 55 "
        "| storage_failure 50 | - | - | - | - |"
    ) in text
    assert (
        "| B | temporal | 20/20 (100%) | 20/20 (100%) | 65/100 (65%) | 0/100 (0%) | 0/20 (0%) | 0/20 (0%) | 0/20 (0%) "
        "| 0/20 (0%) | 25.0% | " in text
    )
    assert "**FAIL**: expert-memoryless SR 65% > chance 25.0% + 10 points | over_execution 35 |" in text


def test_markdown_pools_each_memory_type_against_chance():
    certs = [
        cert(
            "T1",
            "temporal",
            0.5,
            memoryless=(40, 100),
            reactive=(0, 100),
            failures={"expert-memoryless": {"storage_failure": 60}, "expert-reactive": {"over_execution": 100}},
        ),
        cert(
            "T2",
            "temporal",
            0.25,
            memoryless=(30, 100),
            reactive=(25, 100),
            failures={"expert-memoryless": {"storage_failure": 50, "over_execution": 20}},
        ),
        cert(
            "O1",
            "object",
            0.2,
            memoryless=(35, 100),
            reactive=(20, 100),
            failures={"expert-memoryless": {"storage_failure": 65}},
        ),
    ]
    text = certification_markdown(certs, {"episodes": COUNTS, "seed": 7, "replan_steps": 5})
    # 50 + 25 expected; sd sqrt(100 x .25 + 100 x .1875) = 6.6
    assert "| temporal | 2/2 | memoryless | 70/200 | 75.0 ± 6.6 | over_execution 20, storage_failure 110 |" in text
    assert "| temporal | 2/2 | reactive | 25/200 | 75.0 ± 6.6 | over_execution 100 |" in text
    assert "| object | 0/1 | memoryless | 35/100 | 20.0 ± 4.0 | storage_failure 65 |" in text


def test_markdown_points_out_chance_levels_a_baseline_beats_beyond_luck():
    meta = {"episodes": COUNTS, "seed": 7, "replan_steps": 5}
    # 19/100 at chance 1/9: passes, yet p(luck) 0.01.
    low = cert("T03", "temporal", 1 / 9, memoryless=(19, 100), reactive=(0, 100))
    fair = cert("S01", "spatial", 1 / 3, memoryless=(29, 100), reactive=(33, 100))
    assert low.passed and low.low_chance_baselines == ["expert-memoryless"] and not fair.low_chance_baselines
    text = certification_markdown([low, fair], meta)
    assert "**Chance levels to re-check:** T03 (memoryless, p(luck) 0.014)." in text
    assert "S01 (" not in text
    assert "re-check" not in certification_markdown([fair], meta)


def test_regenerating_the_markdown_keeps_the_hand_written_notes():
    notes = f"{NOTES_MARKER}\n\n## Notes on this run\n\n- written by hand\n"
    previous = "# old table\n\n| A | ... |\n\n" + notes
    assert keep_hand_notes("# new table\n", previous) == "# new table\n\n" + notes
    assert keep_hand_notes("# new table\n", "# old table, no marker\n") == "# new table\n"
    assert keep_hand_notes("# new table\n", None) == "# new table\n"


def test_files_hold_every_task_and_the_rule(tmp_path):
    certs = [
        cert("A", "object", 0.5, memoryless=(9, 20), reactive=(10, 20)),
        cert("B", "temporal", 0.0, expert=(15, 20), memoryless=(0, 20), reactive=(0, 20)),
    ]
    write_certificates(certs, tmp_path, {"episodes": 20, "seed": 7})
    doc = json.loads((tmp_path / "certification.json").read_text())
    assert doc["passed"] is False and doc["episodes"] == 20
    assert doc["rule"] == {"expert_min_sr": 0.95, "slow_min_sr": 0.90, "memoryless_margin": 0.10}
    assert [t["passed"] for t in doc["tasks"]] == [True, False]
    assert doc["tasks"][0]["success_rates"]["expert-reactive"]["k"] == 10
    rows = list(csv.DictReader((tmp_path / "certification.csv").read_text().splitlines()))
    assert [r["task_id"] for r in rows] == ["A", "B"]
    assert (rows[0]["slow_sr"], rows[0]["reactive_sr"]) == ("1.0000", "0.5000")
    assert rows[1]["verdict"].startswith("fail: expert SR 75%")
