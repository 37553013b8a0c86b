"""Run a policy over tasks and episodes into an output folder (in-process, local processes or Ray).

The output folder (docs/protocol.md): ``run.json`` (completed at the end with the
replan interval actually kept), the append-only
``ledger.jsonl``, the derived ``summary.json`` / ``task_summary.csv`` /
``episodes.csv`` (rebuilt from the ledger after every run), and videos.
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
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from memobench.evaluation.envs import EnvCache
from memobench.evaluation.ledger import LEDGER_FILENAME, Ledger
from memobench.evaluation.lock import run_folder_lock
from memobench.evaluation.protocol import EpisodePlan, Protocol, plan_episode
from memobench.evaluation.records import EpisodeRecord
from memobench.evaluation.run_folder import (
    prepare_run_folder,
    run_manifest,
    write_replan_accounting,
)
from memobench.evaluation.video import save_episode_videos, wants_video
from memobench.metrics.export import write_summary
from memobench.policies.adapter import AdapterGuard, check_replan_steps
from memobench.policies.loader import policy_factory
from memobench.suite import Task


@dataclass
class RunRequest:
    """What to evaluate, how, and where to write it."""

    tasks: list[Task]
    num_trials_per_task: int
    protocol: Protocol
    out_root: Path
    policy: dict[str, Any]  # {"name": ...} or {"adapter_spec": ..., "adapter_kwargs": ...}
    video: str = "none"
    video_every: int = 0  # also a video frame every n steps between queries (0: query frames only)
    resume: bool = False
    # Worker processes; results do not depend on it. 0 runs episodes in this process with the
    # adapter handed to evaluate() (the default here; the CLI's default is 1, isolated).
    workers: int = 0
    backend: str = "local"  # "local" (this machine) or "ray"
    ray_address: str | None = None  # a Ray cluster; None starts a local Ray
    episode_timeout: float | None = None  # seconds before a worker's episode counts as hung
    max_attempts: int = 3  # executions of an episode whose worker dies or hangs

    def __post_init__(self) -> None:
        if self.workers < 0:
            raise ValueError(f"--workers must be 0 (in this process) or more, got {self.workers}")
        if self.workers == 0 and self.episode_timeout:
            raise ValueError("--episode-timeout needs a worker process to kill: use --workers 1 or more")
        if self.workers == 0 and self.backend != "local":
            raise ValueError(f"--backend {self.backend} needs --workers 1 or more")

    @property
    def in_process(self) -> bool:
        """Whether episodes run in this process (no isolation, so no timeout or retry)."""
        return self.workers == 0


@dataclass
class RunResult:
    out_root: Path
    ran: list[EpisodeRecord] = field(default_factory=list)
    skipped: int = 0
    summary: dict[str, Any] = field(default_factory=dict)


def pending_plans(tasks: list[Task], num_trials: int, seed_base: int, done: set[tuple[str, int]]) -> list[EpisodePlan]:
    """Plans of the episodes not yet in the ledger, grouped by variant so envs are reused."""
    order = {t.id: i for i, t in enumerate(tasks)}
    plans = [plan_episode(t, e, seed_base) for t in tasks for e in range(num_trials) if (t.id, e) not in done]
    return sorted(plans, key=lambda p: (order[p.task_id], p.variant, p.episode))


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("{task.fields[last]}"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
        console=console, transient=False,
    )


def evaluate(request: RunRequest, adapter: Any, console: Console | None = None,
             on_record: Callable[[EpisodeRecord], None] | None = None) -> RunResult:
    """Run every pending episode of ``request`` with ``adapter``; returns what ran and the summary.

    Raises, before any episode and before the output folder is touched,
    :class:`~memobench.policies.adapter.ChunkLengthError` if the replan interval
    exceeds the adapter's declared chunk length; then
    :class:`~memobench.evaluation.run_folder.RunFolderError` if the output folder
    cannot be used (another run holds its lock, it cannot be created, or
    :func:`~memobench.evaluation.run_folder.prepare_run_folder` refuses it). At the end, ``run.json`` gets the interval actually kept
    (:func:`~memobench.evaluation.run_folder.write_replan_accounting`).
    """
    console = console or Console(stderr=True)
    check_replan_steps(adapter, request.protocol.replan_steps)
    with run_folder_lock(request.out_root):
        return _evaluate_locked(request, adapter, console, on_record)


def _evaluate_locked(request: RunRequest, adapter: Any, console: Console,
                     on_record: Callable[[EpisodeRecord], None] | None) -> RunResult:
    out = request.out_root
    manifest = run_manifest(request.protocol, request.policy, request.tasks,
                            request.num_trials_per_task, request.video)
    prepare_run_folder(out, manifest, request.resume)
    tasks = {t.id: t for t in request.tasks}
    # After a timed-out call, episodes go on with a fresh adapter from the run's policy block
    # (resolved only then: a caller may hand in an adapter its block does not name).
    guard = AdapterGuard(adapter, timeout=request.protocol.adapter_timeout,
                         rebuild=lambda: policy_factory(request.policy)())
    render = guard.needs_images or request.video != "none"
    result = RunResult(out_root=out)
    with Ledger(out / LEDGER_FILENAME) as ledger, contextlib.closing(EnvCache()) as envs:
        for warning in ledger.warnings:
            console.print(f"[yellow]ledger: {warning}")
        plans = pending_plans(request.tasks, request.num_trials_per_task, request.protocol.seed, ledger.done_keys())
        result.skipped = len(tasks) * request.num_trials_per_task - len(plans)
        if request.in_process:
            records = (run_one(tasks[plan.task_id], plan, envs, guard, request, render) for plan in plans)
        else:
            records = _run_in_workers(plans, request, render)
        with _progress(console) as progress:
            bar = progress.add_task("episodes", total=len(plans), last="")
            for record in records:
                ledger.append(record)
                result.ran.append(record)
                if on_record:
                    on_record(record)
                mark = "[green]ok" if record.success else f"[red]{record.failure_class}"
                progress.update(bar, advance=1, last=f"{record.task_id} ep{record.episode} {mark}")
        everything = ledger.records()
        result.summary = write_summary(everything, out)
        write_replan_accounting(out, everything, request.protocol.replan_steps)
    with contextlib.suppress(Exception):
        guard.close()
    return result


def _run_in_workers(plans: list[EpisodePlan], request: RunRequest, render: bool):
    """Yield the records of ``plans`` as the workers finish them."""
    from memobench.evaluation.episode import adapter_error_record, env_error_record
    from memobench.evaluation.executors import LocalBackend, RayBackend, dispatch

    if request.backend == "ray":
        backend = RayBackend(request, render, address=request.ray_address, num_cpus=request.workers)
    else:
        backend = LocalBackend(request, render)
    tasks = {t.id: t for t in request.tasks}
    yield from dispatch(plans, backend, request.workers, episode_timeout=request.episode_timeout,
                        max_attempts=request.max_attempts,
                        failed_record=lambda plan, why: env_error_record(tasks[plan.task_id], plan, why),
                        policy_failed_record=lambda plan, why: adapter_error_record(tasks[plan.task_id], plan, why))


def run_one(task: Task, plan: EpisodePlan, envs: EnvCache, guard: AdapterGuard,
             request: RunRequest, render: bool) -> EpisodeRecord:
    """One episode on a cached env; videos written if the run asks for them."""
    from memobench.evaluation.episode import env_error_record, run_episode

    try:
        env, build_s = envs.get(task, plan.variant, plan.binding, render)
    except Exception as e:  # a scene that cannot be built fails its episodes, not the sweep
        return env_error_record(task, plan, f"building the environment failed: {type(e).__name__}: {e}")
    outcome = run_episode(task, plan, env, guard, request.protocol, capture_video=request.video != "none",
                          video_every=request.video_every)
    record = outcome.record
    if build_s:
        record = record.model_copy(update={"timings": {**record.timings, "env_build": round(build_s, 4)}})
    if wants_video(request.video, record.success):
        save_episode_videos(request.out_root, record, outcome.frames)
    return record
