"""Load run folders and group them into conditions: (policy, replan interval, oracle level).

A run folder is what ``memobench eval`` writes: ``run.json`` (protocol and
policy) and ``ledger.jsonl``. Only those two files are read; every number in
a report is a function of the ledgers.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from memobench.core.records import EpisodeRecord
from memobench.core.spec import TASK_ID_PATTERN, LanguageLevel, MemoryType
from memobench.evaluation.ledger import LEDGER_FILENAME, read_ledger
from memobench.evaluation.protocol import stored_protocol
from memobench.evaluation.regular_files import read_json_file
from memobench.evaluation.run_folder import RUN_JSON, file_safe, policy_label, replan_accounting
from memobench.metrics.aggregate import summarize

ORACLE_ORDER = {None: 0, **{level.value: i + 1 for i, level in enumerate(LanguageLevel)}}


class ReportError(ValueError):
    """A run folder cannot be used for a report; the message names the folder and why."""


@dataclass(frozen=True)
class Condition:
    """What distinguishes one row of the main table from another.

    :meth:`sort_key` orders by policy name, then replan interval, then oracle
    level (none < coarse < intermediate < fine).
    """

    policy: str
    replan_steps: int
    memory_oracle: str | None = None
    # the interval the run kept when the policy returned chunks shorter than replan_steps
    # (run_folder.replan_accounting); None when it kept replan_steps
    effective_replan_steps: int | None = None

    def sort_key(self) -> tuple[str, int, int, int]:
        return (self.policy, self.replan_steps, ORACLE_ORDER.get(self.memory_oracle, 99), self.replan_kept)

    @property
    def replan_kept(self) -> int:
        """The interval the run kept: the effective one, or ``replan_steps`` when chunks were long enough."""
        return self.effective_replan_steps or self.replan_steps

    @property
    def k(self) -> str:
        """The replan interval as shown: ``5``, or ``5 (effective 3)`` when chunks were shorter."""
        effective = self.effective_replan_steps
        return f"{self.replan_steps}" + (f" (effective {effective})" if effective else "")

    @property
    def label(self) -> str:
        """Short human label, e.g. ``expert k=5``, ``expert k=5 oracle=fine`` or ``x k=5 (effective 3)``."""
        oracle = f" oracle={self.memory_oracle}" if self.memory_oracle else ""
        return f"{self.policy} k={self.k}{oracle}"

    @property
    def slug(self) -> str:
        """File-name-safe label, e.g. ``expert-r5``, ``expert-r5-oracle-fine`` or ``x-r5-e3``."""
        effective = f"-e{self.effective_replan_steps}" if self.effective_replan_steps else ""
        oracle = f"-oracle-{self.memory_oracle}" if self.memory_oracle else ""
        return f"{file_safe(self.policy)}-r{self.replan_steps}{effective}{oracle}"


@dataclass
class Run:
    """All records of one condition, possibly merged from several folders (e.g. task shards)."""

    condition: Condition
    folders: list[Path]
    records: list[EpisodeRecord]
    manifests: list[dict[str, Any]] = field(default_factory=list)

    include_arena: bool = False  # whether the MEMOBench tables count arena tasks too (report --arena-in-tables)

    @cached_property
    def summary(self) -> dict[str, Any]:
        """:func:`memobench.metrics.aggregate.summarize` of :attr:`table_records`."""
        return summarize(self.table_records)

    @property
    def clipped_actions(self) -> dict[str, Any]:
        """Executed actions clipped into [-1, 1] over the run's episodes (the protocol's
        ``clip_actions``): their count, the episodes with any, the largest excess |a| - 1."""
        return {
            "actions": sum(r.clipped_actions for r in self.records),
            "episodes": sum(1 for r in self.records if r.clipped_actions),
            "max_excess": max((r.max_action_excess for r in self.records), default=0.0),
        }

    @property
    def arena_records(self) -> list[EpisodeRecord]:
        """Records of arena tasks (RoboMemArena's, scored in the arena table)."""
        return [r for r in self.records if not isinstance(r.memory_type, MemoryType)]

    @property
    def table_records(self) -> list[EpisodeRecord]:
        """The records the MEMOBench tables count: MEMOBench tasks, arena tasks only when included."""
        if self.include_arena:
            return self.records
        return [r for r in self.records if isinstance(r.memory_type, MemoryType)]

    @property
    def task_ids(self) -> list[str]:
        return sorted({r.task_id for r in self.records})

    @property
    def planned_episodes(self) -> int | None:
        """The episodes the folders' ``run.json`` plan (tasks x ``num_trials_per_task``, summed).

        None when a ``run.json`` does not say (an older or hand-written one): then the run
        cannot be told partial. (:func:`read_run_folder` has checked ``tasks`` is a mapping.)
        """
        total = 0
        for manifest in self.manifests:
            trials = manifest.get("num_trials_per_task")
            if type(trials) is not int:  # not a bool, a string or missing
                return None
            total += len(manifest["tasks"]) * trials
        return total if self.manifests else None

    @property
    def missing_episodes(self) -> int:
        """Planned episodes not in the ledgers: more than 0 for a run stopped before its end."""
        planned = self.planned_episodes
        return max(0, planned - len(self.records)) if planned is not None else 0

    @property
    def partial_warning(self) -> str | None:
        """What to tell the user of a partial run (None for a complete one)."""
        if not self.missing_episodes:
            return None
        folders = ", ".join(map(str, self.folders))
        return (
            f"{self.condition.label}: partial, {len(self.records)} of {self.planned_episodes} planned "
            f"episodes ({folders}): resume it before reading its rates"
        )

    @property
    def episodes_label(self) -> str:
        """The table episodes, e.g. ``600``, or ``208 (392 missing)`` for a partial run."""
        missing = self.missing_episodes
        return f"{len(self.table_records)}" + (f" ({missing} missing)" if missing else "")


def read_run_folder(folder: str | os.PathLike[str]) -> tuple[Condition, dict[str, Any], list[EpisodeRecord]]:
    """(condition, run.json content, ledger records) of one run folder.

    Raises :class:`ReportError` when the folder, its ``run.json`` or its
    ledger is missing or unreadable, or when a ledger record's task is not one of
    the run's tasks (``run.json``'s ``tasks``), see :func:`check_task_ids`.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ReportError(f"{folder}: not a folder; give run folders written by `memobench eval`")
    run_json, ledger = folder / RUN_JSON, folder / LEDGER_FILENAME
    if not os.path.lexists(run_json):  # anything else there (a link, a FIFO) is refused when read
        raise ReportError(f"{folder}: no {RUN_JSON}; is this a `memobench eval` --out-root?")
    if not ledger.is_file():
        raise ReportError(f"{folder}: no {LEDGER_FILENAME} (the run has not finished an episode)")
    try:
        manifest = read_json_file(run_json)
        _check_manifest_types(manifest)
        protocol = manifest["protocol"]
        policy = policy_label(manifest.get("policy") or {})
        replan_steps = protocol["replan_steps"]
    except (OSError, KeyError, TypeError, ValueError) as e:  # ValueError: not a regular file, too large, not JSON
        raise ReportError(f"{run_json}: unreadable run.json ({type(e).__name__}: {e})") from None
    try:
        records = read_ledger(ledger)
    except ValueError as e:  # LedgerError names file and line
        raise ReportError(str(e)) from None
    check_task_ids(run_json, manifest, ledger, records)
    effective = replan_accounting(records, replan_steps)["effective_replan_steps"]
    condition = Condition(
        policy, replan_steps, protocol.get("memory_oracle"), effective if effective < replan_steps else None
    )
    return condition, manifest, records


def _check_manifest_types(manifest: Any) -> None:
    """TypeError naming the field unless ``run.json``'s fields the report reads have their types
    (it may be hand-edited or crafted: a string ``policy`` or a ``replan_steps`` of 1e400)."""
    if not isinstance(manifest, dict):
        raise TypeError(f"the file holds a {type(manifest).__name__}, not an object")
    for key in ("protocol", "policy"):
        if key in manifest and not isinstance(manifest[key], dict):
            raise TypeError(f"'{key}' is a {type(manifest[key]).__name__}, not an object")
    protocol = manifest.get("protocol", {})
    replan = protocol.get("replan_steps")
    if replan is not None and (isinstance(replan, bool) or not isinstance(replan, int) or replan < 1):
        raise TypeError(f"'protocol.replan_steps' is {replan!r}, not a whole number >= 1")
    oracle = protocol.get("memory_oracle")
    if oracle is not None and not isinstance(oracle, str):
        raise TypeError(f"'protocol.memory_oracle' is a {type(oracle).__name__}, not a language level or null")


def check_task_ids(run_json: Path, manifest: dict[str, Any], ledger: Path, records: Sequence[EpisodeRecord]) -> None:
    """Refuse task ids that are not the run's: each record's must be a key of ``run.json``'s ``tasks``,
    and those must be well-formed task ids (``T03-check-all-drawers``).

    Task ids become file and folder names in a report, so this is also what keeps a
    crafted ledger (a task id of ``../../x``) from naming paths; the report's writers
    check their final paths too (:mod:`memobench.report.paths`).
    """
    tasks = manifest.get("tasks")
    if not isinstance(tasks, dict):
        raise ReportError(f"{run_json}: no 'tasks' mapping (the run's task ids); is this a `memobench eval` run.json?")
    for task_id in tasks:
        if not re.fullmatch(TASK_ID_PATTERN, task_id):
            raise ReportError(f"{run_json}: {task_id!r} in 'tasks' is not a task id (like T03-check-all-drawers)")
    for record in records:
        if record.task_id not in tasks:
            raise ReportError(
                f"{ledger}:{_ledger_line(ledger, record)}: task id {record.task_id!r} is not a task "
                f"of this run ({run_json} lists {', '.join(sorted(tasks)) or 'none'})"
            )


def _ledger_line(ledger: Path, record: EpisodeRecord) -> int | str:
    """The line number of ``record`` in ``ledger`` (its first line with that task and episode), else '?'."""
    with ledger.open("rb") as f:
        for number, raw in enumerate(f, start=1):
            try:
                fields = json.loads(raw)
            except ValueError:
                continue
            if isinstance(fields, dict) and (fields.get("task_id"), fields.get("episode")) == (
                record.task_id,
                record.episode,
            ):
                return number
    return "?"


def load_runs(folders: Iterable[str | os.PathLike[str]]) -> list[Run]:
    """One :class:`Run` per condition, sorted by condition.

    Folders with the same condition are merged; raises :class:`ReportError`
    if two of them differ in another protocol field (horizon, seed base, ...) or
    hold the same (task, episode), or if no folder or no episode is given.
    """
    runs: dict[Condition, Run] = {}
    origin: dict[tuple[Condition, str, int], Path] = {}
    for folder in map(Path, folders):
        condition, manifest, records = read_run_folder(folder)
        run = runs.setdefault(condition, Run(condition, [], []))
        if run.manifests:
            _check_same_protocol(run.folders[0], run.manifests[0], folder, manifest)
        for record in records:
            key = (condition, record.task_id, record.episode)
            if key in origin:
                raise ReportError(
                    f"{folder} and {origin[key]} are both '{condition.label}' and both hold task "
                    f"{record.task_id!r} episode {record.episode}; give only one of them"
                )
            origin[key] = folder
        run.folders.append(folder)
        run.manifests.append(manifest)
        run.records.extend(records)
    if not runs:
        raise ReportError("no run folders given")
    if not any(run.records for run in runs.values()):
        raise ReportError(
            "the ledgers of "
            + ", ".join(str(f) for run in runs.values() for f in run.folders)
            + " hold no episode yet; nothing to report"
        )
    return [runs[c] for c in sorted(runs, key=Condition.sort_key)]


def _check_same_protocol(first: Path, a: dict[str, Any], other: Path, b: dict[str, Any]) -> None:
    """Folders merged into one condition must mean the same thing per episode."""
    pa, pb = stored_protocol(a.get("protocol", {})), stored_protocol(b.get("protocol", {}))
    diffs = [key for key in sorted(set(pa) | set(pb)) if pa.get(key) != pb.get(key)]
    if diffs:
        key, label = diffs[0], f"{policy_label(a.get('policy') or {})} k={pa.get('replan_steps')}"
        raise ReportError(
            f"{first} and {other} are both '{label}' but differ in protocol field '{key}' "
            f"({pa.get(key)!r} vs {pb.get(key)!r}); report them separately"
        )


def memory_types_present(runs: Sequence[Run]) -> list[str]:
    """Memory types with at least one record in any run, in ``MemoryType`` order."""
    from memobench.core.spec import MemoryType

    seen = {r.memory_type for run in runs for r in run.table_records}
    return [mt.value for mt in MemoryType if mt in seen]


_FAMILY_ORDER = {"T": 0, "S": 1, "O": 2, "P": 3}


def task_sort_key(task_id: str) -> tuple[int, str]:
    """Suite order: family (T, S, O, P as in the paper) then id."""
    return (_FAMILY_ORDER.get(task_id[:1], 9), task_id)


def tasks_present(runs: Sequence[Run]) -> list[str]:
    """Task ids with records in any run, in :func:`task_sort_key` order."""
    return sorted({r.task_id for run in runs for r in run.table_records}, key=task_sort_key)
