"""Metrics: pure functions of ledger records (the paper's metrics and failure taxonomy).

Per episode -> per task -> per memory type -> macro average, with a 95% interval
on every value (Wilson for the pooled rates, a normal approximation for CSR's
means of per-episode scores), plus the derived result files.
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
    write_summary,
)
from memobench.metrics.rates import MeanScore, Rate, wilson_interval

__all__ = [
    "EPISODE_COLUMNS",
    "METRICS",
    "TASK_COLUMNS",
    "GroupCounts",
    "MeanScore",
    "Rate",
    "checkpoint_steps",
    "group_by_memory_type",
    "group_by_task",
    "macro_average",
    "summarize",
    "wilson_interval",
    "write_summary",
]
