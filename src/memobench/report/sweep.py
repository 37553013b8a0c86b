"""The replan / oracle sweep of one policy: which runs, in which folders.

``memobench sweep`` evaluates one policy at each replan interval (the
paper's 5, 20, 35, 50) and optionally at the three oracle levels, each into
its own run folder under one root, then writes the report of them all.
Every run resumes from its ledger, so re-running the same command after a
kill continues where it stopped and repeats no episode.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memobench.core.spec import LanguageLevel

SWEEP_REPLAN_STEPS: tuple[int, ...] = (5, 20, 35, 50)
ORACLE_LEVELS: tuple[str, ...] = tuple(level.value for level in LanguageLevel)
REPORT_DIRNAME = "report"


@dataclass(frozen=True)
class SweepPoint:
    """One run of the sweep."""

    replan_steps: int
    memory_oracle: str | None
    out_root: Path


def parse_replan_steps(text: str) -> list[int]:
    """``"5,20,35,50"`` -> ``[5, 20, 35, 50]`` (sorted, unique); ValueError naming the bad item."""
    values = set()
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        if not item.isdigit() or int(item) < 1:
            raise ValueError(f"--replan-steps item {item!r} is not a positive integer (e.g. 5,20,35,50)")
        values.add(int(item))
    if not values:
        raise ValueError("--replan-steps is empty; give e.g. 5,20,35,50")
    return sorted(values)


def plan_sweep(root: Path, label: str, replan_steps: Sequence[int] = SWEEP_REPLAN_STEPS,
               oracle_levels: Sequence[str] = ()) -> list[SweepPoint]:
    """The runs of a sweep, in execution order: per replan interval the standard run, then each
    oracle level. Folders: ``root/<label>-r<k>`` and ``root/<label>-r<k>-oracle-<level>``.

    Raises ValueError for an unknown oracle level.
    """
    for level in oracle_levels:
        if level not in ORACLE_LEVELS:
            raise ValueError(f"unknown oracle level {level!r}; valid: {', '.join(ORACLE_LEVELS)}")
    points = []
    for k in sorted(set(replan_steps)):
        for level in (None, *oracle_levels):
            name = f"{label}-r{k}" + (f"-oracle-{level}" if level else "")
            points.append(SweepPoint(k, level, root / name))
    return points
