"""Failure taxonomy: one test per class, plus precedence and optional-checkpoint rules."""

from __future__ import annotations

import pytest

from memobench.evaluation.records import (
    CheckpointResult,
    EpisodeRecord,
    EpisodeStatus,
    FailureClass,
)
from memobench.metrics.taxonomy import classify_failure, failure_counts
from memobench.spec import MemoryOp, MemoryType

S, U, C = MemoryOp.STORAGE, MemoryOp.UPDATE, MemoryOp.COMPRESSION


def cps(*spec: tuple[MemoryOp, bool] | tuple[MemoryOp, bool, bool]) -> list[CheckpointResult]:
    """Checkpoints from (op, completed[, optional]) tuples, indexed in order."""
    out = []
    for i, item in enumerate(spec):
        op, done, *opt = item
        out.append(
            CheckpointResult(
                index=i,
                op=op,
                completed=done,
                optional=bool(opt and opt[0]),
                step=10 * i if done else None,
            )
        )
    return out


def fail(checkpoints: list[CheckpointResult], status: str = "ok", reason: str = "horizon"):
    return classify_failure(False, EpisodeStatus(status), reason, checkpoints)


def test_success_has_no_class() -> None:
    assert classify_failure(True, EpisodeStatus.OK, "success", cps((S, True), (U, True))) is None


@pytest.mark.parametrize(
    ("status", "expected"),
    [("adapter_error", FailureClass.ADAPTER_ERROR), ("env_error", FailureClass.ENV_ERROR)],
)
def test_harness_status_wins_over_everything(status: str, expected: FailureClass) -> None:
    # Even with a counting violation and a missed storage checkpoint.
    assert fail(cps((S, False)), status=status, reason="extra_pour") is expected
    assert classify_failure(False, status, status, cps((S, True))) is expected  # plain str status


def test_extra_pour_is_over_execution() -> None:
    assert fail(cps((S, True), (C, True)), reason="extra_pour") is FailureClass.OVER_EXECUTION


def test_all_required_done_is_execution_failure() -> None:
    # The optional update was missed: it must not decide the class.
    got = fail(cps((S, True), (U, True), (U, False, True)))
    assert got is FailureClass.EXECUTION_FAILURE


def test_missed_storage_is_storage_failure() -> None:
    assert fail(cps((S, False), (U, False))) is FailureClass.STORAGE_FAILURE
    # A later storage checkpoint missed is still a storage failure.
    assert fail(cps((S, True), (U, True), (S, False))) is FailureClass.STORAGE_FAILURE


def test_first_non_storage_missed_is_stale_update() -> None:
    assert fail(cps((S, True), (U, False), (U, False))) is FailureClass.STALE_UPDATE
    assert fail(cps((S, True), (S, True), (C, False))) is FailureClass.STALE_UPDATE
    # A task without storage: its first checkpoint is the first non-storage one.
    assert fail(cps((U, False), (U, False))) is FailureClass.STALE_UPDATE


def test_later_non_storage_missed_is_late_stale() -> None:
    assert fail(cps((S, True), (U, True), (U, False))) is FailureClass.LATE_STALE
    assert fail(cps((U, True), (C, False))) is FailureClass.LATE_STALE


def test_optional_checkpoints_do_not_count_as_first_non_storage() -> None:
    # The optional update before the required one is ignored either way.
    assert fail(cps((S, True), (U, True, True), (U, False))) is FailureClass.STALE_UPDATE
    assert fail(cps((S, True), (U, False, True), (U, False))) is FailureClass.STALE_UPDATE


def test_checkpoint_order_comes_from_index_not_list_position() -> None:
    ordered = cps((S, True), (U, True), (U, False))
    assert fail(list(reversed(ordered))) is FailureClass.LATE_STALE


def _record(episode: int, success: bool, fc: FailureClass | None, **kw) -> EpisodeRecord:
    base = dict(
        task_id="t",
        memory_type=MemoryType.SPATIAL,
        episode=episode,
        seed=7 + episode,
        status=EpisodeStatus.OK,
        success=success,
        failure_class=fc,
        end_reason="success" if success else "horizon",
        checkpoints=cps((S, success)),
        stage_score=float(success),
        stages_complete=success,
        average_score=float(success),
        steps=100,
    )
    base.update(kw)
    return EpisodeRecord(**base)


def test_failure_counts_lists_every_class_and_counts_stored_classes() -> None:
    records = [
        _record(0, True, None),
        _record(1, False, FailureClass.STORAGE_FAILURE),
        _record(2, False, FailureClass.STORAGE_FAILURE),
        _record(3, False, FailureClass.ADAPTER_ERROR, status=EpisodeStatus.ADAPTER_ERROR),
        # No stored class: classified from the fields (missed storage checkpoint).
        _record(4, False, None),
    ]
    counts = failure_counts(records)
    assert list(counts) == [fc.value for fc in FailureClass]
    assert counts == {
        "storage_failure": 3,
        "stale_update": 0,
        "late_stale": 0,
        "over_execution": 0,
        "execution_failure": 0,
        "adapter_error": 1,
        "env_error": 0,
    }


def test_failure_counts_of_nothing_is_all_zero() -> None:
    assert set(failure_counts([]).values()) == {0}
