"""The arena's table in a report: RoboMemArena's numbers per task, per family and macro over tasks.

Scored by :mod:`memobench.metrics.arena` from each run's ledger records of arena tasks, with
the protocol its ``run.json`` stored (the extra-pour monitor length, strict rejection, seed start).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memobench.core.suite import Suite
from memobench.evaluation.protocol import Protocol, stored_protocol
from memobench.metrics.arena import arena_results
from memobench.report.runs import Run
from memobench.report.table_formats import Table


def _protocol(run: Run) -> Protocol:
    fields = stored_protocol(run.manifests[0]["protocol"]) if run.manifests else {}
    return Protocol(**{k: v for k, v in fields.items() if k in Protocol.model_fields})


def _mean(rows: Sequence[dict[str, Any]], key: str) -> float:
    return sum(r[key] for r in rows) / len(rows)


def arena_table(runs: Sequence[Run]) -> Table | None:
    """Per condition: each arena task's CSR (average score) and TSR in percent, then per family
    and the macro mean over tasks (unweighted). None when no run has an arena episode."""
    suite = Suite.load(arena=True)
    header = ["condition", "task", "family", "episodes", "CSR %", "TSR %"]
    rows: list[list[str]] = []
    csv_rows: list[list[Any]] = []
    for run in runs:
        if not run.arena_records:
            continue
        tasks = [suite.get(tid) for tid in sorted({r.task_id for r in run.arena_records})]
        _, task_rows, agg = arena_results(run.arena_records, tasks, _protocol(run), run.folders[0])
        label = run.condition.label

        def add(task: str, family: str, episodes: int, csr: float, tsr: float, label: str = label) -> None:
            rows.append([label, task, family, str(episodes), f"{csr:.1f}", f"{tsr:.1f}"])
            csv_rows.append([label, task, family, episodes, round(csr, 2), round(tsr, 2)])

        for r in task_rows:
            add(f"A{r['task_id']:02d}", r["family"], r["num_trials"], r["average_score_pct"], r["tsr_success_rate_pct"])
        for family in sorted({r["family"] for r in task_rows}):
            members = [r for r in task_rows if r["family"] == family]
            episodes = sum(r["num_trials"] for r in members)
            add(f"{family} ({len(members)} tasks)", family, episodes, _mean(members, "average_score_pct"),
                _mean(members, "tsr_success_rate_pct"))  # fmt: skip
        add(f"macro ({agg['num_tasks']} tasks)", "all", agg["num_episodes"], agg["macro_average_score_pct"],
            agg["macro_tsr_success_rate_pct"])  # fmt: skip
    if not rows:
        return None
    return Table(
        name="arena",
        title="RoboMemArena tasks: CSR (average stage score) and TSR per task, family and macro over tasks",
        header=header,
        rows=rows,
        csv_header=["condition", "task", "family", "episodes", "CSR_pct", "TSR_pct"],
        csv_rows=csv_rows,
        notes=(
            "Scored as RoboMemArena scores: CSR = completed counted stages / counted stages, TSR = every counted "
            "stage and, for counting tasks, the extra-pour monitor passed. Family and macro rows are unweighted "
            "means over tasks. The MEMOBench tables leave these tasks out unless --arena-in-tables."
        ),
    )
