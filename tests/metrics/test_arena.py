"""RoboMemArena's scoring and its four files, on synthetic ledger records of real arena tasks."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from memobench.core.records import CheckpointResult, EpisodeRecord, EpisodeStatus, Violation
from memobench.core.suite import Suite
from memobench.evaluation.protocol import ROBOMEMARENA_DEFAULTS, Protocol
from memobench.metrics.arena import (
    EPISODE_COLUMNS,
    TASK_COLUMNS,
    arena_results,
    score_episode,
    write_arena_files,
)

SUITE = Suite.load(arena=True)
POUR = SUITE.get("A06")  # lift, pour 1, pour 2 (counting)
MICROWAVE = SUITE.get("A20")  # open, cookies in, chocolate in (post-goal 200)
ARENA = Protocol(name="robomemarena")


def arena_record(task, episode: int, steps_done: list[int | None], *, steps: int = 400, violation: str | None = None,
                 pours: int = 0) -> EpisodeRecord:  # fmt: skip
    """A ledger record of ``task`` whose checkpoint i completed at ``steps_done[i]`` (None: not)."""
    cps = [
        CheckpointResult(index=i, op=cp.op, optional=cp.optional, completed=s is not None, step=s)
        for i, (cp, s) in enumerate(zip(task.spec.checkpoints, steps_done, strict=True))
    ]
    required = [c for c in cps if not c.optional]
    success = all(c.completed for c in required) and violation is None
    counting = task.spec.counting
    return EpisodeRecord(
        task_id=task.id,
        memory_type=task.spec.family,
        episode=episode,
        seed=100 + episode,
        status=EpisodeStatus.OK,
        success=success,
        failure_class=None if success else "over_execution" if violation else "storage_failure",
        end_reason="success" if success else (violation or "horizon"),
        checkpoints=cps,
        violation=Violation(name=violation, step=steps - 1) if violation else None,
        stage_score=sum(c.completed for c in required) / len(required),
        stages_complete=success,
        average_score=sum(c.completed for c in cps) / len(cps),
        pour_counts={f"{counting.object}->{counting.target}": pours} if counting else {},
        steps=steps,
    )


def test_the_protocol_preset_and_its_overrides() -> None:
    assert {k: getattr(ARENA, k) for k in ROBOMEMARENA_DEFAULTS} == ROBOMEMARENA_DEFAULTS
    assert Protocol(name="robomemarena", seed=50, replan_steps=5).seed == 50  # a given field wins
    assert Protocol().seed == 7 and Protocol().resize_mode == "pad"
    # Post-goal steps apply to the arena's tasks without a pour count only.
    assert Protocol(monitor_steps=50).monitor_steps_for(MICROWAVE) == 50
    assert Protocol(monitor_steps=50).monitor_steps_for(POUR) == 0


def test_scores_and_failure_reasons() -> None:
    done = score_episode(POUR, arena_record(POUR, 0, [20, 60, 110], steps=141), ARENA)
    assert (done.score, done.stage_success, done.failure_reason) == (1.0, True, "")
    assert done.pour_steps == (60, 110) and done.extra_monitor_end_step == 140
    # The episode ended before the monitor's last step: stages done, TSR not.
    short = score_episode(POUR, arena_record(POUR, 1, [20, 60, 110], steps=140), ARENA)
    assert (short.score, short.stage_success, short.failure_reason) == (1.0, False, "monitor_incomplete")
    extra = score_episode(POUR, arena_record(POUR, 2, [20, 60, 110], steps=125, violation="extra_pour", pours=3), ARENA)
    assert (extra.extra_pour_detected, extra.failure_reason) == (True, "extra_pour")
    partial = score_episode(POUR, arena_record(POUR, 3, [20, 60, None]), ARENA)
    assert partial.score == pytest.approx(2 / 3) and partial.failure_reason == "incomplete_stage"
    assert partial.extra_monitor_end_step is None
    # Without strict rejection a third pour is reported, not a failure.
    lenient = Protocol(name="robomemarena", fail_on_extra_pour=False)
    noted = score_episode(POUR, arena_record(POUR, 4, [20, 60, 110], steps=300, pours=3), lenient)
    assert (noted.extra_pour_detected, noted.stage_success) == (True, True)


def test_microwave_episode_succeeds_without_closing() -> None:
    e = score_episode(MICROWAVE, arena_record(MICROWAVE, 0, [30, 90, 150], steps=351), ARENA)
    assert (e.score, e.stage_success, e.pour_steps, e.extra_monitor_end_step) == (1.0, True, (None, None), None)


def test_task_rows_and_macro_aggregate() -> None:
    records = [
        arena_record(POUR, 0, [20, 60, 110], steps=141),  # 100, success
        arena_record(POUR, 1, [20, None, None]),  # 33.33, failure
        arena_record(MICROWAVE, 0, [30, 90, None]),  # 66.67, failure
        arena_record(MICROWAVE, 1, [30, None, None]),  # 33.33, failure
    ]
    episodes, tasks, agg = arena_results(records, [POUR, MICROWAVE], ARENA, Path("/run"))
    assert [(r["task_id"], r["ep"]) for r in episodes] == [(6, 0), (6, 1), (20, 0), (20, 1)]
    by_task = {r["task_id"]: r for r in tasks}
    assert by_task[6]["average_score_pct"] == pytest.approx(66.67)
    assert by_task[6]["tsr_success_rate_pct"] == by_task[6]["stage_success_rate_pct"] == 50.0
    assert by_task[6]["goal_success_rate_pct"] == by_task[6]["average_score_pct"]  # CSR, RoboMemArena's legacy name
    assert by_task[20]["average_score_pct"] == 50.0 and by_task[20]["tsr_success_rate_pct"] == 0.0
    assert agg == {
        "num_tasks": 2, "num_episodes": 4, "seed_start": 100, "macro_average_score_pct": pytest.approx(58.34),
        "macro_tsr_success_rate_pct": 25.0, "macro_goal_success_rate_pct": pytest.approx(58.34),
        "num_goal_scored_tasks": 2,
    }  # fmt: skip


def test_the_four_files_have_robomemarena_columns(tmp_path: Path) -> None:
    records = [arena_record(POUR, 0, [20, 60, 110], steps=141), arena_record(MICROWAVE, 0, [30, None, None])]
    write_arena_files(records, [POUR, MICROWAVE], ARENA, tmp_path, videos=True)
    with (tmp_path / "episodes.tsv").open() as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    assert tuple(rows[0]) == EPISODE_COLUMNS
    assert rows[0]["pour_2_step"] == "110" and rows[1]["pour_1_step"] == ""
    assert rows[0]["video_dir"] == str(tmp_path / "videos" / "task6")
    assert rows[0]["prompt"] == "pour tomato sauce into bowl drainer"
    with (tmp_path / "task_summary.tsv").open() as f:
        assert tuple(next(csv.DictReader(f, delimiter="\t"))) == TASK_COLUMNS
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert isinstance(summary, list) and [s["task_id"] for s in summary] == [6, 20]
    assert json.loads((tmp_path / "aggregate.json").read_text())["num_episodes"] == 2


def test_memobench_records_are_left_out() -> None:
    with pytest.raises(ValueError, match="not an arena task"):
        score_episode(SUITE.get("T09"), arena_record(POUR, 0, [1, 2, 3]), ARENA)
