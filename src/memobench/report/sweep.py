"""The replan / oracle sweep of one policy: which runs, in which folders.

``memobench sweep`` evaluates one policy at each replan interval (the
paper's 5, 20, 35, 50) and optionally at the three oracle levels, each into
its own run folder under one root, then writes the report of them all.
Every run resumes from its ledger, so re-running the same command after a
kill continues where it stopped and repeats no episode.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memobench.core.spec import LanguageLevel
from memobench.core.suite import Task
from memobench.evaluation.execution import Execution
from memobench.evaluation.protocol import Protocol
from memobench.evaluation.run_events import RunEvents

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


def plan_sweep(
    root: Path, label: str, replan_steps: Sequence[int] = SWEEP_REPLAN_STEPS, oracle_levels: Sequence[str] = ()
) -> list[SweepPoint]:
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


class SweepEvents(RunEvents):
    """What :func:`run_sweep` reports: the plan, each run as it starts and ends, then that run's
    events. Every method does nothing here; the CLI draws them."""

    def sweep_planned(self, points: list[SweepPoint], tasks: int, trials: int) -> None:
        """The sweep will run ``points``, each on ``tasks`` tasks x ``trials`` episodes."""

    def sweep_run_started(self, index: int, point: SweepPoint) -> None:
        """Run ``index`` (0-based) of the plan starts."""

    def sweep_run_ended(self, point: SweepPoint, ran: int, skipped: int) -> None:
        """A run ended: ``ran`` episodes now, ``skipped`` already in its ledger."""


@dataclass
class SweepResult:
    points: list[SweepPoint]
    report_seconds: float | None = None  # None: no report written
    ran: dict[Path, int] = field(default_factory=dict)


def run_sweep(
    tasks: list[Task],
    trials: int,
    protocol: Protocol,
    execution: Execution,
    policy: dict[str, Any],
    adapter: Any,
    root: Path,
    label: str,
    replan_steps: Sequence[int],
    oracle_levels: Sequence[str] = (),
    report: bool = True,
    events: SweepEvents | None = None,
) -> SweepResult:
    """Evaluate ``policy`` at every point of :func:`plan_sweep` (each run resumed from its ledger),
    then, if ``report``, write the report of them all to ``root/report``.

    ``adapter`` (built from ``policy``) runs the first run; later runs get a fresh one from
    ``policy`` (a run closes its adapter). Every interval is checked against the adapter's
    declared chunk before any run (:class:`~memobench.policies.adapter.ChunkLengthError`);
    a run folder that cannot be used raises
    :class:`~memobench.evaluation.run_folder.RunFolderError`, an unreadable one at report
    time :class:`~memobench.report.runs.ReportError`.
    """
    from memobench.evaluation.run_request import RunRequest
    from memobench.evaluation.runner import evaluate
    from memobench.metrics.export import write_summary
    from memobench.policies.adapter import check_replan_steps
    from memobench.policies.loader import policy_factory

    events = events or SweepEvents()
    for interval in replan_steps:  # all before any run: not a failure mid-sweep
        check_replan_steps(adapter, interval)
    points = plan_sweep(root, label, replan_steps, oracle_levels)
    events.sweep_planned(points, len(tasks), trials)
    result = SweepResult(points)
    for i, point in enumerate(points):
        oracle = LanguageLevel(point.memory_oracle) if point.memory_oracle else None
        run_protocol = protocol.model_copy(update={"replan_steps": point.replan_steps, "memory_oracle": oracle})
        request = RunRequest(
            tasks=tasks,
            num_trials_per_task=trials,
            protocol=run_protocol,
            out_root=point.out_root,
            policy=policy,
            **{**execution.request_fields(), "resume": True},
        )
        events.sweep_run_started(i, point)
        run = evaluate(request, adapter if i == 0 else policy_factory(policy)(), events)
        write_summary(run.records, point.out_root)
        result.ran[point.out_root] = len(run.ran)
        events.sweep_run_ended(point, len(run.ran), run.skipped)
    if report:
        from memobench.report.build import build_report

        built = build_report([p.out_root for p in points], root / REPORT_DIRNAME, videos=execution.video != "none")
        result.report_seconds = built.seconds
    return result
