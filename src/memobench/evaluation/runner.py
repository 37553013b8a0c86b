"""Run a policy over tasks and episodes into an output folder (in-process, local processes or Ray).

The output folder (docs/protocol.md): ``run.json`` (completed at the end with the
replan interval actually kept), the append-only ``ledger.jsonl`` and videos. The
derived ``summary.json`` / ``task_summary.csv`` / ``episodes.csv`` are the
caller's to write from :attr:`RunResult.records`
(:func:`memobench.metrics.export.write_summary`; metrics sit above evaluation).
Episodes already in the ledger are skipped, so a killed run resumes where
it stopped without losing or repeating a finished episode.

With ``workers >= 1`` episodes run in worker processes
(:mod:`memobench.evaluation.executors`), each with its own adapter (rebuilt
from the run's policy block), env cache and guard; a worker that dies or hangs
is replaced and its episode run again, unless it died inside the policy (then
the episode is an ``adapter_error``). ``workers = 0`` runs episodes in this
process with the adapter handed in: no isolation, so a policy that ends the
process ends the run. The parent alone writes the ledger, and holds the run
folder's lock (:mod:`memobench.evaluation.lock`) while it does. An episode's record depends only on its seed, so the
ledger holds the same records whatever the backend and worker count (in
completion order, apart from timings).

Nothing here prints: progress goes to the
:class:`~memobench.evaluation.run_events.RunEvents` the caller hands in (the CLI
draws it as a progress bar).
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memobench.core.records import EpisodeRecord
from memobench.core.suite import Task
from memobench.evaluation.envs import EnvCache
from memobench.evaluation.episode_job import run_one
from memobench.evaluation.executors import EpisodeRunner, run_jobs
from memobench.evaluation.ledger import LEDGER_FILENAME, Ledger
from memobench.evaluation.lock import run_folder_lock
from memobench.evaluation.protocol import EpisodePlan, plan_episode
from memobench.evaluation.run_events import RunEvents
from memobench.evaluation.run_folder import (
    prepare_run_folder,
    run_manifest,
    write_replan_accounting,
)
from memobench.evaluation.run_request import RunRequest
from memobench.evaluation.worker_guard import ending_children_started_within
from memobench.policies.adapter import AdapterGuard, check_replan_steps, policy_receives
from memobench.policies.loader import policy_factory


@dataclass
class RunResult:
    out_root: Path
    ran: list[EpisodeRecord] = field(default_factory=list)
    skipped: int = 0
    records: list[EpisodeRecord] = field(default_factory=list)  # the whole ledger at the end, resumed ones too


def pending_plans(tasks: list[Task], num_trials: int, seed_base: int, done: set[tuple[str, int]]) -> list[EpisodePlan]:
    """Plans of the episodes not yet in the ledger, grouped by variant so envs are reused."""
    order = {t.id: i for i, t in enumerate(tasks)}
    plans = [plan_episode(t, e, seed_base) for t in tasks for e in range(num_trials) if (t.id, e) not in done]
    return sorted(plans, key=lambda p: (order[p.task_id], p.variant, p.episode))


def evaluate(request: RunRequest, adapter: Any, events: RunEvents | None = None) -> RunResult:
    """Run every pending episode of ``request`` with ``adapter``; returns what ran and the ledger's records.

    Raises, before any episode and before the output folder is touched,
    :class:`~memobench.policies.adapter.ChunkLengthError` if the replan interval
    exceeds the adapter's declared chunk length; then
    :class:`~memobench.evaluation.run_folder.RunFolderError` if the output folder
    cannot be used (another run holds its lock, it cannot be created, or
    :func:`~memobench.evaluation.run_folder.prepare_run_folder` refuses it). At the end,
    ``run.json`` gets the interval actually kept
    (:func:`~memobench.evaluation.run_folder.write_replan_accounting`).
    """
    events = events or RunEvents()
    check_replan_steps(adapter, request.protocol.replan_steps)
    with run_folder_lock(request.out_root):
        return _evaluate_locked(request, adapter, events)


def _evaluate_locked(request: RunRequest, adapter: Any, events: RunEvents) -> RunResult:
    out = request.out_root
    manifest = run_manifest(request.protocol, request.policy, request.tasks, request.num_trials_per_task, request.video)
    manifest["policy_receives"] = policy_receives(adapter)
    prepare_run_folder(out, manifest, request.resume)
    tasks = {t.id: t for t in request.tasks}
    # After a timed-out call, episodes go on with a fresh adapter from the run's policy block
    # (resolved only then: a caller may hand in an adapter its block does not name).
    guard = AdapterGuard(
        adapter, timeout=request.protocol.adapter_timeout, rebuild=lambda: policy_factory(request.policy)()
    )
    render = guard.needs_images or request.video != "none"
    result = RunResult(out_root=out)
    # in this process there is no worker process group: what the adapter starts is ended here
    in_process = ending_children_started_within() if request.in_process else contextlib.nullcontext()
    with in_process, Ledger(out / LEDGER_FILENAME) as ledger, contextlib.closing(EnvCache()) as envs:
        for warning in ledger.warnings:
            events.ledger_warning(warning)
        plans = pending_plans(request.tasks, request.num_trials_per_task, request.protocol.seed, ledger.done_keys())
        result.skipped = len(tasks) * request.num_trials_per_task - len(plans)
        if request.in_process:
            records = (run_one(tasks[plan.task_id], plan, envs, guard, request, render) for plan in plans)
        else:
            records = _run_in_workers(plans, request, render)
        events.episodes_started(len(plans))
        for record in records:
            ledger.append(record)
            result.ran.append(record)
            events.episode_finished(record)
        events.episodes_ended()
        result.records = ledger.records()
        write_replan_accounting(out, result.records, request.protocol.replan_steps)
    with contextlib.suppress(Exception):
        guard.close()
    return result


def _run_in_workers(plans: list[EpisodePlan], request: RunRequest, render: bool):
    """Yield the records of ``plans`` as the workers finish them."""
    from memobench.evaluation.episode import adapter_error_record, env_error_record

    tasks = {t.id: t for t in request.tasks}
    yield from run_jobs(
        plans,
        functools.partial(EpisodeRunner, request, render),
        workers=request.workers,
        backend=request.backend,
        ray_address=request.ray_address,
        job_timeout=request.episode_timeout,
        max_attempts=request.max_attempts,
        failed_result=lambda plan, why: env_error_record(tasks[plan.task_id], plan, why),
        lost_in_policy=lambda plan, why: adapter_error_record(tasks[plan.task_id], plan, why),
    )
