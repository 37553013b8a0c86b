"""Paired comparison of two runs on the episodes both ran (same task and seed).

Per task, per memory type (when the shared episodes span more than one), and
over all shared episodes, for each metric: the mean of run A, of run B, the
difference B - A and a two-sided paired test:

- ``SR`` (success) and ``TSR`` (every required stage complete) are binary:
  exact McNemar test (:func:`memobench.metrics.paired.mcnemar_exact`);
- ``CSR`` (stage score), ``avg_score`` and ``MSR`` / ``MUR`` / ``MCR`` (the
  episode's share of storage / update / compression checkpoints completed) are
  per-episode rates: paired bootstrap of the mean difference
  (:func:`memobench.metrics.paired.paired_bootstrap`, fixed seed), with a 95%
  percentile interval.

Within a task every episode has the same checkpoints, so these means equal the
task's values in the summary (CSR is by definition the mean stage score). In a
memory type's row and the ``all`` row every episode weighs the same, which differs
from the pooled checkpoint rates when tasks differ in checkpoint counts, and from
the summary's CSR (a mean over tasks) when tasks differ in episode counts.
Significance is flagged at 0.05 per test, uncorrected for the number of tests.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from memobench.core.records import EpisodeRecord
from memobench.core.spec import ArenaFamily, MemoryOp, MemoryType
from memobench.metrics.paired import (
    BOOTSTRAP_SAMPLES,
    BOOTSTRAP_SEED,
    mcnemar_exact,
    paired_bootstrap,
)
from memobench.report.oracle import shared_episodes
from memobench.report.runs import task_sort_key
from memobench.report.table_formats import DASH, Table, pct, to_csv, to_markdown

BINARY_METRICS = ("SR", "TSR")
RATE_METRICS = ("CSR", "avg_score", "MSR", "MUR", "MCR")
COMPARE_METRICS = BINARY_METRICS + RATE_METRICS
_OP = {"MSR": MemoryOp.STORAGE, "MUR": MemoryOp.UPDATE, "MCR": MemoryOp.COMPRESSION}
ALPHA = 0.05


def episode_value(record: EpisodeRecord, metric: str) -> float | None:
    """The per-episode quantity behind ``metric``; None when the episode has no such checkpoint."""
    if metric == "SR":
        return float(record.success)
    if metric == "TSR":
        return float(record.stages_complete)
    if metric == "CSR":
        return record.stage_score
    if metric == "avg_score":
        return record.average_score
    cps = [cp for cp in record.checkpoints if cp.op is _OP[metric]]
    return sum(cp.completed for cp in cps) / len(cps) if cps else None


@dataclass(frozen=True)
class Comparison:
    """One (task, metric) comparison; rates are fractions, ``difference`` is B - A."""

    task: str  # a task id, a memory type (e.g. "temporal"; an arena family for arena tasks), or "all"
    metric: str
    n: int  # paired episodes with the metric defined
    a: float
    b: float
    difference: float
    p_value: float
    test: str  # "mcnemar" or "bootstrap"
    low: float | None = None
    high: float | None = None

    @property
    def significant(self) -> bool:
        return self.p_value < ALPHA


def compare_records(
    a: Sequence[EpisodeRecord], b: Sequence[EpisodeRecord], samples: int = BOOTSTRAP_SAMPLES, seed: int = BOOTSTRAP_SEED
) -> list[Comparison]:
    """Comparisons per task (suite order), per memory type, then ``all``, for every metric defined.

    Episodes pair by (task, seed); unpaired episodes are ignored. The memory-type rows
    (named by the type's value, MEMOBench types before arena families) appear only when
    the shared episodes span more than one type: with one they would repeat ``all``.
    """
    shared_a, shared_b = shared_episodes(a, b)
    tasks = sorted({r.task_id for r in shared_a}, key=task_sort_key)
    present = {r.memory_type for r in shared_a}
    types = [t.value for t in (*MemoryType, *ArenaFamily) if t in present]
    scopes = [*tasks, *(types if len(types) > 1 else []), "all"]
    out = []
    for scope in scopes:
        pairs = [(x, y) for x, y in zip(shared_a, shared_b, strict=True) if scope in ("all", x.task_id, x.memory_type)]
        for metric in COMPARE_METRICS:
            values = [(episode_value(x, metric), episode_value(y, metric)) for x, y in pairs]
            values = [(va, vb) for va, vb in values if va is not None and vb is not None]
            if not values:
                continue
            va, vb = [v[0] for v in values], [v[1] for v in values]
            mean_a, mean_b = sum(va) / len(va), sum(vb) / len(vb)
            if metric in BINARY_METRICS:
                result = mcnemar_exact([bool(v) for v in va], [bool(v) for v in vb])
                test = "mcnemar"
            else:
                result = paired_bootstrap(va, vb, samples=samples, seed=seed)
                test = "bootstrap"
            out.append(
                Comparison(
                    scope,
                    metric,
                    len(values),
                    mean_a,
                    mean_b,
                    mean_b - mean_a,
                    result.p_value,
                    test,
                    result.low,
                    result.high,
                )
            )
    return out


def _signed_points(value: float) -> str:
    return f"{100.0 * value:+.1f}"


def comparison_table(rows: Sequence[Comparison], label_a: str, label_b: str) -> Table:
    """The comparisons as a table (rates in %, difference in points, p with 3 decimals)."""
    header = ["task", "metric", "n", "A", "B", "B-A", "95% CI", "p", "test", "sig"]
    csv_header = ["task", "metric", "n", "a", "b", "difference", "low", "high", "p_value", "test", "significant"]
    display, raw = [], []
    for c in rows:
        ci = DASH if c.low is None or c.high is None else f"{_signed_points(c.low)}..{_signed_points(c.high)}"
        display.append(
            [
                c.task,
                c.metric,
                str(c.n),
                pct(c.a),
                pct(c.b),
                _signed_points(c.difference),
                ci,
                f"{c.p_value:.3f}",
                c.test,
                "*" if c.significant else "",
            ]
        )
        raw.append([c.task, c.metric, c.n, c.a, c.b, c.difference, c.low, c.high, c.p_value, c.test, c.significant])
    notes = (
        f"A = {label_a}, B = {label_b}; paired on (task, seed). SR/TSR: exact McNemar; other rates: paired "
        f"bootstrap ({BOOTSTRAP_SAMPLES} resamples of episodes, seed {BOOTSTRAP_SEED}) with a 95% percentile "
        f"interval. *: p < {ALPHA} (per test, not corrected for multiple comparisons). Episodes are the unit: "
        "a test says whether these two runs differ on these seeds, not whether another training run of either "
        "policy would (compare training recipes over several training seeds)."
    )
    return Table("compare", f"Paired comparison: {label_b} vs {label_a}", header, display, csv_header, raw, notes=notes)


def comparisons_json(rows: Sequence[Comparison], label_a: str, label_b: str) -> dict:
    return {
        "a": label_a,
        "b": label_b,
        "alpha": ALPHA,
        "comparisons": [{**asdict(c), "significant": c.significant} for c in rows],
    }


def write_comparison(out: Path, rows: Sequence[Comparison], table: Table, label_a: str, label_b: str) -> None:
    """``compare.md``, ``compare.csv`` and ``compare.json`` of ``rows`` (``table``: their table) in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "compare.md").write_text(to_markdown(table))
    (out / "compare.csv").write_text(to_csv(table))
    (out / "compare.json").write_text(json.dumps(comparisons_json(rows, label_a, label_b), indent=2) + "\n")
