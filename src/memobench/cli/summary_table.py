"""The results table ``memobench eval`` prints at the end of a run."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from memobench.metrics.aggregate import METRICS


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100.0 * value:.1f}"


def summary_table(summary: dict[str, Any]) -> Table:
    """A Rich table of ``summary`` (:func:`memobench.metrics.aggregate.summarize`).

    Rows: one per task, one per memory type, then the macro average. Columns
    SR MSR MUR MCR CSR TSR as percentages with one decimal; ``-`` when undefined.
    """
    table = Table(title=f"MEMOBench results ({summary['episodes']} episodes)")
    table.add_column("task / type")
    table.add_column("memory", style="dim")
    table.add_column("episodes", justify="right")
    for name in METRICS:
        table.add_column(name, justify="right")

    def add(label: str, memory: str, group: dict[str, Any], style: str | None = None) -> None:
        cells = [_pct(group[name]["value"]) for name in METRICS]
        table.add_row(label, memory, str(group["episodes"]), *cells, style=style)

    for task_id, t in summary["tasks"].items():
        add(task_id, t["memory_type"], t)
    table.add_section()
    for mt, group in summary["memory_types"].items():
        n_tasks = group["tasks"]
        add(f"{mt} ({n_tasks} task{'' if n_tasks == 1 else 's'})", mt, group, style="bold")
    table.add_section()
    macro = summary["macro"]
    types = {mt for name in METRICS for mt in macro["types"][name]}
    table.add_row("macro", f"{len(types)} types", "", *(_pct(macro[name]) for name in METRICS), style="bold")
    return table
