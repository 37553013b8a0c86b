"""``memobench collect``: run the expert, keep its successful episodes as demonstrations.

Seeds: demonstration attempt ``a`` of a task uses seed ``seed_base + a``, with
:data:`DEMO_SEED_BASE` = 1,000,000 by default. Evaluation uses seed 7 + e
(PROTOCOL.md), so demonstrations never share an episode (binding, layout)
with an evaluation run of fewer than 999,993 episodes per task. Collection
is camera-free; ``memobench data render`` adds images afterwards.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memobench.data.demo_file import Demo, checkpoint_annotation, file_attrs, write_task_file
from memobench.data.recorder import DemoRecorder
from memobench.evaluation.episode import run_episode
from memobench.evaluation.protocol import Protocol, plan_episode
from memobench.suite import Task

DEMO_SEED_BASE = 1_000_000
MAX_ATTEMPTS_FACTOR = 3  # give up on a task after 3x the requested demos without enough successes


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


def record_demo(task: Task, attempt: int, seed_base: int, env, guard, protocol: Protocol) -> tuple[bool, Demo]:
    """Run one expert attempt with a recorder; returns (success, the demo)."""
    plan = plan_episode(task, attempt, seed_base)
    recorder = DemoRecorder()
    outcome = run_episode(task, plan, env, guard, protocol, recorder=recorder)
    record = outcome.record
    attrs = {
        "seed": plan.seed, "attempt": attempt, "variant": plan.variant, "binding": record.binding,
        "layout_seed": plan.layout_seed, "bddl": task.bddl(plan.binding),
        "checkpoints": checkpoint_annotation(task, [c.step for c in record.checkpoints]),
        "policy_start": len(recorder.cue.states), "end_reason": record.end_reason,
    }
    return record.success and bool(recorder.actions), Demo(recorder.arrays() if recorder.actions else {}, attrs)


def collect_task(task: Task, episodes: int, out: Path, *, seed_base: int = DEMO_SEED_BASE,
                 protocol: Protocol | None = None,
                 on_attempt: Callable[[int, int], None] | None = None) -> TaskCollection:
    """Collect ``episodes`` successful expert demos of ``task`` into ``out/<task_id>.hdf5``.

    ``on_attempt(kept, attempts)`` is called after every attempt (progress).
    Stops after ``MAX_ATTEMPTS_FACTOR * episodes`` attempts even if short.
    """
    from memobench.evaluation.envs import EnvCache
    from memobench.policies.adapter import AdapterGuard
    from memobench.policies.loader import build_adapter, builtin_spec

    protocol = protocol or Protocol(seed=seed_base, adapter_timeout=0)
    guard = AdapterGuard(build_adapter(builtin_spec("expert")), timeout=None)
    envs = EnvCache(capacity=1)
    demos: list[Demo] = []
    attempts = 0
    try:
        while len(demos) < episodes and attempts < MAX_ATTEMPTS_FACTOR * episodes:
            plan = plan_episode(task, attempts, seed_base)
            env, _ = envs.get(task, plan.variant, plan.binding, render=False)
            success, demo = record_demo(task, attempts, seed_base, env, guard, protocol)
            attempts += 1
            if success:
                demos.append(demo)
            if on_attempt:
                on_attempt(len(demos), attempts)
    finally:
        envs.close()
        guard.close()
    path = out / f"{task.id}.hdf5"
    write_task_file(path, file_attrs(task, seed_base, attempts, demos), demos)
    return TaskCollection(task.id, len(demos), attempts, sum(d.length for d in demos), path)
