"""Ordered checkpoint tracker: prefix completion, stage scoring, extra-pour monitor.

Semantics (docs/protocol.md, "Checkpoints" and "Commitments"):

- **Prefix completion.** Checkpoint k is *eligible* once every *required*
  checkpoint before it is complete. It completes at the first step at which
  it is eligible and its predicate holds; that step is recorded. A predicate
  that holds before its checkpoint is eligible does not count (an
  out-of-order checkpoint does not count). Optional checkpoints never block
  later ones; once eligible, an optional checkpoint stays eligible until it
  completes (even after later required checkpoints completed).
- **History is per checkpoint.** A checkpoint's history nodes (``ever``,
  ``then``, ``held`` and their sugar) start fresh at the step it becomes
  eligible and are advanced only while it is eligible and incomplete, so
  evidence from before its predecessor completed does not count (checking
  the middle drawer before the top one does not satisfy "middle checked
  after top").
- **Pour counters are episode-wide.** Every (obj, target) pair read by any
  checkpoint or by the counting monitor is updated every step, before the
  checkpoints are evaluated.
- **Cascading.** Checkpoints are evaluated in order within a step, so after
  k completes at step t the next eligible checkpoint is evaluated at the same
  step t (its history starting at t).
- **Stages rebaseline pours.** At every step where a required checkpoint
  completes (a new stage starts), the pour counters rebaseline to the
  current tilts (after all checkpoints were evaluated for that step), except
  a counter whose pour completed on that very step (it keeps its baseline).
- **Counting monitor.** When ``count(object, target)`` first reaches
  ``required`` at step t, the window covers steps t+1 .. t+monitor_steps.
  Every further pour completed in the window is recorded in
  ``extra_pours``; with ``fail_on_extra`` the first one also sets
  ``violation = "extra_pour"`` (sticky). Pours after the window are counted
  but are not violations.
- **Violations (commitments).** A rule is active from the step its ``after``
  checkpoint completes (from the first step without one) until the step its
  ``until`` checkpoint completes; it is evaluated every step it is active,
  after the checkpoints, its history starting fresh when it becomes active.
  The first rule that holds sets ``violation`` (sticky) and records its name
  and step; rules are checked in their listed order.
- **Post-goal window.** When the last required checkpoint completes at step
  g, the episode must also run steps g+1 .. g+post_goal_steps (rules active
  after the goal watch them) before it counts as finished.
- **Home gates.** A checkpoint flagged ``gate`` (the arm back at its start pose,
  docs/protocol.md "Registers") is tracked like a required checkpoint (it
  blocks later ones until it completes; a gate after the last checkpoint must
  complete for the goal) but is no memory checkpoint: results, stage scores
  and :attr:`completed_steps` leave gates out (:meth:`gate_steps` has them),
  and completing one starts no new pour stage.
- **Finished** means the episode is a success if it stops now: every required
  checkpoint (and gate) is complete, there is no violation, the post-goal window
  has passed and, for a counting task, the extra-pour monitor window has fully
  passed (the last step seen is >= t + monitor_steps).

The tracker never stops by itself. The caller ends the episode on a
``violation`` and at the horizon, a success if ``finished`` there
(MEMOBench's protocol: the commitments hold to the horizon, and the post-goal
window is the fewest steps that must follow the goal before it); under
RoboMemArena's protocol it also ends it as soon as ``finished``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from memobench.core import expr
from memobench.core.expr import Expr
from memobench.core.predicates import CompiledPredicate, PourCounters, StateView, compile_predicate
from memobench.core.records import CheckpointResult
from memobench.core.spec import MemoryOp, TaskSpec

EXTRA_POUR = "extra_pour"
POUR_OUTSIDE_ZONE = "pour-outside-zone"  # violation: a counted pour started or ended outside the zone


@dataclass(frozen=True)
class TrackedCheckpoint:
    """One checkpoint instance: a substituted predicate and its memory-op label."""

    predicate: Expr
    op: MemoryOp | None
    optional: bool = False
    gate: bool = False  # a home gate: tracked in order, counted by no metric (op None)

    def __post_init__(self) -> None:
        if self.gate and (self.optional or self.op is not None):
            raise ValueError("a gate is required and has no memory op")
        if not self.gate and self.op is None:
            raise ValueError("a memory checkpoint needs an op")


@dataclass(frozen=True)
class TrackedViolation:
    """One commitment of an episode: a substituted predicate and when it is watched.

    ``after`` / ``until`` are checkpoint indices (None: from the start / to the end).
    """

    name: str
    predicate: Expr
    after: int | None = None
    until: int | None = None


def bound_predicate(predicate: str, binding: Mapping[str, object]) -> Expr:
    """``predicate`` (text) parsed, its ``$`` references replaced by ``binding``'s values."""
    return expr.substitute(expr.parse(predicate), binding)


def bound_checkpoints(
    spec: TaskSpec, binding: Mapping[str, object]
) -> tuple[list[TrackedCheckpoint], dict[str, int], dict[str, int]]:
    """The tracked sequence of a task under a binding: its checkpoints in order, each home gate right
    after the checkpoint it follows (``home()``, and its ``where`` when set), predicates bound.

    Returns the sequence, checkpoint id -> its index, and checkpoint id -> the index of the gate after it.
    """
    gates = {gate.after: gate for gate in spec.home}
    checkpoints: list[TrackedCheckpoint] = []
    index: dict[str, int] = {}
    gate_index: dict[str, int] = {}
    for cp in spec.checkpoints:
        index[cp.id] = len(checkpoints)
        checkpoints.append(TrackedCheckpoint(bound_predicate(cp.predicate, binding), cp.op, cp.optional))
        if cp.id in gates:
            gate_index[cp.id] = len(checkpoints)
            gate = gates[cp.id]
            passed = "home()" if gate.where is None else f"home() and ({gate.where})"
            checkpoints.append(TrackedCheckpoint(bound_predicate(passed, binding), None, gate=True))
    return checkpoints, index, gate_index


@dataclass(frozen=True)
class CountingMonitor:
    """Extra-action rejection for a counting task (exactly ``required`` pours)."""

    object: str
    target: str
    required: int
    monitor_steps: int = 30
    fail_on_extra: bool = True
    # Pour zone (m, xy, object to target; None: no zone rule): every counted pour must start and
    # end this close over the target, or the episode fails with :data:`POUR_OUTSIDE_ZONE`.
    zone: float | None = None

    def __post_init__(self) -> None:
        if self.required < 1:
            raise ValueError(f"CountingMonitor.required must be >= 1, got {self.required}")
        if self.monitor_steps < 0:
            raise ValueError(f"CountingMonitor.monitor_steps must be >= 0, got {self.monitor_steps}")


class CheckpointTracker:
    """Tracks one episode's checkpoints (see the module docstring for the rules).

    ``pour_params`` (``away``, ``back``, ``near_radius``) configure every pour
    counter. Call :meth:`reset` before each episode (without it, pour
    baselines are the first tilts seen). Raises
    :class:`~memobench.core.expr.ExprError` if a predicate is not a valid
    substituted predicate, ValueError for an empty checkpoint list.
    """

    def __init__(
        self,
        checkpoints: Sequence[TrackedCheckpoint],
        counting: CountingMonitor | None = None,
        pour_params: dict | None = None,
        violations: Sequence[TrackedViolation] = (),
        post_goal_steps: int = 0,
    ) -> None:
        if not any(not c.gate for c in checkpoints):
            raise ValueError("CheckpointTracker needs at least one checkpoint")
        if post_goal_steps < 0:
            raise ValueError(f"post_goal_steps must be >= 0, got {post_goal_steps}")
        self.checkpoints = tuple(checkpoints)
        self.counting = counting
        self.violations = tuple(violations)
        self.post_goal_steps = post_goal_steps
        for v in self.violations:
            for index in (v.after, v.until):
                if index is not None and not 0 <= index < len(self.checkpoints):
                    raise ValueError(
                        f"violation {v.name!r} refers to checkpoint {index}, but there are {len(self.checkpoints)}"
                    )
        self._compiled: list[CompiledPredicate] = [compile_predicate(c.predicate) for c in self.checkpoints]
        self._rules: list[CompiledPredicate] = [compile_predicate(v.predicate) for v in self.violations]
        pairs = set().union(*(p.pour_pairs() for p in self._compiled + self._rules))
        if counting is not None:
            pairs.add((counting.object, counting.target))
        self._counters = PourCounters(pairs, **(pour_params or {}))
        self._clear()

    def _clear(self) -> None:
        n = len(self.checkpoints)
        self._completed: list[int | None] = [None] * n
        self._violation: str | None = None
        self._violation_step: int | None = None
        self._active = [False] * len(self.violations)
        self._goal_step: int | None = None
        self._extra: list[int] = []  # steps at which a pour completed inside the window
        self._window_start: int | None = None  # step t at which the required count was reached
        self._last_step: int | None = None
        for pred in self._compiled + self._rules:
            pred.reset()

    def reset(self, view: StateView) -> None:
        """Start a new episode: forget everything; pour baselines from ``view``."""
        self._clear()
        self._counters.reset(view)

    def update(self, view: StateView, step: int) -> list[int]:
        """Advance one control step; returns the indices completed at this step.

        Call once per step with increasing ``step``; ValueError otherwise.
        """
        if self._last_step is not None and step <= self._last_step:
            raise ValueError(f"steps must increase: got {step} after {self._last_step}")
        self._last_step = step
        poured = self._counters.update(view)
        self._monitor(step, poured)
        done = self._advance(view, step)
        if any(not self.checkpoints[i].optional and not self.checkpoints[i].gate for i in done):
            self._counters.rebaseline(view)
        if self._goal_step is None and self.required_done:
            self._goal_step = step
        self._watch(view, step)
        return done

    def _watch(self, view: StateView, step: int) -> None:
        for i, (rule, pred) in enumerate(zip(self.violations, self._rules, strict=True)):
            started = rule.after is None or self._completed[rule.after] is not None
            ended = rule.until is not None and self._completed[rule.until] is not None
            if not started or ended:
                self._active[i] = False
                continue
            if not self._active[i]:  # becomes active now: its history starts here
                pred.reset()
                self._active[i] = True
            if pred.evaluate(view, self._counters) and self._violation is None:
                self._violation, self._violation_step = rule.name, step

    def _monitor(self, step: int, poured: list[tuple[str, str]]) -> None:
        mon = self.counting
        if mon is None:
            return
        pair = (mon.object, mon.target)
        outside = mon.zone is not None and pair in poured and max(self._counters.last_place(*pair)) > mon.zone
        if outside and self._violation is None:
            self._violation, self._violation_step = POUR_OUTSIDE_ZONE, step
        if self._window_start is None:
            if self._counters.count(mon.object, mon.target) >= mon.required:
                self._window_start = step
            return
        in_window = step <= self._window_start + mon.monitor_steps
        if in_window and (mon.object, mon.target) in poured:
            self._extra.append(step)
            if mon.fail_on_extra and self._violation is None:
                self._violation, self._violation_step = EXTRA_POUR, step

    def _advance(self, view: StateView, step: int) -> list[int]:
        done: list[int] = []
        for i, (cp, pred) in enumerate(zip(self.checkpoints, self._compiled, strict=True)):
            if self._completed[i] is not None:
                continue
            # Only eligible checkpoints are evaluated, so a checkpoint's history
            # (reset at episode start) sees nothing from before it became eligible.
            if pred.evaluate(view, self._counters):
                self._completed[i] = step
                done.append(i)
            elif not cp.optional:
                break  # an incomplete required checkpoint blocks everything after it
        return done

    # ------------------------------------------------------------ results

    def hold_until(self, step: int) -> None:
        """Count the steps up to ``step`` as seen with nothing changing: no checkpoint completes,
        no rule fires, no pour. The caller's guarantee (a finished policy in a still scene, the
        harness's ``Stillness``); only the windows' clocks move, so :attr:`finished` then says
        whether the episode would be a success at ``step``. ValueError for a step before the last seen."""
        if self._last_step is not None and step < self._last_step:
            raise ValueError(f"cannot hold until step {step}: step {self._last_step} was seen")
        self._last_step = step

    @property
    def _memory(self) -> list[int]:
        """Indices of the memory checkpoints (every checkpoint but the gates)."""
        return [i for i, c in enumerate(self.checkpoints) if not c.gate]

    @property
    def completed_steps(self) -> list[int | None]:
        """Per memory checkpoint (gates left out), the step at which it completed, or None (a copy)."""
        return [self._completed[i] for i in self._memory]

    def gate_steps(self) -> list[int | None]:
        """Per home gate, in order, the step at which the arm was home, or None."""
        return [s for c, s in zip(self.checkpoints, self._completed, strict=True) if c.gate]

    @property
    def violation(self) -> str | None:
        """The first violation's name (``"extra_pour"`` for the counting monitor), else None."""
        return self._violation

    @property
    def violation_step(self) -> int | None:
        """The step at which :attr:`violation` was recorded, else None."""
        return self._violation_step

    @property
    def goal_step(self) -> int | None:
        """Step at which the last required checkpoint completed (None: not yet)."""
        return self._goal_step

    @property
    def extra_pours(self) -> list[int]:
        """Steps at which a pour completed inside the monitor window (a copy)."""
        return list(self._extra)

    @property
    def window_start(self) -> int | None:
        """Step at which the required pour count was first reached (None: not yet)."""
        return self._window_start

    @property
    def _required(self) -> list[int]:
        return [i for i, c in enumerate(self.checkpoints) if not c.optional]

    @property
    def current_index(self) -> int | None:
        """The first incomplete required checkpoint, or None when all are done."""
        return next((i for i in self._required if self._completed[i] is None), None)

    @property
    def required_done(self) -> bool:
        return self.current_index is None

    @property
    def stages_complete(self) -> bool:
        """Per-episode TSR: every required checkpoint completed and both monitor windows
        passed without a violation (the same as :attr:`finished`)."""
        return self.finished

    @property
    def monitor_passed(self) -> bool:
        """The post-goal window after the last required checkpoint has ended."""
        if self._goal_step is None or self._last_step is None:
            return False
        return self._last_step >= self._goal_step + self.post_goal_steps

    @property
    def window_passed(self) -> bool:
        """For a counting task: the monitor window after the required pours has ended."""
        if self.counting is None:
            return True
        if self._window_start is None or self._last_step is None:
            return False
        return self._last_step >= self._window_start + self.counting.monitor_steps

    @property
    def finished(self) -> bool:
        """Success so far: required checkpoints done, no violation, both windows passed."""
        return self.required_done and self._violation is None and self.monitor_passed and self.window_passed

    @property
    def stage_score(self) -> float:
        """Completed required / required memory checkpoints (1.0 if none are required; gates left out)."""
        req = [i for i in self._required if not self.checkpoints[i].gate]
        if not req:
            return 1.0
        return sum(self._completed[i] is not None for i in req) / len(req)

    @property
    def average_score(self) -> float:
        """Completed / all memory checkpoints, optional ones included (gates left out)."""
        steps = self.completed_steps
        return sum(s is not None for s in steps) / len(steps)

    def results(self) -> list[CheckpointResult]:
        """One :class:`CheckpointResult` per memory checkpoint, in order (gates left out)."""
        return [
            CheckpointResult(
                index=k,
                op=self.checkpoints[i].op,
                optional=self.checkpoints[i].optional,
                completed=self._completed[i] is not None,
                step=self._completed[i],
            )
            for k, i in enumerate(self._memory)
        ]

    def pour_counts(self) -> dict[str, int]:
        """Pours seen so far, keyed ``"obj->target"``."""
        return self._counters.counts()

    def pour_tilts(self) -> dict[str, list[float]]:
        """The peak tilt (rad) of each pour seen so far, keyed ``"obj->target"``."""
        return self._counters.peaks()
