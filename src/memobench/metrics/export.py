"""Derived result files: ``summary.json``, ``task_summary.csv``, ``episodes.csv``.

All three files are rebuildable from the ledger and written atomically: a
reader sees the previous complete file or the new complete file, never half.
CSV cells hold fractions in [0, 1] except ``*_pct`` columns; an undefined
value is an empty cell.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memobench.core.records import CheckpointResult, EpisodeRecord, FailureClass
from memobench.evaluation.atomic_file import atomic_write_text
from memobench.metrics.aggregate import METRICS, summarize

SUMMARY_JSON = "summary.json"
MEMOBENCH_SUMMARY_JSON = "memobench_summary.json"  # its name in a RoboMemArena-protocol run folder
TASK_SUMMARY_CSV = "task_summary.csv"
EPISODES_CSV = "episodes.csv"

TASK_COLUMNS: tuple[str, ...] = (
    "task_id",
    "memory_type",
    "episodes",
    "SR",
    "SR_lo",
    "SR_hi",
    *METRICS[1:],
    "average_score_pct",
    "goal_success_rate_pct",
    "adapter_errors",
    *(fc.value for fc in FailureClass),
)
EPISODE_COLUMNS: tuple[str, ...] = (
    "task_id",
    "episode",
    "seed",
    "status",
    "success",
    "failure_class",
    "end_reason",
    "steps",
    "stage_score",
    "binding",
    "checkpoint_steps",
)


def write_summary(
    records: Sequence[EpisodeRecord], out_dir: str | os.PathLike[str], summary_json: str = SUMMARY_JSON
) -> dict[str, Any]:
    """Write the three derived files into ``out_dir`` (created if missing); return the summary.

    ``summary.json`` (or ``summary_json``: a RoboMemArena-protocol run keeps that name for
    RoboMemArena's own file) is :func:`~memobench.metrics.aggregate.summarize` with indent 2;
    ``task_summary.csv`` has :data:`TASK_COLUMNS` (one row per task, sorted by id);
    ``episodes.csv`` has :data:`EPISODE_COLUMNS` (one row per record, sorted by
    task id then episode).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summary = summarize(records)
    atomic_write_text(out / summary_json, json.dumps(summary, indent=2) + "\n")
    atomic_write_text(out / TASK_SUMMARY_CSV, _csv_text(TASK_COLUMNS, _task_rows(summary)))
    ordered = sorted(records, key=lambda r: (r.task_id, r.episode))
    atomic_write_text(out / EPISODES_CSV, _csv_text(EPISODE_COLUMNS, map(_episode_row, ordered)))
    return summary


def _csv_text(columns: Sequence[str], rows: Any) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def _cell(value: Any) -> Any:
    """CSV cell: None -> empty, bool -> true/false, anything else as is."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def _task_rows(summary: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for task_id, t in summary["tasks"].items():
        lo, hi = t["SR"]["ci95"]
        row = {
            "task_id": task_id,
            "memory_type": t["memory_type"],
            "episodes": t["episodes"],
            "SR_lo": lo,
            "SR_hi": hi,
            "average_score_pct": t["average_score_pct"],
            "goal_success_rate_pct": t["goal_success_rate_pct"],
            "adapter_errors": t["adapter_errors"],
            **{name: t[name]["value"] for name in METRICS},
            **t["failures"],
        }
        rows.append({col: _cell(row[col]) for col in TASK_COLUMNS})
    return rows


def checkpoint_steps(checkpoints: Sequence[CheckpointResult]) -> str:
    """Completion steps in checkpoint order, ``;``-joined: ``"12;45;-"``.

    ``-`` marks a checkpoint that did not complete, ``?`` one that completed
    without a recorded step.
    """
    cells = []
    for cp in sorted(checkpoints, key=lambda c: c.index):
        if not cp.completed:
            cells.append("-")
        else:
            cells.append("?" if cp.step is None else str(cp.step))
    return ";".join(cells)


def _episode_row(record: EpisodeRecord) -> dict[str, Any]:
    row = {
        "task_id": record.task_id,
        "episode": record.episode,
        "seed": record.seed,
        "status": record.status.value,
        "success": record.success,
        "failure_class": record.failure_class.value if record.failure_class else None,
        "end_reason": record.end_reason,
        "steps": record.steps,
        "stage_score": record.stage_score,
        "binding": json.dumps(record.binding, separators=(",", ":"), sort_keys=True),
        "checkpoint_steps": checkpoint_steps(record.checkpoints),
    }
    return {col: _cell(row[col]) for col in EPISODE_COLUMNS}
