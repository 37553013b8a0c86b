"""RoboMemArena's scoring and its four result files, computed from ledger records (docs/arena.md).

Per episode: ``score`` = completed counted (required) stages / counted stages;
``stage_success`` = every counted stage done and, for a counting task, the
extra-pour monitor run to its end without an extra pour (``tsr_success`` is the
same value under RoboMemArena's other column name). ``failure_reason`` is empty
on success, else ``extra_pour``, ``incomplete_stage`` or ``monitor_incomplete``,
in that order of precedence. Per task: CSR = mean score (also written as the
legacy ``goal_success_rate_pct``), TSR = mean stage success; the aggregate is
the unweighted macro mean over tasks.

The files, written beside the ledger: ``episodes.tsv``, ``task_summary.tsv``,
``summary.json`` (a list of per-task objects) and ``aggregate.json``.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memobench.core.records import EpisodeRecord
from memobench.core.suite import Task, arena_number
from memobench.core.tracker import EXTRA_POUR
from memobench.evaluation.atomic_file import atomic_write_text
from memobench.evaluation.protocol import Protocol

EPISODES_TSV = "episodes.tsv"
TASK_SUMMARY_TSV = "task_summary.tsv"
ARENA_SUMMARY_JSON = "summary.json"
AGGREGATE_JSON = "aggregate.json"

EPISODE_COLUMNS = (
    "task_id", "ep", "seed", "score_pct", "tsr_success", "stage_success", "goal", "extra_pour_detected",
    "pour_1_step", "pour_2_step", "extra_monitor_end_step", "failure_reason", "prompt", "video_dir",
)  # fmt: skip
TASK_COLUMNS = (
    "task_id", "num_trials", "seed_start", "average_score_pct", "tsr_success_rate_pct",
    "stage_success_rate_pct", "goal_success_rate_pct", "prompt", "video_dir",
)  # fmt: skip

INCOMPLETE_STAGE = "incomplete_stage"
MONITOR_INCOMPLETE = "monitor_incomplete"


@dataclass(frozen=True)
class ArenaEpisode:
    """One episode scored as RoboMemArena scores it."""

    task_id: int  # RoboMemArena's number, 1-26
    ep: int
    seed: int
    score: float  # completed counted stages / counted stages
    stage_success: bool
    extra_pour_detected: bool
    pour_steps: tuple[int | None, int | None]  # steps at which pours 1 and 2 completed
    extra_monitor_end_step: int | None  # last step of the extra-pour monitor (counting tasks that poured twice)
    failure_reason: str  # "" on success

    @property
    def goal(self) -> float:
        """RoboMemArena's legacy ``goal`` column: the episode's score (CSR)."""
        return self.score


def _pour_steps(task: Task, record: EpisodeRecord) -> tuple[int | None, int | None]:
    """Completion steps of the checkpoints that count pours 1 and 2 (``pour_count(...) >= n``)."""
    steps: list[int | None] = [None, None]
    for cp, result in zip(task.spec.checkpoints, record.checkpoints, strict=True):
        for n in (1, 2):
            if "pour_count(" in cp.predicate and cp.predicate.rstrip().endswith(f">= {n}"):
                steps[n - 1] = result.step
    return steps[0], steps[1]


def score_episode(task: Task, record: EpisodeRecord, protocol: Protocol) -> ArenaEpisode:
    """RoboMemArena's per-episode numbers of one ledger record of an arena task."""
    number = arena_number(task.id)
    if number is None:
        raise ValueError(f"{task.id} is not an arena task (ids A01-A26)")
    counted = [r for r in record.checkpoints if not r.optional]
    score = sum(r.completed for r in counted) / len(counted)
    all_stages = all(r.completed for r in counted)
    pour_1, pour_2 = _pour_steps(task, record)
    extra = record.violation is not None and record.violation.name == EXTRA_POUR
    counting = task.spec.counting
    if counting is not None and not protocol.fail_on_extra_pour:
        extra = record.pour_counts.get(f"{counting.object}->{counting.target}", 0) > counting.required
    monitor_end = pour_2 + protocol.extra_pour_monitor_steps if counting is not None and pour_2 is not None else None
    monitor_done = counting is None or (monitor_end is not None and record.steps - 1 >= monitor_end)
    if extra and protocol.fail_on_extra_pour:
        reason = EXTRA_POUR
    elif not all_stages:
        reason = INCOMPLETE_STAGE
    elif not monitor_done:
        reason = MONITOR_INCOMPLETE
    else:
        reason = ""
    return ArenaEpisode(
        task_id=number,
        ep=record.episode,
        seed=record.seed,
        score=score,
        stage_success=reason == "",
        extra_pour_detected=extra,
        pour_steps=(pour_1, pour_2),
        extra_monitor_end_step=monitor_end,
        failure_reason=reason,
    )


def _pct(x: float) -> float:
    return round(100 * x, 2)


def _video_dir(out_root: Path, number: int, videos: bool) -> str:
    return str(out_root / "videos" / f"task{number}") if videos else ""


def arena_results(
    records: Sequence[EpisodeRecord], tasks: Sequence[Task], protocol: Protocol, out_root: Path, videos: bool = False
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """(episode rows, per-task rows, aggregate) in RoboMemArena's columns, for the arena tasks among ``tasks``.

    Records of other tasks are ignored; a task without records is left out.
    """
    by_id = {t.id: t for t in tasks if arena_number(t.id) is not None}
    episodes: dict[str, list[tuple[ArenaEpisode, EpisodeRecord]]] = {}
    for record in sorted(records, key=lambda r: (r.task_id, r.episode)):
        if record.task_id in by_id:
            episodes.setdefault(record.task_id, []).append(
                (score_episode(by_id[record.task_id], record, protocol), record)
            )
    episode_rows, task_rows = [], []
    for task_id, scored in sorted(episodes.items()):
        task = by_id[task_id]
        number = scored[0][0].task_id
        prompt, video_dir = task.spec.instruction, _video_dir(out_root, number, videos)
        for e, _ in scored:
            episode_rows.append({
                "task_id": number, "ep": e.ep, "seed": e.seed, "score_pct": _pct(e.score),
                "tsr_success": int(e.stage_success), "stage_success": int(e.stage_success), "goal": round(e.goal, 4),
                "extra_pour_detected": int(e.extra_pour_detected), "pour_1_step": e.pour_steps[0],
                "pour_2_step": e.pour_steps[1], "extra_monitor_end_step": e.extra_monitor_end_step,
                "failure_reason": e.failure_reason, "prompt": prompt, "video_dir": video_dir,
            })  # fmt: skip
        n = len(scored)
        csr = sum(e.score for e, _ in scored) / n
        tsr = sum(e.stage_success for e, _ in scored) / n
        task_rows.append({
            "task_id": number, "num_trials": n, "seed_start": protocol.seed, "average_score_pct": _pct(csr),
            "tsr_success_rate_pct": _pct(tsr), "stage_success_rate_pct": _pct(tsr),
            "goal_success_rate_pct": _pct(csr), "prompt": prompt, "video_dir": video_dir,
            "family": task.spec.family.value,
        })  # fmt: skip
    return episode_rows, task_rows, aggregate(task_rows, protocol.seed)


def aggregate(task_rows: Sequence[dict[str, Any]], seed_start: int) -> dict[str, Any]:
    """RoboMemArena's ``aggregate.json``: unweighted macro means over the tasks' rates."""

    def macro(key: str) -> float | None:
        return round(sum(r[key] for r in task_rows) / len(task_rows), 2) if task_rows else None

    return {
        "num_tasks": len(task_rows),
        "num_episodes": sum(r["num_trials"] for r in task_rows),
        "seed_start": seed_start,
        "macro_average_score_pct": macro("average_score_pct"),
        "macro_tsr_success_rate_pct": macro("tsr_success_rate_pct"),
        "macro_goal_success_rate_pct": macro("goal_success_rate_pct"),
        "num_goal_scored_tasks": len(task_rows),
    }


def _tsv(columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(columns), delimiter="\t", lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    writer.writerows({k: ("" if v is None else v) for k, v in row.items()} for row in rows)
    return buf.getvalue()


def write_arena_files(
    records: Sequence[EpisodeRecord],
    tasks: Sequence[Task],
    protocol: Protocol,
    out_dir: str | os.PathLike[str],
    videos: bool = False,
) -> dict[str, Any]:
    """Write RoboMemArena's four files into ``out_dir`` (atomically, rebuildable from the ledger);
    return the aggregate."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    episode_rows, task_rows, agg = arena_results(records, tasks, protocol, out, videos)
    atomic_write_text(out / EPISODES_TSV, _tsv(EPISODE_COLUMNS, episode_rows))
    atomic_write_text(out / TASK_SUMMARY_TSV, _tsv(TASK_COLUMNS, task_rows))
    summary = [{k: r[k] for k in TASK_COLUMNS} | {"family": r["family"]} for r in task_rows]
    atomic_write_text(out / ARENA_SUMMARY_JSON, json.dumps(summary, indent=2) + "\n")
    atomic_write_text(out / AGGREGATE_JSON, json.dumps(agg, indent=2) + "\n")
    return agg
