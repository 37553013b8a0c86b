"""The episode record: one line of ``ledger.jsonl``, the single source of truth.

Every metric is a pure function of a list of these records. A record is
written once, when its episode ends, and never changed.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from memobench.core.spec import ArenaFamily, MemoryOp, MemoryType


class EpisodeStatus(StrEnum):
    """How the episode ended, from the harness's point of view.

    ``ok`` means the episode ran to a normal end (success, violation or horizon);
    the other values mean it could not be scored as the policy's own doing.
    """

    OK = "ok"
    ADAPTER_ERROR = "adapter_error"  # the policy raised, hung, or returned invalid actions
    ENV_ERROR = "env_error"  # the simulator failed (build, reset, physics)


class FailureClass(StrEnum):
    """Why a failed episode failed (docs/protocol.md, failure taxonomy)."""

    STORAGE_FAILURE = "storage_failure"  # first missed required checkpoint is a storage one
    COMPRESSION_FAILURE = "compression_failure"  # ... a compression one
    STALE_UPDATE = "stale_update"  # ... the task's first update checkpoint
    LATE_STALE = "late_stale"  # ... a later update checkpoint
    OVER_EXECUTION = "over_execution"  # a violation: extra pour, broken commitment
    EXECUTION_FAILURE = "execution_failure"  # all required checkpoints done, still not a success
    ADAPTER_ERROR = "adapter_error"
    ENV_ERROR = "env_error"


class CheckpointResult(BaseModel):
    """One checkpoint instance in one episode."""

    model_config = ConfigDict(frozen=True)

    index: int  # 0-based position in the task's checkpoint list
    op: MemoryOp
    optional: bool = False
    completed: bool
    step: int | None = None  # control step (policy phase, 0-based) at which it completed


class Violation(BaseModel):
    """The commitment an episode broke (or ``extra_pour``) and the control step it happened."""

    model_config = ConfigDict(frozen=True)

    name: str
    step: int


class EpisodeRecord(BaseModel):
    """Everything the metrics need about one finished episode."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    memory_type: MemoryType | ArenaFamily  # the task's family (an arena task's is an ArenaFamily)
    episode: int  # 0-based episode index within the task
    seed: int
    binding: dict[str, Any] = Field(default_factory=dict)
    status: EpisodeStatus
    success: bool
    failure_class: FailureClass | None = None  # None exactly when success
    # "success", "horizon", "violation", "extra_pour", "adapter_error", "env_error"
    end_reason: str
    checkpoints: list[CheckpointResult]
    violation: Violation | None = None  # set when end_reason is "violation" or "extra_pour"
    stage_score: float  # completed required / required checkpoints (per-episode CSR)
    # Per-episode TSR: every required checkpoint completed and the monitor windows passed
    # without a violation.
    stages_complete: bool
    average_score: float  # completed / all checkpoints, optional included
    pour_counts: dict[str, int] = Field(default_factory=dict)  # "obj->target": pours seen
    # "obj->target": each counted pour's peak tilt, rad from the stage's baseline (absent
    # from ledgers written before it was recorded)
    pour_tilts: dict[str, list[float]] = Field(default_factory=dict)
    # Per home gate of the task (docs/protocol.md, "Registers"), the step the arm was home; None: not
    # yet. Gates are not checkpoints: no metric counts them. Empty in older ledgers.
    gates: list[int | None] = Field(default_factory=list)
    steps: int  # control steps executed in the policy phase
    policy_queries: int = 0  # queries whose chunk ran (a cue task's cue query, its chunk discarded, is not one)
    # Queries whose chunk had fewer rows than ``replan_steps``: all its rows ran, then the policy
    # was queried again (never padded), so the interval was shorter there. 0 in older ledgers.
    short_chunk_queries: int = 0
    min_chunk_rows: int | None = None  # rows of the shortest chunk returned; None: no query (or older ledger)
    # Executed actions with an entry outside [-1, 1], clipped into it (the protocol's clip_actions), and
    # the largest excess |a| - 1 of any entry (memobench.evaluation.action_range). 0 in older ledgers.
    clipped_actions: int = 0
    max_action_excess: float = 0.0
    error: str | None = None  # the adapter's or simulator's message when status != ok
    attempts: int = 1  # executions of this episode (> 1 only after a worker died or hung)
    retry_reasons: list[str] = Field(default_factory=list)  # why each lost execution was lost
    timings: dict[str, float] = Field(default_factory=dict)  # seconds: reset, cue, policy, sim, total

    def to_json_line(self) -> str:
        """Serialise to one JSON line (no trailing newline)."""
        return self.model_dump_json()

    @classmethod
    def from_json_line(cls, line: str) -> EpisodeRecord:
        return cls.model_validate_json(line)
