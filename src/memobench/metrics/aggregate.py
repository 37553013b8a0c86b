"""Metrics from ledger records: per task -> per memory type -> macro, and overall.

Pure functions of a list of :class:`EpisodeRecord` (the paper's metrics):

- ``SR``  success rate: successful episodes / episodes;
- ``MSR`` / ``MUR`` / ``MCR``: completed / all checkpoint instances with op
  storage / update / compression (optional checkpoints included); undefined
  when the group has no instance of that op;
- ``TSR`` (``stage_success_rate``): episodes with ``stages_complete`` (every
  required checkpoint completed and the monitor windows passed without a
  violation) / episodes;
- ``CSR`` checkpoint success rate (legacy names ``goal_success_rate[_pct]``):
  per episode the share of required checkpoints completed (``stage_score``),
  averaged over a task's episodes; over several tasks, the unweighted mean of
  the tasks' CSRs (RoboMemArena's ``macro_goal_success_rate_pct``), so a task
  with many checkpoints or episodes weighs as much as any other. Its 95%
  interval is :class:`~memobench.metrics.rates.MeanScore`'s normal approximation.

SR, MSR, MUR, MCR and TSR are pooled per memory type and overall (sum of k /
sum of n) with Wilson intervals. The macro average of every metric is the
unweighted mean of the per-type values over the types where it is defined.
Fractions are in [0, 1]; only ``*_pct`` fields are percentages; undefined
values are None in the JSON. Records are assumed unique per (task_id, episode);
:class:`~memobench.evaluation.ledger.Ledger` guarantees that.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memobench.core.records import EpisodeRecord, EpisodeStatus
from memobench.core.spec import MemoryOp, MemoryType
from memobench.core.taxonomy import empty_failure_counts, record_failure_class
from memobench.metrics.rates import MeanScore, Rate, nan_to_none

METRICS: tuple[str, ...] = ("SR", "MSR", "MUR", "MCR", "CSR", "TSR")
OP_METRICS: dict[MemoryOp, str] = {
    MemoryOp.STORAGE: "MSR",
    MemoryOp.UPDATE: "MUR",
    MemoryOp.COMPRESSION: "MCR",
}


@dataclass
class GroupCounts:
    """Counts accumulated over the episodes of a group (task, memory type, all)."""

    episodes: int = 0
    successes: int = 0
    stages_complete: int = 0
    op_done: dict[MemoryOp, int] = field(default_factory=lambda: dict.fromkeys(MemoryOp, 0))
    op_total: dict[MemoryOp, int] = field(default_factory=lambda: dict.fromkeys(MemoryOp, 0))
    # Per-episode CSR (``stage_score``) by task: CSR averages per task first, then over tasks.
    stage_scores: dict[str, list[float]] = field(default_factory=dict)
    average_score_sum: float = 0.0
    steps_sum: int = 0
    failures: dict[str, int] = field(default_factory=empty_failure_counts)
    adapter_errors: int = 0
    env_errors: int = 0
    task_ids: set[str] = field(default_factory=set)

    def add(self, record: EpisodeRecord) -> None:
        """Count one episode into this group."""
        self.episodes += 1
        self.successes += record.success
        self.stages_complete += record.stages_complete
        for cp in record.checkpoints:
            self.op_total[cp.op] += 1
            self.op_done[cp.op] += cp.completed
        self.stage_scores.setdefault(record.task_id, []).append(record.stage_score)
        self.average_score_sum += record.average_score
        self.steps_sum += record.steps
        fc = record_failure_class(record)
        if fc is not None:
            self.failures[fc.value] += 1
        self.adapter_errors += record.status == EpisodeStatus.ADAPTER_ERROR
        self.env_errors += record.status == EpisodeStatus.ENV_ERROR
        self.task_ids.add(record.task_id)

    def rates(self) -> dict[str, Rate | MeanScore]:
        """The six headline metrics, keyed as in :data:`METRICS`: pooled :class:`Rate` s, and
        CSR as the :class:`MeanScore` of the group's tasks."""
        out: dict[str, Rate | MeanScore] = {"SR": Rate(self.successes, self.episodes)}
        for op, name in OP_METRICS.items():
            out[name] = Rate(self.op_done[op], self.op_total[op])
        out["CSR"] = MeanScore.of_tasks(self.stage_scores)
        out["TSR"] = Rate(self.stages_complete, self.episodes)
        return {name: out[name] for name in METRICS}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary of the group: each metric as its ``to_dict()``, None if undefined.

        ``goal_success_rate`` / ``goal_success_rate_pct`` repeat CSR's value (a
        fraction / a percentage) under RoboMemArena's names.
        """
        rates = self.rates()
        n = self.episodes
        csr, tsr = rates["CSR"].value, rates["TSR"].value
        out: dict[str, Any] = {"episodes": n}
        out.update({name: rate.to_dict() for name, rate in rates.items()})
        out.update(
            stage_success_rate=nan_to_none(tsr),
            average_score_pct=100.0 * self.average_score_sum / n if n else None,
            goal_success_rate=nan_to_none(csr),
            goal_success_rate_pct=nan_to_none(100.0 * csr),
            failures=dict(self.failures),
            adapter_errors=self.adapter_errors,
            env_errors=self.env_errors,
            steps=self.steps_sum / n if n else None,
        )
        return out


def group_by_task(records: Iterable[EpisodeRecord]) -> dict[str, GroupCounts]:
    """Counts per task id, sorted by id.

    Raises ValueError when one task id appears with two memory types.
    """
    groups: dict[str, GroupCounts] = {}
    types: dict[str, MemoryType] = {}
    for record in records:
        known = types.setdefault(record.task_id, record.memory_type)
        if known != record.memory_type:
            raise ValueError(
                f"task {record.task_id!r} has records of memory types {known.value!r} "
                f"and {record.memory_type.value!r}; a task has exactly one memory type"
            )
        groups.setdefault(record.task_id, GroupCounts()).add(record)
    return {task_id: groups[task_id] for task_id in sorted(groups)}


def group_by_memory_type(records: Iterable[EpisodeRecord]) -> dict[MemoryType, GroupCounts]:
    """Pooled counts per memory type present in ``records``, in ``MemoryType`` order."""
    groups: dict[MemoryType, GroupCounts] = {}
    for record in records:
        groups.setdefault(record.memory_type, GroupCounts()).add(record)
    return {mt: groups[mt] for mt in MemoryType if mt in groups}


def macro_average(per_type: dict[MemoryType, GroupCounts]) -> dict[str, Any]:
    """Unweighted mean over memory types of each metric, skipping types where it is undefined.

    For CSR this is the mean of the per-type CSRs, each itself a mean over the
    type's tasks (not the mean over all tasks, which is ``overall``'s CSR).

    Returns ``{metric: float | None, ..., "types": {metric: [type, ...]}}``;
    a metric is None when no type defines it.
    """
    out: dict[str, Any] = {}
    used: dict[str, list[str]] = {}
    type_rates = {mt: counts.rates() for mt, counts in per_type.items()}
    for name in METRICS:
        values = {mt: rates[name].value for mt, rates in type_rates.items() if rates[name].defined}
        out[name] = math.fsum(values.values()) / len(values) if values else None
        used[name] = [mt.value for mt in values]
    out["types"] = used
    return out


def summarize(records: Sequence[EpisodeRecord]) -> dict[str, Any]:
    """JSON-serialisable summary of ``records``.

    Returns ``{"episodes", "tasks": {task_id: {...}}, "memory_types": {type: {...}},
    "macro": {...}, "overall": {...}}`` with tasks sorted by id and types in
    ``MemoryType`` order. Each task entry adds ``"memory_type"``; each type entry
    and ``overall`` add ``"tasks"`` (number of distinct tasks); ``overall`` also
    has ``macro_goal_success_rate_pct``, its CSR (the mean over all tasks) in
    percent. Undefined values are None. Raises ValueError when a task id appears
    with two memory types.
    """
    records = list(records)
    per_task = group_by_task(records)
    per_type = group_by_memory_type(records)
    overall = GroupCounts()
    for record in records:
        overall.add(record)
    task_types = {r.task_id: r.memory_type.value for r in records}

    tasks = {tid: {"memory_type": task_types[tid], **c.to_dict()} for tid, c in per_task.items()}
    types = {mt.value: {"tasks": len(c.task_ids), **c.to_dict()} for mt, c in per_type.items()}
    return {
        "episodes": len(records),
        "tasks": tasks,
        "memory_types": types,
        "macro": macro_average(per_type),
        "overall": _overall_entry(overall),
    }


def _overall_entry(overall: GroupCounts) -> dict[str, Any]:
    entry = {"tasks": len(overall.task_ids), **overall.to_dict()}
    entry["macro_goal_success_rate_pct"] = entry["goal_success_rate_pct"]
    return entry
