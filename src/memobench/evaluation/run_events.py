"""How a run reports progress: events, not drawing (the CLI draws them; library code prints nothing)."""

from __future__ import annotations

from memobench.core.records import EpisodeRecord


class RunEvents:
    """What :func:`~memobench.evaluation.runner.evaluate` reports while it runs.

    Every method does nothing here: override the ones you want. Called in the
    evaluating thread, in this order: ledger warnings, :meth:`episodes_started`,
    :meth:`episode_finished` per episode, :meth:`episodes_ended`.
    """

    def ledger_warning(self, message: str) -> None:
        """Something found in the ledger being resumed (a torn last line, a repeated episode)."""

    def episodes_started(self, total: int) -> None:
        """``total`` episodes are about to run (those already in the ledger are not counted)."""

    def episode_finished(self, record: EpisodeRecord) -> None:
        """One episode's record, just appended to the ledger."""

    def episodes_ended(self) -> None:
        """The last episode finished. Not called when the run raises."""

    # -- a batch of other long jobs (collecting, rendering, validating task files) ----------
    def jobs_started(self, label: str, total: int) -> None:
        """``total`` jobs of the kind ``label`` (e.g. "collecting") are about to run."""

    def job_finished(self, summary: str) -> None:
        """One job finished; ``summary`` says what it gave (one line)."""

    def jobs_ended(self) -> None:
        """The batch's last job finished. Not called when it raises."""
