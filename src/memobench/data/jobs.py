"""The data commands' long jobs on the evaluation's worker pool: collect, render, validate, features.

One job is one task file (collect a task, render a file, validate a file, featurise a file). The jobs run
through :func:`memobench.evaluation.executors.run_jobs`, so they get what episodes get:
``--workers`` (0: in this process), ``--backend ray``, a worker that dies or hangs
replaced and its job run again (``max_attempts``), workers that die with the command,
and progress as :class:`~memobench.evaluation.run_events.RunEvents`. A job that raises
gives a :class:`JobFailure` (its worker carries on).

What each job guarantees on a retry or a kill: collecting resumes from the task's
attempt journal (:mod:`memobench.data.collect`), so the demos are the same whatever
the worker count or the number of executions; rendering journals each demo's frames and
swaps the file in only when complete (:func:`memobench.data.render.render_task_file`), so
a retry draws only the demos not yet drawn; featurising writes a copy swapped in the same way
(:func:`memobench.data.state_features.featurise_task_file`); validating writes nothing.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memobench.evaluation.execution import Execution
from memobench.evaluation.executors import run_jobs
from memobench.evaluation.protocol import Protocol
from memobench.evaluation.run_events import RunEvents


@dataclass(frozen=True)
class CollectJob:
    task_id: str
    episodes: int
    out: Path
    seed_base: int
    action_noise: float = 0.0
    known_failures: frozenset[int] = frozenset()
    key = property(lambda self: ("collect", self.task_id))
    affinity = None


@dataclass(frozen=True)
class RenderJob:
    path: Path
    size: int
    cameras: tuple[str, ...]
    quality: str = "reference"  # SimEnv's render_quality
    key = property(lambda self: ("render", str(self.path)))
    affinity = None


@dataclass(frozen=True)
class ValidateJob:
    path: Path
    episodes: int | None
    replay: bool
    key = property(lambda self: ("validate", str(self.path)))
    affinity = None


@dataclass(frozen=True)
class FeaturesJob:
    path: Path
    features_dir: Path
    key = property(lambda self: ("features", str(self.path)))
    affinity = None


@dataclass(frozen=True)
class JobResult:
    """What a job gave (``value``), or why it gave nothing (``failure``: it raised, or its attempts ran out)."""

    key: tuple[str, str]
    value: Any = None
    failure: str | None = None


class DataJobRunner:
    """A worker's runner for the data jobs (built in the worker: ``DataJobRunner(phase)``)."""

    def __init__(self, phase=None) -> None:
        pass

    def run(self, job) -> JobResult:
        from memobench.data.demo_bddl import DemoFileError

        try:
            return JobResult(job.key, _run(job))
        except (DemoFileError, ValueError, OSError) as e:  # the file's own fault: its message is the reason
            return JobResult(job.key, failure=str(e))
        except Exception:  # a harness bug must not look like a crash to retry
            return JobResult(job.key, failure="the job raised in the worker:\n" + traceback.format_exc())


def _run(job):
    if isinstance(job, CollectJob):
        from memobench.core.suite import Suite
        from memobench.data.collect import collect_task

        task = Suite.load().get(job.task_id)
        return collect_task(
            task,
            job.episodes,
            job.out,
            seed_base=job.seed_base,
            action_noise=job.action_noise,
            known_failures=job.known_failures,
        )
    if isinstance(job, FeaturesJob):
        from memobench.data.state_features import features_path, featurise_task_file

        return featurise_task_file(job.path, features_path(job.features_dir, job.path))
    if isinstance(job, RenderJob):
        from memobench.data.render import render_task_file

        return render_task_file(job.path, job.size, list(job.cameras), quality=job.quality)
    from memobench.data.validate import validate_file

    return validate_file(job.path, episodes=job.episodes, replay=job.replay)


def run_data_jobs(
    label: str, jobs: list, execution: Execution, events: RunEvents | None = None, describe=lambda result: result.key[1]
) -> list[JobResult]:
    """Run ``jobs`` on the pool ``execution`` describes; their results in ``jobs``' order.

    ``events`` hears ``jobs_started(label, n)``, ``job_finished(describe(result))`` per job
    as it finishes, then ``jobs_ended()``.
    """
    events = events or RunEvents()
    events.jobs_started(label, len(jobs))
    results: dict[Any, JobResult] = {}
    for result in run_jobs(
        jobs,
        DataJobRunner,
        workers=execution.workers,
        backend=execution.backend.value,
        ray_address=execution.ray_address,
        job_timeout=execution.episode_timeout,
        max_attempts=execution.max_attempts,
        mark_retries=lambda r, _reasons, _n: r,
        failed_result=lambda job, why: JobResult(job.key, failure=why),
    ):
        results[result.key] = result
        events.job_finished(describe(result))
    events.jobs_ended()
    return [results[job.key] for job in jobs]


class DataJobError(Exception):
    """Jobs that gave nothing; the message names each one's file or task and why (one line each)."""


def _raise_failures(results: list[JobResult]) -> None:
    failed = [f"{r.key[1]}: {r.failure}" if r.key[1] not in r.failure else r.failure for r in results if r.failure]
    if failed:
        raise DataJobError("; ".join(failed))


def collect_dataset(
    tasks: list,
    episodes: int,
    out: Path,
    seed_base: int,
    execution: Execution,
    events: RunEvents | None = None,
    image_size: int = 0,
    cameras: tuple[str, ...] = ("agentview", "wrist"),
    command: str = "memobench collect",
    action_noise: float = 0.0,
    known_failures: dict[str, frozenset[int]] | None = None,
) -> list:
    """Collect every task into ``out`` (one job per task), render if ``image_size``, write the dataset card.

    ``known_failures``: per task id, attempts to count as failed without running them
    (:mod:`memobench.data.outcomes`).

    Returns the :class:`~memobench.data.collect.TaskCollection` of every task, in ``tasks``' order.
    Raises, before any work, OSError if ``out`` cannot be a folder and
    :class:`~memobench.data.collect.CollectionConflict` if it holds another collection;
    :class:`DataJobError` if a task's job gave nothing (the others' files are written).
    """
    from memobench.data.card import hdf5_card_inputs, write_card
    from memobench.data.collect import check_can_continue

    out.mkdir(parents=True, exist_ok=True)
    for task in tasks:  # a folder of another collection is refused, not mixed into
        check_can_continue(task, out, seed_base, action_noise)
    known = known_failures or {}
    jobs = [CollectJob(t.id, episodes, out, seed_base, action_noise, known.get(t.id, frozenset())) for t in tasks]
    results = run_data_jobs(
        "collecting",
        jobs,
        execution,
        events,
        describe=lambda r: f"{r.key[1]} " + (f"{r.value.kept} kept of {r.value.attempts}" if r.value else "failed"),
    )
    _raise_failures(results)
    collections = [r.value for r in results]
    if image_size:
        quality = Protocol().render_quality  # the evaluation's default, so training frames match it
        render_dataset([c.path for c in collections], image_size, cameras, execution, events, quality=quality)
    write_card(out, hdf5_card_inputs(out), fmt="hdf5", command=command)
    return collections


def render_dataset(
    paths: list[Path],
    size: int,
    cameras: tuple[str, ...],
    execution: Execution,
    events: RunEvents | None = None,
    quality: str = "reference",
) -> int:
    """Add camera images to every file's demos (one job per file, at render ``quality``); returns the frames drawn.

    A file that cannot be rendered is left as it was, and named in the :class:`DataJobError`
    raised once every other file is rendered.
    """
    results = run_data_jobs(
        "rendering", [RenderJob(p, size, tuple(cameras), quality) for p in paths], execution, events
    )
    _raise_failures(results)
    return sum(r.value for r in results)


def featurise_dataset(
    paths: list[Path], features_dir: Path, execution: Execution, events: RunEvents | None = None
) -> int:
    """Write the state features (``--obs state``'s vectors) of every file into ``features_dir``, one job
    per file; returns the frames written. A file that cannot be featurised is named in the
    :class:`DataJobError` raised once every other file is done.
    """
    results = run_data_jobs(
        "featurising",
        [FeaturesJob(p, features_dir) for p in paths],
        execution,
        events,
        describe=lambda r: f"{Path(r.key[1]).stem}: " + (f"{r.value} frames" if r.failure is None else "failed"),
    )
    _raise_failures(results)
    return sum(r.value for r in results)


def validate_dataset(
    folder: Path,
    tasks: list[str],
    episodes: int | None,
    replay: bool,
    execution: Execution,
    events: RunEvents | None = None,
) -> list:
    """Every :class:`~memobench.data.validate.DemoCheck` of ``folder``: coverage of ``tasks``, then each file's.

    A file whose check raised gives one file-level check naming why.
    """
    from memobench.data.validate import DemoCheck, missing_tasks

    paths = sorted(folder.glob("*.hdf5"))
    results = run_data_jobs("validating", [ValidateJob(p, episodes, replay) for p in paths], execution, events)
    checks = missing_tasks(folder, tasks)
    for path, result in zip(paths, results, strict=True):
        checks += result.value if result.failure is None else [DemoCheck(path.stem, -1, [result.failure])]
    return checks
