"""Failure taxonomy: one test per class, plus precedence and optional-checkpoint rules."""

from __future__ import annotations

import pytest

from memobench.core.records import (
    CheckpointResult,
    EpisodeRecord,
    EpisodeStatus,
    FailureClass,
)
from memobench.core.spec import MemoryOp, MemoryType
from memobench.core.taxonomy import classify_failure, failure_counts

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


@pytest.mark.parametrize("reason", ["extra_pour", "violation"])
def test_a_violation_is_over_execution(reason: str) -> None:
    # Every required checkpoint done, and also with one missed: the violation decides.
    assert fail(cps((S, True), (C, True)), reason=reason) is FailureClass.OVER_EXECUTION
    assert fail(cps((S, True), (U, False)), reason=reason) is FailureClass.OVER_EXECUTION


def test_all_required_done_is_execution_failure() -> None:
    # The optional update was missed: it must not decide the class.
    got = fail(cps((S, True), (U, True), (U, False, True)))
    assert got is FailureClass.EXECUTION_FAILURE


# -- the paper's stove example: an S, U, U task (store the stove's state, turn it on, off) --


def test_stove_storage_missed_is_storage_failure() -> None:
    assert fail(cps((S, False), (U, False), (U, False))) is FailureClass.STORAGE_FAILURE


def test_stove_first_update_missed_is_stale_update() -> None:
    assert fail(cps((S, True), (U, False), (U, False))) is FailureClass.STALE_UPDATE


def test_stove_second_update_missed_is_late_stale() -> None:
    assert fail(cps((S, True), (U, True), (U, False))) is FailureClass.LATE_STALE


# -- compression, and an S, C, U task -------------------------------------------------------


def test_missed_compression_is_compression_failure() -> None:
    assert fail(cps((S, True), (C, False), (U, False))) is FailureClass.COMPRESSION_FAILURE
    # With no storage before it, and as the last checkpoint.
    assert fail(cps((C, False), (U, False))) is FailureClass.COMPRESSION_FAILURE
    assert fail(cps((S, True), (U, True), (C, False))) is FailureClass.COMPRESSION_FAILURE


def test_first_update_after_a_compression_is_still_stale_update() -> None:
    # S, C, U with U missed: U is the task's first update checkpoint, so stale_update, not late_stale.
    assert fail(cps((S, True), (C, True), (U, False))) is FailureClass.STALE_UPDATE


def test_missed_storage_anywhere_is_storage_failure() -> None:
    # A later storage checkpoint missed is still a storage failure.
    assert fail(cps((S, True), (U, True), (S, False))) is FailureClass.STORAGE_FAILURE


def test_task_without_storage_starts_with_its_first_update() -> None:
    assert fail(cps((U, False), (U, False))) is FailureClass.STALE_UPDATE
    assert fail(cps((U, True), (U, False))) is FailureClass.LATE_STALE


def test_optional_checkpoints_never_decide() -> None:
    # An optional update before the required one is not "the first update", done or missed.
    assert fail(cps((S, True), (U, True, True), (U, False))) is FailureClass.STALE_UPDATE
    assert fail(cps((S, True), (U, False, True), (U, False))) is FailureClass.STALE_UPDATE
    # A missed optional storage or compression checkpoint is not the first missed one.
    assert fail(cps((S, False, True), (U, True), (U, False))) is FailureClass.LATE_STALE
    assert fail(cps((S, True), (C, False, True), (U, False))) is FailureClass.STALE_UPDATE


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
        # Classified from the fields too: S done, C missed.
        _record(5, False, None, checkpoints=cps((S, True), (C, False)), stage_score=0.5),
    ]
    counts = failure_counts(records)
    assert list(counts) == [fc.value for fc in FailureClass]
    assert counts == {
        "storage_failure": 3,
        "compression_failure": 1,
        "stale_update": 0,
        "late_stale": 0,
        "over_execution": 0,
        "execution_failure": 0,
        "adapter_error": 1,
        "env_error": 0,
    }


def test_failure_counts_of_nothing_is_all_zero() -> None:
    assert set(failure_counts([]).values()) == {0}
