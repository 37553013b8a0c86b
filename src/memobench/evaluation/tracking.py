"""The checkpoint tracker of one episode: the task's checkpoints, home gates and commitments,
bound to the episode's binding, plus the register rules of MEMOBench's protocol."""

from __future__ import annotations

from typing import Any

from memobench.core import expr, registers
from memobench.core.bddl_names import declared_section
from memobench.core.suite import Task
from memobench.core.tracker import (
    CheckpointTracker,
    CountingMonitor,
    TrackedCheckpoint,
    TrackedViolation,
    bound_checkpoints,
    bound_predicate,
)
from memobench.evaluation.protocol import Protocol

LEFT_BEFORE_HOME = "left-before-home"  # violation: a gate's ``keep`` broke before the arm was home


def build_tracker(task: Task, binding: dict[str, Any], protocol: Protocol) -> CheckpointTracker:
    """The checkpoint tracker of one episode of ``task``, predicates bound to ``binding``.

    Tracked in order: the task's checkpoints, each home gate right after the checkpoint it
    follows. Rules: the task's violations, each gate's ``keep``, and under MEMOBench's
    protocol (``protocol.name == "memobench"``) the register rules of
    :mod:`memobench.core.registers` and the pour zone of a counting task. RoboMemArena's
    protocol gets the task's own rules only.
    """

    def bound(predicate: str) -> expr.Expr:
        return bound_predicate(predicate, binding)

    spec = task.spec
    checkpoints, index, gate_index = bound_checkpoints(spec, binding)
    violations = [
        TrackedViolation(v.name, bound(v.predicate), index.get(v.after), index.get(v.until)) for v in spec.violations
    ]
    violations += [
        TrackedViolation(LEFT_BEFORE_HOME, expr.Not(bound(gate.keep)), index[gate.after], gate_index[gate.after])
        for gate in spec.home
        if gate.keep is not None
    ]
    strict = protocol.name == "memobench"
    if strict:
        violations += _register_rules(task, binding, checkpoints)
    counting, pour_params = None, None
    if spec.counting is not None:
        c = spec.counting
        counting = CountingMonitor(
            c.object,
            c.target,
            c.required,
            protocol.extra_pour_monitor_steps,
            protocol.fail_on_extra_pour,
            zone=registers.POUR_ZONE if strict else None,
        )
        pour_params = {
            "near_radius": c.near_radius,
            "baseline_samples": c.baseline_samples,
            "near_during": c.near_during,
        }
    return CheckpointTracker(
        checkpoints,
        counting=counting,
        pour_params=pour_params,
        violations=violations,
        post_goal_steps=protocol.monitor_steps_for(task),
    )


def _register_rules(
    task: Task, binding: dict[str, Any], checkpoints: list[TrackedCheckpoint]
) -> list[TrackedViolation]:
    bddl = task.bddl(binding)
    rules = [
        TrackedViolation(name, expr.parse(text), None, until)
        for name, text, until in registers.object_rules(bddl, checkpoints, free=task.spec.moves_early)
    ]
    parts = registers.fixture_parts(declared_section(bddl, "fixtures"))
    rules += [TrackedViolation(name, expr.parse(text)) for name, text in registers.ajar_rules(parts)]
    return rules
