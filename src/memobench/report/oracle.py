"""The oracle-memory table: how much of the gap to 100% perfect memory content closes.

A run with ``--memory-oracle LEVEL`` is paired with the run of the same policy
and replan interval without it. Both are restricted to the episodes they
share, keyed by (task, seed), so the two sides see the same bindings and
layouts. Per memory type and metric: standard ``s``, oracle ``o`` and the gap
closed ``(o - s) / (100 - s)`` (percent units; undefined when ``s`` is 100%
or either side is undefined; negative when the oracle made things worse).
The macro row's gap closed is the mean of the per-type gaps where defined.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memobench.core.records import EpisodeRecord
from memobench.metrics.aggregate import summarize
from memobench.report.result_tables import MAIN_METRICS
from memobench.report.runs import Condition, Run
from memobench.report.table_formats import Table, pct


def gap_closed(standard: float | None, oracle: float | None) -> float | None:
    """``(oracle - standard) / (1 - standard)`` for fractions; None when undefined."""
    if standard is None or oracle is None or standard >= 1.0:
        return None
    return (oracle - standard) / (1.0 - standard)


@dataclass(frozen=True)
class OraclePair:
    """A standard run and an oracle run of one policy and replan interval, on shared episodes."""

    standard: Condition
    oracle: Condition
    standard_records: list[EpisodeRecord]
    oracle_records: list[EpisodeRecord]

    @property
    def episodes(self) -> int:
        return len(self.standard_records)


def shared_episodes(
    a: Sequence[EpisodeRecord], b: Sequence[EpisodeRecord]
) -> tuple[list[EpisodeRecord], list[EpisodeRecord]]:
    """The records of ``a`` and ``b`` whose (task, seed) both hold, in the same order."""
    index_b = {(r.task_id, r.seed): r for r in b}
    pairs = [(r, index_b[(r.task_id, r.seed)]) for r in a if (r.task_id, r.seed) in index_b]
    pairs.sort(key=lambda p: (p[0].task_id, p[0].seed))
    return [p[0] for p in pairs], [p[1] for p in pairs]


def oracle_pairs(runs: Sequence[Run]) -> list[OraclePair]:
    """Every (oracle run, standard run) pair with the same policy and replan interval that
    shares at least one (task, seed); in condition order."""
    standards = {(r.condition.policy, r.condition.replan_steps): r for r in runs if not r.condition.memory_oracle}
    pairs = []
    for run in runs:
        c = run.condition
        if not c.memory_oracle:
            continue
        standard = standards.get((c.policy, c.replan_steps))
        if standard is None:
            continue
        std_records, orc_records = shared_episodes(standard.records, run.records)
        if std_records:
            pairs.append(OraclePair(standard.condition, c, std_records, orc_records))
    return pairs


def _values(summary: dict[str, Any], group: str) -> dict[str, float | None]:
    if group == "macro":
        return {m: summary["macro"][m] for m in MAIN_METRICS}
    entry = summary["memory_types"].get(group)
    return {m: (entry[m]["value"] if entry else None) for m in MAIN_METRICS}


def mean_gap(gaps: Sequence[float | None]) -> float | None:
    """Unweighted mean of the defined gaps (None entries skipped); None when none is defined."""
    defined = [g for g in gaps if g is not None]
    return math.fsum(defined) / len(defined) if defined else None


def oracle_rows(pair: OraclePair) -> list[dict[str, Any]]:
    """Per memory type of the shared episodes, then ``macro``: ``{"group", "episodes",
    metric: (standard, oracle, gap closed)}`` with fractions or None.

    In the ``macro`` row, standard and oracle are the summaries' macro averages
    over memory types, and the gap closed is the mean of the per-type gaps over
    the types where one is defined (like every other macro value), not the gap
    between the two macro averages.
    """
    s_sum, o_sum = summarize(pair.standard_records), summarize(pair.oracle_records)
    rows = []
    for group in s_sum["memory_types"]:
        s_vals, o_vals = _values(s_sum, group), _values(o_sum, group)
        row: dict[str, Any] = {"group": group, "episodes": s_sum["memory_types"][group]["episodes"]}
        for m in MAIN_METRICS:
            row[m] = (s_vals[m], o_vals[m], gap_closed(s_vals[m], o_vals[m]))
        rows.append(row)
    s_macro, o_macro = _values(s_sum, "macro"), _values(o_sum, "macro")
    macro: dict[str, Any] = {"group": "macro", "episodes": pair.episodes}
    for m in MAIN_METRICS:
        macro[m] = (s_macro[m], o_macro[m], mean_gap([row[m][2] for row in rows]))
    return [*rows, macro]


def oracle_table(runs: Sequence[Run]) -> Table | None:
    """The oracle table, or None when no oracle run has a standard counterpart."""
    pairs = oracle_pairs(runs)
    if not pairs:
        return None
    header = ["policy", "k", "oracle", "memory", "episodes"]
    csv_header = ["policy", "replan_steps", "memory_oracle", "memory_type", "episodes"]
    for m in MAIN_METRICS:
        header += ["std", "oracle", "gap closed"]
        csv_header += [f"{m}_standard", f"{m}_oracle", f"{m}_gap_closed"]
    rows, csv_rows = [], []
    for pair in pairs:
        c = pair.oracle
        for row in oracle_rows(pair):
            cells, raw = [], []
            for m in MAIN_METRICS:
                cells += [pct(v) for v in row[m]]
                raw += list(row[m])
            ident = [c.policy, c.k, c.memory_oracle, row["group"], str(row["episodes"])]
            rows.append(ident + cells)
            csv_rows.append([c.policy, c.replan_steps, c.memory_oracle, row["group"], row["episodes"], *raw])
    groups = [("", 5)] + [(m, 3) for m in MAIN_METRICS]
    notes = (
        "Standard vs oracle memory on the episodes both ran (same task and seed), in %. Gap closed = "
        "(oracle - standard) / (100 - standard): the share of the distance to 100% that perfect "
        f"memory content closes; {chr(0x2013)} when the standard is already 100% or undefined. "
        "Macro row: standard and oracle are the unweighted means over memory types; its gap closed "
        "is the mean of the per-type gaps closed (over the types where one is defined), not the gap "
        "between the two means."
    )
    return Table("oracle", "Oracle memory: gap closed", header, rows, csv_header, csv_rows, groups, notes)
