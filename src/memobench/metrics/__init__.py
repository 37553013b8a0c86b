"""Metrics: pure functions of ledger records (PROTOCOL.md, Metrics and Failure taxonomy).

Per episode -> per task -> per memory type -> macro average, with 95% Wilson
intervals on every rate, plus the derived result files and the CLI table.
"""

from memobench.metrics.aggregate import (
    METRICS,
    GroupCounts,
    group_by_memory_type,
    group_by_task,
    macro_average,
    summarize,
)
from memobench.metrics.export import (
    EPISODE_COLUMNS,
    TASK_COLUMNS,
    checkpoint_steps,
    format_table,
    write_summary,
)
from memobench.metrics.rates import Rate, wilson_interval
from memobench.metrics.taxonomy import classify_failure, failure_counts, record_failure_class

__all__ = [
    "EPISODE_COLUMNS",
    "METRICS",
    "TASK_COLUMNS",
    "GroupCounts",
    "Rate",
    "checkpoint_steps",
    "classify_failure",
    "failure_counts",
    "format_table",
    "group_by_memory_type",
    "group_by_task",
    "macro_average",
    "record_failure_class",
    "summarize",
    "wilson_interval",
    "write_summary",
]
