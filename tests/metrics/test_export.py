"""Derived result files round-trip through csv/json readers and are written atomically."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest

from memobench.core.records import (
    CheckpointResult,
    EpisodeRecord,
    EpisodeStatus,
    FailureClass,
)
from memobench.core.spec import MemoryOp, MemoryType
from memobench.metrics import export
from memobench.metrics.export import (
    EPISODE_COLUMNS,
    TASK_COLUMNS,
    write_summary,
)

S, U, C = MemoryOp.STORAGE, MemoryOp.UPDATE, MemoryOp.COMPRESSION


def rec(
    task: str,
    mtype: MemoryType,
    episode: int,
    steps: list[int | None],
    ops: list[MemoryOp],
    fc: FailureClass | None = None,
    **kw,
) -> EpisodeRecord:
    """Checkpoint i completed at steps[i], or missed when steps[i] is None."""
    cps = [
        CheckpointResult(index=i, op=op, completed=s is not None, step=s)
        for i, (op, s) in enumerate(zip(ops, steps, strict=True))
    ]
    done = sum(c.completed for c in cps)
    success = fc is None
    fields = dict(
        task_id=task,
        memory_type=mtype,
        episode=episode,
        seed=7 + episode,
        binding={"target": "plate_2", "count": 2},
        status=EpisodeStatus.OK,
        success=success,
        failure_class=fc,
        end_reason="success" if success else "horizon",
        checkpoints=cps,
        stage_score=done / len(cps),
        stages_complete=done == len(cps),
        average_score=done / len(cps),
        steps=300,
    )
    fields.update(kw)
    return EpisodeRecord(**fields)


RECORDS = [
    rec("b_temporal", MemoryType.TEMPORAL, 1, [5, None], [U, U], FailureClass.LATE_STALE),
    rec("a_spatial", MemoryType.SPATIAL, 0, [12, 45, None], [S, U, C], FailureClass.LATE_STALE),
    rec("a_spatial", MemoryType.SPATIAL, 1, [10, 40, 90], [S, U, C]),
    rec(
        "b_temporal",
        MemoryType.TEMPORAL,
        0,
        [None, None],
        [U, U],
        FailureClass.ADAPTER_ERROR,
        status=EpisodeStatus.ADAPTER_ERROR,
        end_reason="adapter_error",
        error="boom",
    ),
]


def read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or []), list(reader)


def test_summary_json_round_trips(tmp_path: Path) -> None:
    summary = write_summary(RECORDS, tmp_path / "out")
    with (tmp_path / "out" / "summary.json").open() as f:
        assert json.load(f) == summary
    assert summary["tasks"]["a_spatial"]["SR"]["k"] == 1


def test_task_summary_csv_round_trips(tmp_path: Path) -> None:
    write_summary(RECORDS, tmp_path)
    header, rows = read_csv(tmp_path / "task_summary.csv")
    assert header == list(TASK_COLUMNS)
    assert header[-len(FailureClass) :] == [fc.value for fc in FailureClass]
    assert [r["task_id"] for r in rows] == ["a_spatial", "b_temporal"]
    a, b = rows
    assert a["memory_type"] == "spatial" and int(a["episodes"]) == 2
    assert float(a["SR"]) == 0.5 and float(a["SR_lo"]) < 0.5 < float(a["SR_hi"])
    assert float(a["MCR"]) == 0.5 and float(a["CSR"]) == pytest.approx(5 / 6)
    assert float(a["average_score_pct"]) == pytest.approx(100 * 5 / 6)
    assert int(a["late_stale"]) == 1 and int(a["adapter_error"]) == 0
    # Undefined rates are empty cells, not 0 and not "nan".
    assert b["MSR"] == "" and b["MCR"] == ""
    assert float(b["MUR"]) == 0.25 and int(b["adapter_errors"]) == 1


def test_episodes_csv_round_trips(tmp_path: Path) -> None:
    write_summary(RECORDS, tmp_path)
    header, rows = read_csv(tmp_path / "episodes.csv")
    assert header == list(EPISODE_COLUMNS)
    assert [(r["task_id"], int(r["episode"])) for r in rows] == [
        ("a_spatial", 0),
        ("a_spatial", 1),
        ("b_temporal", 0),
        ("b_temporal", 1),
    ]
    first = rows[0]
    assert first["checkpoint_steps"] == "12;45;-"
    assert rows[1]["checkpoint_steps"] == "10;40;90"
    assert rows[2]["checkpoint_steps"] == "-;-"
    assert json.loads(first["binding"]) == {"target": "plate_2", "count": 2}
    assert first["binding"] == '{"count":2,"target":"plate_2"}'  # compact, sorted keys
    assert first["success"] == "false" and rows[1]["success"] == "true"
    assert first["failure_class"] == "late_stale" and rows[1]["failure_class"] == ""
    assert rows[2]["status"] == "adapter_error" and int(first["seed"]) == 7
    assert float(first["stage_score"]) == pytest.approx(2 / 3)


def test_rewrite_replaces_files_and_leaves_no_temp_files(tmp_path: Path) -> None:
    write_summary(RECORDS, tmp_path)
    write_summary(RECORDS[:1], tmp_path)
    assert sorted(os.listdir(tmp_path)) == ["episodes.csv", "summary.json", "task_summary.csv"]
    with (tmp_path / "summary.json").open() as f:
        assert json.load(f)["episodes"] == 1


def test_failed_write_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_summary(RECORDS, tmp_path)
    before = (tmp_path / "summary.json").read_bytes()

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk on fire")

    monkeypatch.setattr(export.os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk on fire"):
        write_summary(RECORDS[:1], tmp_path)
    assert (tmp_path / "summary.json").read_bytes() == before
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
