"""Task specification models: what a task file declares, validated on load.

A task is a folder ``tasks/<family>/<task_id>/`` holding ``task.yaml`` (this
model) and ``task.bddl`` (a BDDL template with ``{{binding.key}}``
placeholders). Specs are frozen and round-trip to JSON, so the resolved spec
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

TASK_ID_PATTERN = r"^[TSOP]\d\d-[a-z0-9]+(-[a-z0-9]+)*$"


class MemoryType(StrEnum):
    """What must stay available beyond the current image (the task family)."""

    TEMPORAL = "temporal"
    SPATIAL = "spatial"
    OBJECT = "object"
    PROCEDURAL = "procedural"


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


FAMILY_PREFIX = {
    MemoryType.TEMPORAL: "T",
    MemoryType.SPATIAL: "S",
    MemoryType.OBJECT: "O",
    MemoryType.PROCEDURAL: "P",
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
    text: CheckpointText
    predicate: NonEmpty  # an expression of memobench.expr, may reference $bindings
    optional: bool = False


class CountingSpec(_Frozen):
    """Extra-action rejection for counting tasks (PROTOCOL.md): pours of object over target."""

    object: NonEmpty
    target: NonEmpty
    required: Annotated[int, Field(ge=1)]
    near_radius: Annotated[float, Field(gt=0)] = 0.15  # metres, xy, object to target


class CueSpec(_Frozen):
    """The scripted prompt video shown before the policy acts (object/procedural tasks).

    ``kind: point`` hovers the gripper over each target in turn, then returns home.
    Targets are object names or binding references, resolved per episode.
    """

    kind: str = "point"
    targets: Annotated[list[NonEmpty], Field(min_length=1)]

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, kind: str) -> str:
        if kind not in CUE_KINDS:
            raise ValueError(f"unknown cue kind {kind!r}; allowed: {', '.join(sorted(CUE_KINDS))}")
        return kind


CUE_KINDS = {"point"}

BindingValue = str | list[str] | dict[str, str | list[str]]


class TaskSpec(_Frozen):
    """Everything a task file declares (``task.yaml``)."""

    id: Annotated[str, StringConstraints(pattern=TASK_ID_PATTERN)]
    family: MemoryType
    instruction: NonEmpty
    horizon: Annotated[int, Field(ge=10, le=5000)] = 1200
    tags: list[Annotated[str, StringConstraints(pattern=r"^[a-z0-9-]+$")]] = Field(default_factory=list)
    bindings: dict[
        Annotated[str, StringConstraints(pattern=r"^[a-z_][a-z0-9_]*$")],
        Annotated[list[BindingValue], Field(min_length=1)],
    ] = Field(default_factory=dict)
    chance_level: Annotated[float, Field(ge=0, le=1)] | None = None
    counting: CountingSpec | None = None
    cue: CueSpec | None = None
    checkpoints: Annotated[list[CheckpointSpec], Field(min_length=1)]
    notes: str = ""  # deviations from TASKS.md and why

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
        return self

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
