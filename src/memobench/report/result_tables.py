"""The report's tables, built from :class:`~memobench.report.runs.Run` summaries.

- :func:`main_table`: rows = condition (policy x replan interval [x oracle]),
  columns = SR, MSR, MUR, MCR per memory type plus their macro average;
- :func:`wilson_table`: the same cells as 95% Wilson intervals (the macro
  average is a mean of proportions, not a binomial rate, so it has none);
- :func:`task_table`: RoboMemArena-style per task: SR, CSR (mean per-episode share of
  required checkpoints), TSR (``stage_success_rate``), ``average_score_pct``, legacy
  ``goal_success_rate_pct``, beside the task's chance level (what a memoryless guess
  succeeds at, from the suite's task file: the one number not from the ledgers);
- :func:`failure_table`: failure-taxonomy counts per task and condition;
- :func:`violation_table`: which commitments were broken, per task and condition;
- :func:`binding_table`: successes per binding value (which drawer, which cued item), per
  task and condition, beside that value's share of the episodes.

Every number comes from :func:`memobench.metrics.aggregate.summarize`.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from memobench.core.records import FailureClass
from memobench.report.runs import Run, memory_types_present, tasks_present
from memobench.report.table_formats import DASH, Table, interval, pct

MAIN_METRICS: tuple[str, ...] = ("SR", "MSR", "MUR", "MCR")


def _has_oracle(runs: Sequence[Run]) -> bool:
    return any(run.condition.memory_oracle for run in runs)


def condition_cells(run: Run, with_oracle: bool) -> tuple[list[str], list[Any]]:
    """(display cells, CSV cells) identifying a run: policy, k [, oracle]."""
    c = run.condition
    display = [c.policy, c.k] + ([c.memory_oracle or "none"] if with_oracle else [])
    raw: list[Any] = [c.policy, c.replan_steps, c.replan_kept] + ([c.memory_oracle or ""] if with_oracle else [])
    return display, raw


def condition_header(with_oracle: bool) -> tuple[list[str], list[str]]:
    """(display header, CSV header) of :func:`condition_cells`."""
    display = ["policy", "k"] + (["oracle"] if with_oracle else [])
    raw = ["policy", "replan_steps", "effective_replan_steps"] + (["memory_oracle"] if with_oracle else [])
    return display, raw


def main_table(runs: Sequence[Run]) -> Table:
    """SR/MSR/MUR/MCR (%) per memory type and macro average, one row per condition."""
    types = memory_types_present(runs)
    oracle = _has_oracle(runs)
    id_display, id_raw = condition_header(oracle)
    header = [*id_display, "episodes", "tasks"] + [m for _ in [*types, "macro"] for m in MAIN_METRICS]
    csv_header = [*id_raw, "episodes", "missing_episodes", "tasks"] + [
        f"{g}_{m}" for g in [*types, "macro"] for m in MAIN_METRICS
    ]
    rows, csv_rows = [], []
    for run in runs:
        display, raw = condition_cells(run, oracle)
        s = run.summary
        values: list[float | None] = []
        for mt in types:
            group = s["memory_types"].get(mt)
            values += [group[m]["value"] if group else None for m in MAIN_METRICS]
        values += [s["macro"][m] for m in MAIN_METRICS]
        tasks = len({r.task_id for r in run.table_records})
        rows.append([*display, run.episodes_label, str(tasks), *map(pct, values)])
        csv_rows.append([*raw, s["episodes"], run.missing_episodes, tasks, *values])
    groups = [("", len(id_display) + 2)] + [(g, len(MAIN_METRICS)) for g in [*types, "macro"]]
    notes = (
        "Rates in %. SR: task success; MSR/MUR/MCR: storage/update/compression checkpoint "
        "completion (prefix completion). Macro: unweighted mean over the memory types where the "
        f"metric is defined; {chr(0x2013)}: undefined (no episode or no checkpoint of that op). "
        "tasks: the tasks the run has episodes of; rows over different tasks are not comparable. "
        "N missing: episodes its run.json plans (tasks x episodes per task) that its ledger lacks, "
        "a run stopped before its end."
    )
    return Table("main", "Main results", header, rows, csv_header, csv_rows, groups, notes)


def wilson_table(runs: Sequence[Run]) -> Table:
    """95% Wilson intervals (%) of every per-type cell of :func:`main_table`, with k/n in the CSV."""
    types = memory_types_present(runs)
    oracle = _has_oracle(runs)
    id_display, id_raw = condition_header(oracle)
    header = [*id_display, "episodes"] + [m for _ in types for m in MAIN_METRICS]
    csv_header = [*id_raw, "episodes"] + [
        f"{mt}_{m}_{part}" for mt in types for m in MAIN_METRICS for part in ("k", "n", "lo", "hi")
    ]
    rows, csv_rows = [], []
    for run in runs:
        display, raw = condition_cells(run, oracle)
        s = run.summary
        cells, raw_cells = [], []
        for mt in types:
            group = s["memory_types"].get(mt)
            for m in MAIN_METRICS:
                rate = group[m] if group else {"k": 0, "n": 0, "ci95": [None, None]}
                lo, hi = rate["ci95"]
                cells.append(interval(lo, hi))
                raw_cells += [rate["k"], rate["n"], lo, hi]
        rows.append([*display, str(s["episodes"]), *cells])
        csv_rows.append([*raw, s["episodes"], *raw_cells])
    groups = [("", len(id_display) + 1)] + [(mt, len(MAIN_METRICS)) for mt in types]
    notes = (
        "95% Wilson score intervals in %, pooled over the type's episodes (SR) or checkpoint "
        "instances (MSR/MUR/MCR). The macro average is a mean of proportions and has no "
        "binomial interval, so it is not listed."
    )
    return Table("main_wilson", "Main results: 95% Wilson intervals", header, rows, csv_header, csv_rows, groups, notes)


TASK_METRICS: tuple[tuple[str, str], ...] = (
    ("SR", "SR"),
    ("CSR", "CSR"),
    ("TSR", "TSR"),
    ("average_score_pct", "avg score"),
    ("goal_success_rate_pct", "goal_success_rate_pct"),
)


def _task_cells(runs: Sequence[Run], oracle: bool):
    """(task id, the run's task summary, display cells, raw cells) per task present, per run that ran it."""
    for task_id in tasks_present(runs):
        for run in runs:
            t = run.summary["tasks"].get(task_id)
            if t is not None:
                yield (task_id, t, *condition_cells(run, oracle))


@lru_cache(maxsize=1)
def _suite_chance_levels() -> dict[str, float]:
    from memobench.core.suite import Suite

    return {task.id: task.spec.chance for task in Suite.load(arena=True)}


def chance_level(task_id: str) -> float | None:
    """The success rate of a memoryless guess at ``task_id`` (its task file's chance level);
    None for a task the installed suite does not have."""
    return _suite_chance_levels().get(task_id)


def task_table(runs: Sequence[Run]) -> Table:
    """Per task and condition: the task's chance level, episodes, SR, CSR, TSR, average score,
    legacy goal success rate."""
    oracle = _has_oracle(runs)
    id_display, id_raw = condition_header(oracle)
    header = ["task", "memory", "chance", *id_display, "episodes", *(label for _, label in TASK_METRICS)]
    csv_header = [
        "task_id",
        "memory_type",
        "chance",
        *id_raw,
        "episodes",
        "SR",
        "CSR",
        "TSR",
        "stage_success_rate",
        "average_score_pct",
        "goal_success_rate_pct",
    ]
    rows, csv_rows = [], []
    for task_id, t, display, raw in _task_cells(runs, oracle):
        sr, csr, tsr = t["SR"]["value"], t["CSR"]["value"], t["TSR"]["value"]
        avg, goal = t["average_score_pct"], t["goal_success_rate_pct"]
        chance = chance_level(task_id)
        rows.append(
            [
                task_id,
                t["memory_type"],
                pct(chance),
                *display,
                str(t["episodes"]),
                pct(sr),
                pct(csr),
                pct(tsr),
                pct(None if avg is None else avg / 100),
                pct(None if goal is None else goal / 100),
            ]
        )
        csv_rows.append(
            [task_id, t["memory_type"], chance, *raw, t["episodes"], sr, csr, tsr, t["stage_success_rate"], avg, goal]
        )
    notes = (
        "RoboMemArena-style, in %. Chance: the task's chance level, the success rate of a memoryless "
        f"guess ({DASH} for a task the installed suite does not have). CSR: per episode the share of "
        "required checkpoints completed, "
        "averaged over the task's episodes (also the legacy goal_success_rate_pct); TSR "
        "(stage_success_rate): episodes with every required stage complete and no violation in the "
        "monitor windows; avg score: completed / all checkpoints, optional included."
    )
    return Table("per_task", "Per-task results", header, rows, csv_header, csv_rows, notes=notes)


def failure_table(runs: Sequence[Run]) -> Table:
    """Failure-taxonomy counts per task and condition (episodes, successes, each class)."""
    oracle = _has_oracle(runs)
    id_display, id_raw = condition_header(oracle)
    classes = [fc.value for fc in FailureClass]
    header = ["task", "memory", *id_display, "episodes", "success", *classes]
    csv_header = ["task_id", "memory_type", *id_raw, "episodes", "successes", *classes]
    rows, csv_rows = [], []
    for task_id, t, display, raw in _task_cells(runs, oracle):
        counts = [t["failures"][fc] for fc in classes]
        successes = t["SR"]["k"]
        rows.append([task_id, t["memory_type"], *display, str(t["episodes"]), str(successes), *map(str, counts)])
        csv_rows.append([task_id, t["memory_type"], *raw, t["episodes"], successes, *counts])
    notes = (
        "Episodes per failure class (failure taxonomy): an adapter or env error first, then a "
        "violation (over_execution), else the first missed required checkpoint decides by its op: "
        "storage_failure, compression_failure, stale_update (the task's first update checkpoint) or "
        "late_stale (a later one); execution_failure when none was missed."
    )
    return Table("failures", "Failure taxonomy per task", header, rows, csv_header, csv_rows, notes=notes)


def violation_table(runs: Sequence[Run]) -> Table | None:
    """Episodes per broken commitment (the ledger's ``violation.name``, ``extra_pour`` included)
    per task and condition, with the earliest and latest step; None when no episode broke one."""
    oracle = _has_oracle(runs)
    id_display, id_raw = condition_header(oracle)
    rows, csv_rows = [], []
    for run in runs:
        display, raw = condition_cells(run, oracle)
        steps: dict[tuple[str, str, str], list[int]] = {}
        for r in run.table_records:
            if r.violation is not None:
                steps.setdefault((r.task_id, r.memory_type.value, r.violation.name), []).append(r.violation.step)
        for (task_id, memory, name), at in sorted(steps.items()):
            rows.append([task_id, memory, *display, name, str(len(at)), f"{min(at)}-{max(at)}"])
            csv_rows.append([task_id, memory, *raw, name, len(at), min(at), max(at)])
    if not rows:
        return None
    header = ["task", "memory", *id_display, "violation", "episodes", "steps"]
    csv_header = ["task_id", "memory_type", *id_raw, "violation", "episodes", "first_step", "last_step"]
    notes = (
        "Commitments broken (each ends its episode as over_execution): the task's violations "
        "(`memobench tasks show`) and the extra-pour monitor; steps: the earliest and latest control "
        "step at which one was broken."
    )
    return Table("violations", "Violations per task", header, rows, csv_header, csv_rows, notes=notes)


def binding_label(binding: dict[str, Any]) -> str:
    """A binding as display text: ``drawer=top`` (variables sorted, joined by ``, ``)."""
    return ", ".join(f"{name}={value}" for name, value in sorted(binding.items()))


def binding_table(runs: Sequence[Run]) -> Table | None:
    """Per task with a binding, condition and binding value: episodes, their share of the
    task's episodes, successes and SR; None when no episode had a binding.

    Why: the seeds draw each binding independently, so twenty episodes need not hold the
    values equally often, and a policy that always goes to one drawer (memory or not)
    scores that drawer's share. Its successes then sit on one value; a policy that
    remembers spreads them over all.
    """
    oracle = _has_oracle(runs)
    id_display, id_raw = condition_header(oracle)
    rows, csv_rows = [], []
    for task_id in tasks_present(runs):
        for run in runs:
            records = [r for r in run.table_records if r.task_id == task_id]
            by_value: dict[str, list[bool]] = {}
            for r in records:
                if r.binding:
                    by_value.setdefault(binding_label(r.binding), []).append(r.success)
            if not by_value:
                continue
            display, raw = condition_cells(run, oracle)
            memory = records[0].memory_type.value
            for label, outcomes in sorted(by_value.items()):
                n, k = len(outcomes), sum(outcomes)
                share, sr = n / len(records), k / n
                rows.append([task_id, memory, *display, label, str(n), pct(share), str(k), pct(sr)])
                csv_rows.append([task_id, memory, *raw, label, n, share, k, sr])
    if not rows:
        return None
    header = ["task", "memory", *id_display, "binding", "episodes", "share", "successes", "SR"]
    csv_header = ["task_id", "memory_type", *id_raw, "binding", "episodes", "share", "successes", "SR"]
    notes = (
        "Per binding value (e.g. which drawer holds the item), in %. Share: the value's part of the "
        "task's episodes in this condition; the seeds draw it independently per episode, so it need "
        "not be even. A policy with a fixed preference (always the top drawer), memory or not, "
        "succeeds on one value only and its task SR is at most that value's share; a policy that "
        "remembers succeeds across values."
    )
    return Table("bindings", "Successes per binding value", header, rows, csv_header, csv_rows, notes=notes)
