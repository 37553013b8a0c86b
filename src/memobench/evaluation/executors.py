"""Where episodes (and any other long job) run: a pool of worker processes, local or on Ray, that survives faults.

The pool runs *jobs*: picklable values with a ``key`` (unique in a batch) and an
``affinity`` (jobs of equal, non-None affinity prefer the worker that ran one
last). A worker holds a *runner*, built once in the worker by a picklable
factory (``factory(phase)``), whose ``run(job)`` gives the job's result; an
episode is the job of :class:`~memobench.evaluation.protocol.EpisodePlan`, run by
:class:`EpisodeRunner`; the data commands' jobs (collect, render, validate a
task file) are in :mod:`memobench.data.jobs`. :func:`run_jobs` is the one entry
point for a batch of jobs (in this process, local processes or Ray).

Both backends hand whole episodes to long-lived workers. A worker builds its
adapter once and keeps an env cache, so an env is built once per (task,
variant) per worker; the dispatcher gives a free worker the next episode of
the variant it ran last when there is one, so envs keep being reused.

Faults (ISSUE 6): a worker that dies (segfault, OOM kill) or runs one episode
past ``episode_timeout`` seconds is killed and replaced, and its episode is
run again, same seed, up to ``max_attempts`` executions in all. The record
says so (``attempts``, ``retry_reasons``); an episode that exhausts its
attempts is recorded as an ``env_error``. Policy failures are not faults: the
adapter guard inside the worker turns them into ``adapter_error`` records,
which are never retried. That includes a local worker lost *inside* an adapter
call (the policy ended its process, or was still running at the episode
timeout): the worker marks every adapter call in memory its parent reads
(:mod:`memobench.evaluation.policy_phase`), so the episode is recorded once as
an ``adapter_error`` naming the call and the exit status. Ray actors carry no
such mark (their memory is on another node); a lost actor is always retried.

Local workers die with the parent process (:mod:`memobench.evaluation.worker_guard`).

An episode's record depends only on its plan, so the records are the same
whatever the backend and worker count (apart from timings and retries).
"""

from __future__ import annotations

import collections
import contextlib
import multiprocessing
import os
import signal
import time
import traceback
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import wait as wait_for_connections
from typing import Any, Protocol

from memobench.evaluation.episode_job import run_one
from memobench.evaluation.policy_phase import PolicyPhase
from memobench.evaluation.protocol import EpisodePlan
from memobench.evaluation.worker_guard import die_with_parent, ending_children_started_within

DEFAULT_MAX_ATTEMPTS = 3


class WorkerLost(Exception):
    """The worker died, or was killed, before it returned its episode's record."""


class Job(Protocol):
    """A unit of work for the pool (an :class:`EpisodePlan`, a data job)."""

    @property
    def key(self) -> Hashable: ...  # unique in its batch: retries are counted per key

    @property
    def affinity(self) -> Hashable | None: ...  # equal affinities prefer one worker (its env is built)


class Worker(Protocol):
    """One long-lived job runner."""

    last_affinity: Hashable | None

    def submit(self, job: Job) -> None: ...

    def collect(self) -> Any: ...  # the record; raises WorkerLost

    def policy_call(self) -> str | None: ...  # the adapter call it is in (None: none, or unknown)

    def kill(self) -> None: ...


class Backend(Protocol):
    """Starts workers and waits on them."""

    def spawn(self) -> Worker: ...

    def wait(self, workers: list[Worker], timeout: float | None) -> list[Worker]: ...

    def shutdown(self) -> None: ...


@dataclass
class _Busy:
    plan: Job
    started: float


def dispatch(
    plans: list[Job],
    backend: Backend,
    workers: int,
    *,
    failed_record,
    policy_failed_record,
    episode_timeout: float | None = None,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    mark_retries=None,
) -> Iterator[Any]:
    """Run the jobs ``plans`` on ``workers`` workers of ``backend``; yield results as they finish.

    ``failed_record(job, reason)`` makes the result of a job whose
    attempts are exhausted; ``policy_failed_record(job, reason)`` that of a
    job whose worker was lost inside an adapter call (recorded at once,
    never retried). ``mark_retries(result, reasons, attempts)`` marks a result that took
    more than one execution (default: an episode record's ``attempts`` and
    ``retry_reasons``). Workers are shut down when the generator ends or is closed.
    """
    mark = mark_retries or _with_retries
    pending = collections.deque(plans)
    reasons: dict[tuple[str, int], list[str]] = collections.defaultdict(list)
    idle: list[Worker] = []
    busy: dict[Worker, _Busy] = {}
    try:
        idle = [backend.spawn() for _ in range(min(workers, len(plans)))]
        while pending or busy:
            while idle and pending:
                worker = idle.pop()
                plan = _next_for(worker, pending)
                worker.submit(plan)
                worker.last_affinity = plan.affinity
                busy[worker] = _Busy(plan, time.monotonic())
            ready = backend.wait(list(busy), _time_left(busy, episode_timeout))
            lost: list[tuple[Worker, str]] = []
            for worker in ready:
                job = busy.pop(worker)
                try:
                    record = worker.collect()
                except WorkerLost as e:
                    lost.append((worker, str(e)))
                    busy[worker] = job  # handled with the hung ones below
                    continue
                idle.append(worker)
                tried = reasons.get(job.plan.key, [])
                yield mark(record, tried, len(tried) + 1)
            if episode_timeout:
                now = time.monotonic()
                gone = {w for w, _ in lost}
                lost += [
                    (w, f"episode ran past --episode-timeout {episode_timeout:g} s")
                    for w, job in busy.items()
                    if w not in gone and now - job.started > episode_timeout
                ]
            for worker, reason in lost:
                job = busy.pop(worker)
                in_policy = worker.policy_call()  # read before the kill: a hung worker is still in it
                worker.kill()
                tried = reasons[job.plan.key]
                if in_policy is not None:  # the policy's failure, not a fault: recorded once
                    message = f"the policy was running {in_policy} when its worker was lost: {reason}"
                    yield mark(policy_failed_record(job.plan, message), tried, len(tried) + 1)
                else:
                    tried.append(reason)
                    if len(tried) < max_attempts:
                        pending.appendleft(job.plan)  # same seed, on the next free worker
                    else:
                        message = f"gave up after {len(tried)} attempts; last: {reason}"
                        yield mark(failed_record(job.plan, message), tried, len(tried))
                if pending:
                    idle.append(backend.spawn())
    finally:
        for worker in [*idle, *busy]:
            worker.kill()
        backend.shutdown()


def _next_for(worker: Worker, pending: collections.deque) -> Job:
    """The next job of the affinity the worker ran last (e.g. its env is built), else the next job."""
    if worker.last_affinity is not None:
        for i, plan in enumerate(pending):
            if plan.affinity == worker.last_affinity:
                del pending[i]
                return plan
    return pending.popleft()


def _time_left(busy: dict[Worker, _Busy], episode_timeout: float | None) -> float | None:
    if not episode_timeout or not busy:
        return None
    oldest = min(job.started for job in busy.values())
    return max(0.0, oldest + episode_timeout - time.monotonic()) + 0.05


def _with_retries(record, reasons: list[str], attempts: int):
    """``record`` marked with how many executions it took and why the earlier ones were lost."""
    if attempts == 1:
        return record
    return record.model_copy(update={"attempts": attempts, "retry_reasons": list(reasons)})


# -- the worker body, shared by both backends -------------------------------------------
class EpisodeRunner:
    """What a worker holds: its adapter (behind a guard), env cache and the run request."""

    def __init__(self, request, render: bool, phase=None):
        import contextlib

        from memobench.evaluation.envs import EnvCache
        from memobench.policies.adapter import AdapterGuard
        from memobench.policies.loader import policy_factory

        mark = phase.call if phase is not None else None
        build = policy_factory(request.policy)
        self.tasks = {t.id: t for t in request.tasks}
        self.envs = EnvCache()
        with mark("building the adapter") if mark else contextlib.nullcontext():
            adapter = build()
        self.guard = AdapterGuard(adapter, timeout=request.protocol.adapter_timeout, rebuild=build, mark=mark)
        self.request, self.render = request, render

    def run(self, plan: EpisodePlan):
        from memobench.evaluation.episode import env_error_record

        task = self.tasks[plan.task_id]
        try:
            return run_one(task, plan, self.envs, self.guard, self.request, self.render)
        except Exception:  # a harness bug must not look like a crash to retry
            return env_error_record(task, plan, "the episode raised in the worker:\n" + traceback.format_exc())


# -- local processes ----------------------------------------------------------------
def _local_worker_main(conn, factory, phase: PolicyPhase, parent_pid: int) -> None:
    die_with_parent(parent_pid)  # first: whatever follows may hang
    # Its own process group: whatever the adapter starts (a subprocess, a fork) joins it, and the
    # run ends the group with the worker (_LocalWorker.kill), so nothing outlives the command.
    os.setsid()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    runner = factory(phase)
    while True:
        plan = conn.recv()
        if plan is None:
            return
        conn.send(runner.run(plan))


class _LocalWorker:
    def __init__(self, context, factory):
        self.conn, child = context.Pipe()
        self.phase = PolicyPhase(context)
        self.process = context.Process(
            target=_local_worker_main, daemon=True, args=(child, factory, self.phase, os.getpid())
        )
        self.process.start()
        child.close()
        self.last_affinity = None

    def submit(self, plan: Job) -> None:
        self.conn.send(plan)

    def collect(self):
        try:
            return self.conn.recv()
        except (EOFError, OSError):
            self.process.join(timeout=5)
            raise WorkerLost(f"worker process died ({_exit_text(self.process.exitcode)})") from None

    def policy_call(self) -> str | None:
        return self.phase.policy_call()

    def kill(self) -> None:
        """End the worker and every process its adapter started (its process group)."""
        if self.process.is_alive():
            self.process.kill()
        self.process.join(timeout=10)
        with contextlib.suppress(ProcessLookupError, PermissionError):  # none left, or never made
            os.killpg(self.process.pid, signal.SIGKILL)
        self.conn.close()


def _exit_text(code: int | None) -> str:
    if code is None:
        return "exit status unknown"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


class LocalBackend:
    """Spawned processes on this machine (never forked: MuJoCo and EGL state must not be).

    Each worker runs ``factory(phase)``'s ``run(job)``; ``factory`` must be picklable.
    """

    def __init__(self, factory: Callable[[Any], Any]):
        self.context = multiprocessing.get_context("spawn")
        self.factory = factory

    def spawn(self) -> _LocalWorker:
        return _LocalWorker(self.context, self.factory)

    def wait(self, workers: list[_LocalWorker], timeout: float | None) -> list[_LocalWorker]:
        by_handle = {}
        for w in workers:
            by_handle[w.conn] = w
            by_handle[w.process.sentinel] = w  # death without a reply
        ready = wait_for_connections(list(by_handle), timeout)
        return list(dict.fromkeys(by_handle[h] for h in ready))

    def shutdown(self) -> None:
        pass


# -- Ray ---------------------------------------------------------------------------
class _RayHost:
    """A Ray actor's body: the runner ``factory`` builds (no policy-phase marks on Ray).

    What its adapter starts ends with the actor: Ray's workers reap their children
    (``RAY_kill_child_processes_on_worker_exit``, on by default on Linux; checked by the tests)."""

    def __init__(self, factory):
        self.runner = factory(None)

    def run(self, job):
        return self.runner.run(job)


class _RayWorker:
    def __init__(self, actor_class, factory):
        self.actor = actor_class.remote(factory)
        self.ref = None
        self.last_affinity = None

    def submit(self, plan: Job) -> None:
        self.ref = self.actor.run.remote(plan)

    def collect(self):
        import ray

        try:
            return ray.get(self.ref)
        except ray.exceptions.RayTaskError:
            raise  # cannot happen (runners catch): a harness bug, not a lost worker
        except ray.exceptions.RayError as e:  # actor died, node lost, OOM-killed, ...
            raise WorkerLost(f"Ray worker died ({type(e).__name__})") from None

    def policy_call(self) -> str | None:
        return None  # unknown: an actor's memory may be on another node (so a lost actor is retried)

    def kill(self) -> None:
        import ray

        ray.kill(self.actor, no_restart=True)


class RayBackend:
    """Ray actors (one CPU each), on a local Ray or the cluster at ``address``."""

    def __init__(self, factory: Callable[[Any], Any], address: str | None = None, num_cpus: int | None = None):
        try:
            import ray
        except ImportError:
            raise RuntimeError("--backend ray needs Ray: pip install 'memobench[ray]'") from None
        self._started_here = not ray.is_initialized()
        if self._started_here:
            ray.init(
                address=address,
                num_cpus=None if address else num_cpus,
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
            )
        self.actor_class = ray.remote(num_cpus=1, max_restarts=0)(_RayHost)
        self.factory = factory

    def spawn(self) -> _RayWorker:
        return _RayWorker(self.actor_class, self.factory)

    def wait(self, workers: list[_RayWorker], timeout: float | None) -> list[_RayWorker]:
        import ray

        by_ref = {w.ref: w for w in workers}
        ready, _ = ray.wait(list(by_ref), num_returns=1, timeout=timeout)
        return [by_ref[r] for r in ready]

    def shutdown(self) -> None:
        import ray

        if self._started_here:
            ray.shutdown()


# -- one batch of jobs, wherever it runs ------------------------------------------------
def run_jobs(
    jobs: Iterable[Job],
    factory: Callable[[Any], Any],
    *,
    workers: int,
    backend: str = "local",
    ray_address: str | None = None,
    job_timeout: float | None = None,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    failed_result: Callable[[Job, str], Any],
    lost_in_policy: Callable[[Job, str], Any] | None = None,
    mark_retries=None,
) -> Iterator[Any]:
    """Yield the result of every job as it finishes, from ``factory(phase).run(job)``.

    ``workers`` 0 runs the jobs here, in order, on one runner (no isolation, timeout or retry);
    otherwise on :func:`dispatch` with that many workers of the ``backend`` ("local" or "ray"):
    a worker that dies or runs a job past ``job_timeout`` seconds is replaced and the job run
    again, up to ``max_attempts`` executions; then ``failed_result(job, reason)`` is its result.
    ``lost_in_policy(job, reason)`` (default ``failed_result``): a worker lost inside a policy call.
    """
    jobs = list(jobs)
    if workers == 0:
        with ending_children_started_within():  # no worker process group to end here
            runner = factory(None)
            yield from (runner.run(job) for job in jobs)
        return
    pool = RayBackend(factory, address=ray_address, num_cpus=workers) if backend == "ray" else LocalBackend(factory)
    yield from dispatch(
        jobs,
        pool,
        workers,
        failed_record=failed_result,
        policy_failed_record=lost_in_policy or failed_result,
        episode_timeout=job_timeout,
        max_attempts=max_attempts,
        mark_retries=mark_retries,
    )
