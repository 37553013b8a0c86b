"""A run's progress on the console: ledger warnings and one progress bar per run.

The library reports through :class:`~memobench.evaluation.run_events.RunEvents`; this is
the only place that draws them. Use it as a context manager around one or more
``evaluate`` calls, so a run that raises still leaves the terminal clean.

On a console that is not a terminal (a long run's output sent to a log file) Rich draws no
live bar, only the last state when the bar stops; there finished episodes or jobs are also
printed as lines of their own (the first, the last, and at most one a :data:`LOG_INTERVAL` in
between, so a training run's steps do not flood it): the log shows how far a run of hours has got.
"""

from __future__ import annotations

import time
from datetime import timedelta

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from memobench.core.records import EpisodeRecord
from memobench.evaluation.run_events import RunEvents

LOG_INTERVAL = 10.0  # seconds between two progress lines on a console that is not a terminal


class RunProgress(RunEvents):
    """Draws each run's episodes as a bar: count, the last episode's outcome, elapsed time, ETA."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self._progress: Progress | None = None
        self._bar = None
        self._last_line = float("-inf")  # time.monotonic() of the last progress line (log files)

    def __enter__(self) -> RunProgress:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop()

    def ledger_warning(self, message: str) -> None:
        self.console.print(f"[yellow]ledger: {message}")

    def episodes_started(self, total: int) -> None:
        self._start("episodes", total)

    def episode_finished(self, record: EpisodeRecord) -> None:
        if self._progress is None:
            return
        mark = "[green]ok" if record.success else f"[red]{record.failure_class}"
        self._advance(f"{record.task_id} ep{record.episode} {mark}")

    def episodes_ended(self) -> None:
        self._stop()

    def jobs_started(self, label: str, total: int) -> None:
        self._start(label, total)

    def job_finished(self, summary: str) -> None:
        if self._progress is not None:
            self._advance(summary)

    def jobs_ended(self) -> None:
        self._stop()

    def _start(self, label: str, total: int) -> None:
        """A new bar: count, the last item's outcome, elapsed time, ETA (replacing any bar shown)."""
        self._stop()
        self._progress = Progress(
            TextColumn(f"[bold]{label}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[last]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
        )
        self._progress.start()
        self._bar = self._progress.add_task(label, total=total, last="")

    def _advance(self, last: str) -> None:
        """One more item done: the bar moves on; on a log file, also a line ``label n/total last (elapsed)``."""
        self._progress.update(self._bar, advance=1, last=last)
        task = self._progress.tasks[0]  # one bar per Progress (_start)
        first, final, now = task.completed == 1, task.completed >= (task.total or 0), time.monotonic()
        if not self.console.is_terminal and (first or final or now - self._last_line >= LOG_INTERVAL):
            self._last_line = now
            elapsed = timedelta(seconds=int(task.elapsed or 0))
            line = f"{task.description} {int(task.completed)}/{int(task.total)} {last} ({elapsed})"
            self.console.print(line, soft_wrap=True)  # one line however long: a log is read with grep and tail

    def _stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


class SweepProgress(RunProgress):
    """The sweep's plan, a line per run, then that run's progress bar (the sweep's events)."""

    def __init__(self, label: str, root, console: Console | None = None) -> None:
        super().__init__(console)
        self.label, self.root, self.total = label, root, 0

    def sweep_planned(self, points: list, tasks: int, trials: int) -> None:
        self.total = len(points)
        self.console.print(
            f"Sweep of {self.label}: {len(points)} runs x {tasks} tasks x {trials} episodes into {self.root}"
        )

    def sweep_run_started(self, index: int, point) -> None:
        oracle = f" oracle={point.memory_oracle}" if point.memory_oracle else ""
        self.console.print(f"[bold]run {index + 1}/{self.total}[/]: k={point.replan_steps}{oracle} -> {point.out_root}")

    def sweep_run_ended(self, point, ran: int, skipped: int) -> None:
        self.console.print(f"  ran {ran} episodes" + (f", {skipped} already in the ledger" if skipped else ""))
