"""Task specification models: what a task file declares, validated on load.

A task is a folder ``tasks/<family>/<task_id>/`` holding ``task.yaml`` (this
model) and ``task.bddl`` (a BDDL template with ``{{binding.key}}``
placeholders); the second suite's tasks (RoboMemArena's) sit under
``tasks/arena/<family>/<task_id>/``. Specs are frozen and round-trip to JSON, so the resolved spec
is written into every result folder and hashed.
"""

from __future__ import annotations

import math
import re
from enum import StrEnum
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

TASK_ID_PATTERN = r"^[TSOPA]\d\d-[a-z0-9]+(-[a-z0-9]+)*$"


class MemoryType(StrEnum):
    """What must stay available beyond the current image (the task family)."""

    TEMPORAL = "temporal"
    SPATIAL = "spatial"
    OBJECT = "object"
    PROCEDURAL = "procedural"


class ArenaFamily(StrEnum):
    """The family of a task of the second suite, RoboMemArena's 26 tasks (docs/arena.md).

    Kept apart from :class:`MemoryType`: the MEMOBench tables, metrics and certification
    group by memory type, and arena tasks stay out of them unless selected.
    """

    SEQUENCE = "sequence"
    OCCLUSION = "occlusion"
    COUNTING = "counting"
    TRANSFER = "transfer"


MEMOBENCH_SUITE = "memobench"
ARENA_SUITE = "arena"


class MemoryOp(StrEnum):
    """The memory operation a checkpoint tests (one label per checkpoint)."""

    STORAGE = "storage"
    UPDATE = "update"
    COMPRESSION = "compression"


class LanguageLevel(StrEnum):
    """The three language levels of a checkpoint text (and of the oracle condition)."""

    COARSE = "coarse"
    INTERMEDIATE = "intermediate"
    FINE = "fine"


MIN_HORIZON = 1200  # the paper's horizon: control steps every task gets at least
DEFAULT_MONITOR_STEPS = 30  # post-goal window, as RoboMemArena's extra-pour monitor

FAMILY_PREFIX = {
    MemoryType.TEMPORAL: "T",
    MemoryType.SPATIAL: "S",
    MemoryType.OBJECT: "O",
    MemoryType.PROCEDURAL: "P",
    **dict.fromkeys(ArenaFamily, "A"),
}

NonEmpty = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CheckpointText(_Frozen):
    """A checkpoint described at three levels of detail."""

    coarse: NonEmpty
    intermediate: NonEmpty
    fine: NonEmpty

    def at(self, level: LanguageLevel | str) -> str:
        return str(getattr(self, LanguageLevel(level).value))


class CheckpointSpec(_Frozen):
    """One ordered memory checkpoint: its texts, its op label and its predicate template."""

    id: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]*$")]
    op: MemoryOp
    # Why the op label, by the rule of docs/protocol.md ("Operation labels"); every shipped
    # checkpoint has one (a suite test checks), so the catalogue can show it.
    why: str = ""
    text: CheckpointText
    predicate: NonEmpty  # an expression of memobench.core.expr, may reference $bindings
    optional: bool = False


class ViolationSpec(_Frozen):
    """A commitment: the episode ends as failed the first step ``predicate`` holds while active.

    Active from the step checkpoint ``after`` completes (from the first step when
    None) until the step checkpoint ``until`` completes (to the end when None).
    A rule ``after`` the task's last required checkpoint is a *post-goal* rule: it
    watches every step after the goal (to the horizon under MEMOBench's protocol; the
    ``monitor_steps`` window under RoboMemArena's, whose end declares success).
    History nodes in ``predicate`` (``ever``, ``then``, ``held``) start fresh when
    the rule becomes active.
    """

    name: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]*$")]
    predicate: NonEmpty  # an expression of memobench.core.expr, may reference $bindings
    after: str | None = None  # checkpoint id
    until: str | None = None  # checkpoint id
    text: NonEmpty  # what the policy did, in words (tasks show, catalogue, report)


class HomeGateSpec(_Frozen):
    """The arm must come back to its start pose (``home()``) after checkpoint ``after`` and before
    anything later counts (docs/protocol.md, "Registers").

    A gate closes the arm's pose as a register: where the hand stopped (at the handle of the
    drawer it just shut, say) would otherwise tell a memoryless policy what it did. The next
    checkpoint cannot complete until the arm has been home; ``keep`` (a predicate) must hold
    from ``after`` until then, or the episode fails with violation ``left-before-home``
    (e.g. no drawer opens before the arm is home). A gate after the last required checkpoint
    is an end gate: success needs the arm home after the goal. Gates are not memory
    checkpoints: they have no op label and no metric counts them. ``where`` (a predicate)
    must hold together with ``home()`` for the gate to pass: what the scene must look like
    when the arm is back (T09/T10: the bottle stood back in its place, so neither the hand
    nor the bottle carries the count).
    """

    after: NonEmpty  # checkpoint id
    keep: str | None = None  # an expression of memobench.core.expr, may reference $bindings
    where: str | None = None  # likewise


class CountingSpec(_Frozen):
    """Extra-action rejection for counting tasks (docs/protocol.md): pours of object over target."""

    object: NonEmpty
    target: NonEmpty
    required: Annotated[int, Field(ge=1)]
    near_radius: Annotated[float, Field(gt=0)] = 0.15  # metres, xy, object to target
    # The arena's pour rule (docs/arena.md) differs from MEMOBench's in two places; both
    # fields are hashed only when set, so the MEMOBench tasks keep their spec hashes.
    # The baseline is the median of the first n tilts of a stage (1: the tilt at its start).
    baseline_samples: Annotated[int, Field(ge=1, le=50)] = 1
    # True: the object may be near the target at any step of the excursion; False: at its start.
    near_during: bool = False


class CueSpec(_Frozen):
    """The scripted prompt video shown before the policy acts (object/procedural tasks).

    ``kind: point`` hovers the gripper over each target in turn, then returns home;
    it needs ``targets``: object names or binding references, resolved per episode.
    ``kind: demo`` shows the routine performed: the task's scripted expert, told the
    episode's binding, does the task in the episode's own scene. It takes no targets
    (the binding says everything) and needs the task to have an expert plan.
    Either way the scene is then restored exactly to its state before the cue.
    """

    kind: str = "point"
    targets: list[NonEmpty] = Field(default_factory=list)

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, kind: str) -> str:
        if kind not in CUE_KINDS:
            raise ValueError(f"unknown cue kind {kind!r}; allowed: {', '.join(sorted(CUE_KINDS))}")
        return kind

    @model_validator(mode="after")
    def _targets_fit_kind(self) -> CueSpec:
        if self.kind == "point" and not self.targets:
            raise ValueError("a point cue needs targets: the objects (or $binding references) to point at")
        if self.kind == "demo" and self.targets:
            raise ValueError("a demo cue takes no targets: the expert performs the episode's binding")
        return self


CUE_KINDS = {"point", "demo"}

BindingValue = str | list[str] | dict[str, str | list[str]]


class TaskSpec(_Frozen):
    """Everything a task file declares (``task.yaml``)."""

    id: Annotated[str, StringConstraints(pattern=TASK_ID_PATTERN)]
    family: MemoryType | ArenaFamily
    instruction: NonEmpty
    # Control steps: 1,200 (the paper's), or 3x the expert's slowest time to the goal plus
    # the post-goal window where that is longer (docs/protocol.md, "Horizons"). No task may
    # lean on its horizon to stop a memoryless agent: its violations do that.
    horizon: Annotated[int, Field(ge=MIN_HORIZON, le=5000)] = MIN_HORIZON
    tags: list[Annotated[str, StringConstraints(pattern=r"^[a-z0-9-]+$")]] = Field(default_factory=list)
    bindings: dict[
        Annotated[str, StringConstraints(pattern=r"^[a-z_][a-z0-9_]*$")],
        Annotated[list[BindingValue], Field(min_length=1)],
    ] = Field(default_factory=dict)
    chance_level: Annotated[float, Field(ge=0, le=1)] | None = None
    counting: CountingSpec | None = None
    cue: CueSpec | None = None
    checkpoints: Annotated[list[CheckpointSpec], Field(min_length=1)]
    # Post-goal window: steps run after the last required checkpoint before success is
    # declared; a violation in it (undoing or redoing a step) fails the episode.
    monitor_steps: Annotated[int, Field(ge=0, le=1000)] = DEFAULT_MONITOR_STEPS
    violations: list[ViolationSpec] = Field(default_factory=list)
    home: list[HomeGateSpec] = Field(default_factory=list)
    # Objects a later checkpoint is about that may move before it is current (a pack lying on
    # the one the first checkpoint moves): no moved-early rule (docs/protocol.md, "Registers").
    moves_early: list[Annotated[str, StringConstraints(pattern=r"^[a-z_][a-z0-9_]*$")]] = Field(default_factory=list)
    notes: str = ""  # deviations from the suite design (docs/design.md) and why

    @field_validator("family", mode="before")
    @classmethod
    def _known_family(cls, family: Any) -> Any:
        # One message naming every family, not one per suite's enum.
        for kind in (MemoryType, ArenaFamily):
            if family in {m.value for m in kind}:
                return kind(family)
        allowed = ", ".join(repr(m.value) for m in (*MemoryType, *ArenaFamily))
        raise ValueError(f"Input should be one of {allowed}")

    @model_validator(mode="after")
    def _consistent(self) -> TaskSpec:
        prefix = FAMILY_PREFIX[self.family]
        if not self.id.startswith(prefix):
            raise ValueError(f"id {self.id!r} of a {self.family.value} task must start with {prefix!r}")
        ids = [c.id for c in self.checkpoints]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"checkpoint ids must be unique; repeated: {', '.join(dupes)}")
        if all(c.optional for c in self.checkpoints):
            raise ValueError("at least one checkpoint must be required (optional: false)")
        if self.family in (MemoryType.OBJECT, MemoryType.PROCEDURAL) and self.cue is None:
            raise ValueError(f"{self.family.value} tasks need a cue (the prompt video)")
        self._check_violations(ids)
        self._check_home(ids)
        return self

    def _check_home(self, checkpoint_ids: list[str]) -> None:
        afters = [gate.after for gate in self.home]
        for after in afters:
            if after not in checkpoint_ids:
                raise ValueError(
                    f"home gate: after {after!r} is not a checkpoint id (checkpoints: {', '.join(checkpoint_ids)})"
                )
        if len(set(afters)) != len(afters):
            raise ValueError(
                f"home gates: one gate per checkpoint; repeated: {sorted({a for a in afters if afters.count(a) > 1})}"
            )

    def _check_violations(self, checkpoint_ids: list[str]) -> None:
        names = [v.name for v in self.violations]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"violation names must be unique; repeated: {', '.join(dupes)}")
        for v in self.violations:
            for key in ("after", "until"):
                ref = getattr(v, key)
                if ref is not None and ref not in checkpoint_ids:
                    raise ValueError(
                        f"violation {v.name!r}: {key} {ref!r} is not a checkpoint id "
                        f"(checkpoints: {', '.join(checkpoint_ids)})"
                    )
            if (
                v.after is not None
                and v.until is not None
                and checkpoint_ids.index(v.until) <= checkpoint_ids.index(v.after)
            ):
                raise ValueError(
                    f"violation {v.name!r}: until {v.until!r} must come after after {v.after!r} in the checkpoint order"
                )

    @property
    def suite(self) -> str:
        """``"memobench"`` (the MEMOBench-30 families) or ``"arena"`` (RoboMemArena's 26)."""
        return ARENA_SUITE if isinstance(self.family, ArenaFamily) else MEMOBENCH_SUITE

    @property
    def last_required(self) -> str:
        """Id of the last required checkpoint: the goal, after which the monitor window runs."""
        return [c.id for c in self.checkpoints if not c.optional][-1]

    def post_goal(self, violation: ViolationSpec) -> bool:
        """Whether ``violation`` watches the post-goal window (active after the goal)."""
        return violation.after == self.last_required

    @property
    def n_variants(self) -> int:
        """Number of distinct bindings (the product of the domain sizes)."""
        return math.prod(len(domain) for domain in self.bindings.values())

    @property
    def chance(self) -> float:
        """Success rate of guessing the binding: declared, else 1/variants (0 if unbound)."""
        if self.chance_level is not None:
            return self.chance_level
        return 0.0 if not self.bindings else 1.0 / self.n_variants

    def to_jsonable(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


PLACEHOLDER = re.compile(r"\{\{\s*([a-z_][a-z0-9_]*)(?:\.([a-z_][a-z0-9_]*))?\s*\}\}")


def violation_window(spec: TaskSpec, violation: ViolationSpec) -> str:
    """When a rule is active, in words: ``"after top-checked until middle-checked"``,
    ``"after top-closed-again, to the horizon"`` (a rule after the goal: MEMOBench's protocol
    watches it to the horizon, RoboMemArena's for the post-goal window), ``"whole episode"``."""
    if spec.post_goal(violation):
        return f"after {violation.after}, to the horizon (RoboMemArena's protocol: {spec.monitor_steps} steps)"
    parts = [f"{key} {getattr(violation, key)}" for key in ("after", "until") if getattr(violation, key)]
    return " ".join(parts) or "whole episode"
