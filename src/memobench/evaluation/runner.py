"""Run a policy over tasks and episodes into an output folder (in-process or a local process pool).

The output folder (PROTOCOL.md): ``run.json``, the append-only
``ledger.jsonl``, the derived ``summary.json`` / ``task_summary.csv`` /
``episodes.csv`` (rebuilt from the ledger after every run), and videos.
Episodes already in the ledger are skipped, so a killed run resumes where
it stopped without losing or repeating a finished episode.

With ``workers > 1`` episodes run in a pool of spawned processes, each with
its own adapter (rebuilt from the run's policy block), env cache and guard;
the parent alone writes the ledger. An episode's record depends only on its
seed, so the ledger holds the same records whatever the worker count (in
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
from memobench.evaluation.protocol import EpisodePlan, Protocol, plan_episode
from memobench.evaluation.records import EpisodeRecord
from memobench.evaluation.run_folder import prepare_run_folder, run_manifest
from memobench.evaluation.video import save_episode_videos, wants_video
from memobench.metrics.export import write_summary
from memobench.policies.adapter import AdapterGuard
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
    resume: bool = False
    workers: int = 1  # processes; results do not depend on it


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

    Raises :class:`~memobench.evaluation.run_folder.RunFolderError` before any
    episode if the output folder cannot be used.
    """
    console = console or Console(stderr=True)
    out = request.out_root
    manifest = run_manifest(request.protocol, request.policy, request.tasks,
                            request.num_trials_per_task, request.video)
    prepare_run_folder(out, manifest, request.resume)
    tasks = {t.id: t for t in request.tasks}
    guard = AdapterGuard(adapter, timeout=request.protocol.adapter_timeout)
    render = guard.needs_images or request.video != "none"
    result = RunResult(out_root=out)
    with Ledger(out / LEDGER_FILENAME) as ledger, contextlib.closing(EnvCache()) as envs:
        for warning in ledger.warnings:
            console.print(f"[yellow]ledger: {warning}")
        plans = pending_plans(request.tasks, request.num_trials_per_task, request.protocol.seed, ledger.done_keys())
        result.skipped = len(tasks) * request.num_trials_per_task - len(plans)
        if request.workers > 1:
            records = _run_in_pool(plans, request, render)
        else:
            records = (_run_one(tasks[plan.task_id], plan, envs, guard, request, render) for plan in plans)
        with _progress(console) as progress:
            bar = progress.add_task("episodes", total=len(plans), last="")
            for record in records:
                ledger.append(record)
                result.ran.append(record)
                if on_record:
                    on_record(record)
                mark = "[green]ok" if record.success else f"[red]{record.failure_class}"
                progress.update(bar, advance=1, last=f"{record.task_id} ep{record.episode} {mark}")
        result.summary = write_summary(ledger.records(), out)
    with contextlib.suppress(Exception):
        guard.close()
    return result


# -- the process pool ---------------------------------------------------------------
_WORKER: dict[str, Any] = {}  # per worker process: its tasks, adapter guard, env cache, request


def _worker_init(request: RunRequest, render: bool) -> None:
    from memobench.policies.loader import build_adapter, builtin_spec

    block = request.policy
    spec = block["adapter_spec"] if "adapter_spec" in block else builtin_spec(block["name"])
    adapter = build_adapter(spec, block.get("adapter_kwargs") or {})
    _WORKER.update(tasks={t.id: t for t in request.tasks}, envs=EnvCache(), request=request, render=render,
                   guard=AdapterGuard(adapter, timeout=request.protocol.adapter_timeout))


def _worker_run(plan: EpisodePlan) -> EpisodeRecord:
    w = _WORKER
    return _run_one(w["tasks"][plan.task_id], plan, w["envs"], w["guard"], w["request"], w["render"])


def _run_in_pool(plans: list[EpisodePlan], request: RunRequest, render: bool):
    """Yield the records of ``plans`` as the pool finishes them."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    context = multiprocessing.get_context("spawn")  # MuJoCo and EGL state must not be forked
    with ProcessPoolExecutor(request.workers, mp_context=context, initializer=_worker_init,
                             initargs=(request, render)) as pool:
        # submitted in (task, variant) order: each worker's env cache keeps being reused
        futures = [pool.submit(_worker_run, plan) for plan in plans]
        for future in as_completed(futures):
            yield future.result()


def _run_one(task: Task, plan: EpisodePlan, envs: EnvCache, guard: AdapterGuard,
             request: RunRequest, render: bool) -> EpisodeRecord:
    from memobench.evaluation.episode import env_error_record, run_episode

    try:
        env, build_s = envs.get(task, plan.variant, plan.binding, render)
    except Exception as e:  # a scene that cannot be built fails its episodes, not the sweep
        return env_error_record(task, plan, f"building the environment failed: {type(e).__name__}: {e}")
    outcome = run_episode(task, plan, env, guard, request.protocol, capture_video=request.video != "none")
    record = outcome.record
    if build_s:
        record = record.model_copy(update={"timings": {**record.timings, "env_build": round(build_s, 4)}})
    if wants_video(request.video, record.success):
        save_episode_videos(request.out_root, record, outcome.frames)
    return record
