"""``memobench collect``: run the expert, keep its successful episodes as demonstrations.

Seeds: demonstration attempt ``a`` of a task uses seed ``seed_base + a``, with
:data:`DEMO_SEED_BASE` = 1,000,000 by default. Evaluation uses seed 7 + e
(docs/protocol.md), so demonstrations never share an episode (binding, layout)
with an evaluation run of fewer than 999,993 episodes per task. Collection
is camera-free; ``memobench data render`` adds images afterwards.

Collection queries the expert at every step (replan interval 1). Its actions do not depend
on the interval (it plans a chunk by simulating it in a copy of the scene; tests pin the
invariance), so the demos are the ones replan 5 would record, bit for bit, while at interval
1 the copy simulates nothing ahead: an expert step took 0.65x the time on S01, 0.79x on P02
(``benchmarks/expert_speed.py``; the same demos checked array for array on both tasks).

Perturbed execution (``action_noise`` > 0, :mod:`memobench.data.perturb`): the expert is
queried every step and its actions executed with noise. A demo then stores the expert's
actions as ``actions`` (what a policy learns) and what ran as ``executed_actions`` (what
replays it); the file's ``action_noise`` attribute says which kind of collection it is.

Resuming: every attempt is journaled as it finishes, in
``<out>/<task_id>.attempts/`` (one small file per attempt, written
atomically), and the journal is folded into ``<task_id>.hdf5`` when the task
is done. Collecting again into the same folder skips a task whose file
already holds enough demos, extends one that holds fewer, and picks up a
killed task at its first unjournaled attempt. Attempts are deterministic by
seed, so a resumed collection writes the same file as an uninterrupted one.

Known failures (:mod:`memobench.data.outcomes`): attempts an earlier collection of the same
spec, seed base and noise saw fail are journaled as failures without being run, so a
collection made again on another machine writes the same file in less time.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memobench.core.suite import Task
from memobench.data.demo_file import (
    Demo,
    checkpoint_annotation,
    file_attrs,
    read_file_summary,
    read_task_file,
    write_task_file,
)
from memobench.data.perturb import PerturbedExecution
from memobench.data.recorder import DemoRecorder
from memobench.evaluation.episode import run_episode
from memobench.evaluation.protocol import Protocol, plan_episode

DEMO_SEED_BASE = 1_000_000
MAX_ATTEMPTS_FACTOR = 3  # give up on a task after 3x the requested demos without enough successes


class CollectionConflict(ValueError):
    """The output folder holds a collection this one cannot continue (the message says why)."""


@dataclass(frozen=True)
class TaskCollection:
    """What collecting one task gave: demos kept, attempts made, where they went."""

    task_id: str
    kept: int
    attempts: int
    steps: int
    path: Path

    @property
    def success_rate(self) -> float:
        return self.kept / self.attempts if self.attempts else 0.0


def record_demo(
    task: Task,
    attempt: int,
    seed_base: int,
    env,
    guard,
    protocol: Protocol,
    perturbed: PerturbedExecution | None = None,
) -> tuple[bool, Demo]:
    """Run one expert attempt with a recorder; returns (success, the demo).

    With ``perturbed`` (the adapter ``guard`` wraps, run at replan interval 1) the demo's
    ``actions`` are the expert's labels and ``executed_actions`` what ran."""
    plan = plan_episode(task, attempt, seed_base)
    recorder = DemoRecorder()
    outcome = run_episode(task, plan, env, guard, protocol, recorder=recorder)
    record = outcome.record
    attrs = {
        "seed": plan.seed,
        "attempt": attempt,
        "variant": plan.variant,
        "binding": record.binding,
        "layout_seed": plan.layout_seed,
        "arm_jitter": protocol.arm_start_jitter,
        "bddl": task.bddl(plan.binding),
        "checkpoints": checkpoint_annotation(task, [c.step for c in record.checkpoints]),
        "policy_start": len(recorder.cue.states),
        "end_reason": record.end_reason,
    }
    labels = None if perturbed is None else perturbed.labels
    return record.success and bool(recorder.actions), Demo(recorder.arrays(labels) if recorder.actions else {}, attrs)


class AttemptJournal:
    """One task's finished attempts, one file each, so a killed collection loses none."""

    def __init__(self, folder: Path):
        self.folder = folder

    def _path(self, attempt: int) -> Path:
        return self.folder / f"attempt_{attempt:07d}.hdf5"

    def add(self, attempt: int, success: bool, demo: Demo) -> None:
        write_task_file(self._path(attempt), {"attempt": attempt, "success": success}, [demo] if success else [])

    def replay(self, first: int) -> list[Demo | None]:
        """The journaled attempts ``first, first + 1, ...`` up to the first gap: the demo, or None for a failure."""
        out: list[Demo | None] = []
        while self._path(first + len(out)).exists():
            attrs, demos = read_task_file(self._path(first + len(out)))
            out.append(demos[0] if attrs["success"] else None)
        return out

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def check_can_continue(task: Task, out: Path, seed_base: int, action_noise: float = 0.0) -> None:
    """Raise :class:`CollectionConflict` if ``out`` holds this task collected some other way."""
    path = out / f"{task.id}.hdf5"
    if not path.exists():
        return
    attrs, _ = read_file_summary(path)
    for key, want, have in (
        ("seed_base", seed_base, attrs.get("seed_base")),
        ("spec_hash", task.spec_hash, attrs.get("spec_hash")),
        ("action_noise", float(action_noise), attrs.get("action_noise", 0.0)),  # files before the option: none
    ):
        if have != want:
            raise CollectionConflict(
                f"{path} holds a collection with {key} {have!r}, not {want!r} "
                "(the task, --seed-base or --action-noise changed): collect into a new --out folder"
            )
    if "image_size" in attrs:
        raise CollectionConflict(
            f"{path} has rendered images; extending it would leave its new demos without "
            "them: collect into a new --out folder"
        )


def _earlier_collection(task: Task, out: Path, seed_base: int, action_noise: float) -> tuple[list[Demo], int]:
    """The demos and attempt count ``out`` already holds for ``task`` (none if no file)."""
    check_can_continue(task, out, seed_base, action_noise)
    path = out / f"{task.id}.hdf5"
    if not path.exists():
        return [], 0
    attrs, demos = read_task_file(path, images=False)
    return demos, int(attrs["attempts"])


def collect_task(
    task: Task,
    episodes: int,
    out: Path,
    *,
    seed_base: int = DEMO_SEED_BASE,
    action_noise: float = 0.0,
    protocol: Protocol | None = None,
    on_attempt: Callable[[int, int], None] | None = None,
    known_failures: frozenset[int] = frozenset(),
) -> TaskCollection:
    """Collect ``episodes`` successful expert demos of ``task`` into ``out/<task_id>.hdf5``.

    Attempts in ``known_failures`` (the same spec, seed base and noise failed them before:
    :func:`memobench.data.outcomes.known_failures`) count as failed without being run.

    ``on_attempt(kept, attempts)`` is called after every attempt (progress),
    journaled ones included. Stops after ``MAX_ATTEMPTS_FACTOR * episodes``
    attempts even if short. Continues what ``out`` already holds for the task
    (see the module docstring); raises :class:`CollectionConflict` if that
    was made with another seed base or task spec.
    """
    from memobench.evaluation.envs import EnvCache
    from memobench.policies.adapter import AdapterGuard
    from memobench.policies.loader import build_adapter, builtin_spec

    path = out / f"{task.id}.hdf5"
    demos, attempts = _earlier_collection(task, out, seed_base, action_noise)
    if len(demos) >= episodes:
        if on_attempt:
            on_attempt(len(demos), attempts)
        return TaskCollection(task.id, len(demos), attempts, sum(d.length for d in demos), path)
    journal = AttemptJournal(out / f"{task.id}.attempts")
    for demo in journal.replay(attempts):
        if len(demos) >= episodes:  # journaled by a run that asked for more
            break
        attempts += 1
        if demo is not None:
            demos.append(demo)
        if on_attempt:
            on_attempt(len(demos), attempts)
    # Replan 1: the same demos, no look-ahead simulated (module docstring); a perturbed
    # collection needs it anyway: a label for every executed step, the expert decides each one.
    # A demo ends once the post-goal window has passed (not at the horizon): the rest would be
    # the expert holding still.
    protocol = (protocol or Protocol(seed=seed_base, adapter_timeout=0)).model_copy(
        update={"replan_steps": 1, "commitments_to_horizon": False}
    )
    expert = build_adapter(builtin_spec("expert"))
    perturbed = PerturbedExecution(expert, action_noise) if action_noise else None
    guard = AdapterGuard(perturbed or expert, timeout=None)
    # Attempts cycle through the task's variants (scenes): with one env cached, two attempts in
    # three built one (~5 s); the default three hold every variant of 26 tasks (reuse leaves no trace).
    envs = EnvCache()
    try:
        while len(demos) < episodes and attempts < MAX_ATTEMPTS_FACTOR * episodes:
            if attempts in known_failures:
                success, demo = False, Demo({}, {})
            else:
                plan = plan_episode(task, attempts, seed_base)
                env, _ = envs.get(task, plan.variant, plan.binding, render=False)
                success, demo = record_demo(task, attempts, seed_base, env, guard, protocol, perturbed)
            journal.add(attempts, success, demo)
            attempts += 1
            if success:
                demos.append(demo)
            if on_attempt:
                on_attempt(len(demos), attempts)
    finally:
        envs.close()
        guard.close()
    write_task_file(path, file_attrs(task, seed_base, attempts, demos, action_noise), demos)
    journal.remove()
    return TaskCollection(task.id, len(demos), attempts, sum(d.length for d in demos), path)
