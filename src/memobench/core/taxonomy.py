"""Failure taxonomy: why a failed episode failed (docs/protocol.md).

The class is decided by the harness status first, then a violation (a broken
commitment or an extra pour), then by the *first* required checkpoint the
policy missed, because under prefix completion every later checkpoint is
missed as a consequence of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from memobench.core.records import (
    CheckpointResult,
    EpisodeRecord,
    EpisodeStatus,
    FailureClass,
)
from memobench.core.spec import MemoryOp

EXTRA_POUR = "extra_pour"  # end_reason of a counting violation
VIOLATION = "violation"  # end_reason of a broken commitment (a task's ``violations:``)
_BY_OP = {MemoryOp.STORAGE: FailureClass.STORAGE_FAILURE, MemoryOp.COMPRESSION: FailureClass.COMPRESSION_FAILURE}


def classify_failure(
    success: bool,
    status: EpisodeStatus | str,
    end_reason: str,
    checkpoints: Sequence[CheckpointResult],
) -> FailureClass | None:
    """Classify one episode; ``None`` exactly when ``success`` is true.

    Precedence for a failed episode:
    1. ``status`` ``adapter_error`` / ``env_error`` -> that class;
    2. a violation (``end_reason`` ``"violation"`` or ``"extra_pour"``) -> ``over_execution``;
    3. the first incomplete *required* checkpoint (by index) decides, by its op:
       storage -> ``storage_failure``; compression -> ``compression_failure``;
       the task's first required update checkpoint -> ``stale_update``;
       any later update checkpoint -> ``late_stale``;
       none incomplete -> ``execution_failure`` (stages done, the episode still
       not a success: it ended inside a monitor window).
    Optional checkpoints never decide the class.
    """
    if success:
        return None
    status = EpisodeStatus(status)
    if status is EpisodeStatus.ADAPTER_ERROR:
        return FailureClass.ADAPTER_ERROR
    if status is EpisodeStatus.ENV_ERROR:
        return FailureClass.ENV_ERROR
    if end_reason in (EXTRA_POUR, VIOLATION):
        return FailureClass.OVER_EXECUTION

    required = sorted((c for c in checkpoints if not c.optional), key=lambda c: c.index)
    missed = next((c for c in required if not c.completed), None)
    if missed is None:
        return FailureClass.EXECUTION_FAILURE
    if missed.op in _BY_OP:
        return _BY_OP[missed.op]
    first_update = next(c for c in required if c.op is MemoryOp.UPDATE)
    return FailureClass.STALE_UPDATE if missed is first_update else FailureClass.LATE_STALE


def record_failure_class(record: EpisodeRecord) -> FailureClass | None:
    """The record's stored class; classified from its fields when none was stored.

    The stored value wins because the ledger is the source of truth; the
    fallback covers failed records written without a class.
    """
    if record.success:
        return None
    if record.failure_class is not None:
        return record.failure_class
    return classify_failure(record.success, record.status, record.end_reason, record.checkpoints)


def empty_failure_counts() -> dict[str, int]:
    """Every failure class mapped to 0, in ``FailureClass`` order."""
    return {fc.value: 0 for fc in FailureClass}


def failure_counts(records: Iterable[EpisodeRecord]) -> dict[str, int]:
    """Number of failed records per failure class; every class present (0 if none)."""
    counts = empty_failure_counts()
    for record in records:
        fc = record_failure_class(record)
        if fc is not None:
            counts[fc.value] += 1
    return counts
