"""Aggregation on a small hand-built ledger whose every number is computed by hand below.

Ledger (S = storage, U = update, C = compression, u = optional update; 1 done, 0 missed):

task          type      ep  checkpoints     success  stages  end / class
spatial_a     spatial   0   S1 U1 u1        yes      yes
spatial_a     spatial   1   S1 U0 u0        no       no      stale_update
spatial_a     spatial   2   S0 U0 u0        no       no      storage_failure
spatial_a     spatial   3   S1 U1 u0        yes      yes     (optional miss is fine)
spatial_b     spatial   0   S1 C1           yes      yes
spatial_b     spatial   1   S1 C1           no       yes     execution_failure
temporal_a    temporal  0   U1 U0           no       no      late_stale
temporal_a    temporal  1   U0 U0           no       no      adapter_error
object_a      object    0   S1 U1           yes      yes
object_a      object    1   S1 U1           no       yes     over_execution (extra pour)
"""

from __future__ import annotations

import json
import random

import pytest

from memobench.evaluation.records import (
    CheckpointResult,
    EpisodeRecord,
    EpisodeStatus,
    FailureClass,
)
from memobench.metrics.aggregate import summarize
from memobench.metrics.taxonomy import classify_failure
from memobench.spec import MemoryOp, MemoryType

OPS = {"S": MemoryOp.STORAGE, "U": MemoryOp.UPDATE, "C": MemoryOp.COMPRESSION, "u": MemoryOp.UPDATE}


def rec(
    task: str,
    mtype: str,
    episode: int,
    spec: str,
    success: bool,
    status: str = "ok",
    end_reason: str | None = None,
    steps: int = 100,
) -> EpisodeRecord:
    """A record from a spec like ``"S1 U0 u0"`` (lower-case op = optional checkpoint)."""
    cps = [
        CheckpointResult(
            index=i,
            op=OPS[tok[0]],
            optional=tok[0].islower(),
            completed=tok[1] == "1",
            step=10 * i if tok[1] == "1" else None,
        )
        for i, tok in enumerate(spec.split())
    ]
    required = [c for c in cps if not c.optional]
    end_reason = end_reason or ("success" if success else "horizon")
    if status != "ok":
        end_reason = status
    return EpisodeRecord(
        task_id=task,
        memory_type=MemoryType(mtype),
        episode=episode,
        seed=7 + episode,
        status=EpisodeStatus(status),
        success=success,
        failure_class=classify_failure(success, EpisodeStatus(status), end_reason, cps),
        end_reason=end_reason,
        checkpoints=cps,
        stage_score=sum(c.completed for c in required) / len(required),
        stages_complete=all(c.completed for c in required),
        average_score=sum(c.completed for c in cps) / len(cps),
        steps=steps,
    )


LEDGER = [
    rec("spatial_a", "spatial", 0, "S1 U1 u1", True, steps=80),
    rec("spatial_a", "spatial", 1, "S1 U0 u0", False, steps=1200),
    rec("spatial_a", "spatial", 2, "S0 U0 u0", False, steps=1200),
    rec("spatial_a", "spatial", 3, "S1 U1 u0", True, steps=120),
    rec("spatial_b", "spatial", 0, "S1 C1", True),
    rec("spatial_b", "spatial", 1, "S1 C1", False),
    rec("temporal_a", "temporal", 0, "U1 U0", False),
    rec("temporal_a", "temporal", 1, "U0 U0", False, status="adapter_error"),
    rec("object_a", "object", 0, "S1 U1", True),
    rec("object_a", "object", 1, "S1 U1", False, end_reason="extra_pour"),
]


def kn(entry: dict, metric: str) -> tuple[int, int]:
    return entry[metric]["k"], entry[metric]["n"]


@pytest.fixture(scope="module")
def summary() -> dict:
    return summarize(LEDGER)


def test_fixture_classes_are_the_intended_ones() -> None:
    assert [r.failure_class for r in LEDGER] == [
        None,
        FailureClass.STALE_UPDATE,
        FailureClass.STORAGE_FAILURE,
        None,
        None,
        FailureClass.EXECUTION_FAILURE,
        FailureClass.LATE_STALE,
        FailureClass.ADAPTER_ERROR,
        None,
        FailureClass.OVER_EXECUTION,
    ]


def test_per_task_counts(summary: dict) -> None:
    a = summary["tasks"]["spatial_a"]
    assert a["memory_type"] == "spatial" and a["episodes"] == 4
    assert kn(a, "SR") == (2, 4)
    assert kn(a, "MSR") == (3, 4)
    assert kn(a, "MUR") == (3, 8)  # optional updates are MUR instances too
    assert kn(a, "MCR") == (0, 0) and a["MCR"]["value"] is None
    assert kn(a, "CSR") == (5, 8)  # required only: S and U
    assert kn(a, "TSR") == (2, 4)
    assert a["stage_success_rate"] == 0.5
    assert a["average_score_pct"] == pytest.approx(50.0)  # (1 + 1/3 + 0 + 2/3) / 4
    assert a["goal_success_rate"] == 0.625 and a["goal_success_rate_pct"] == 62.5
    assert a["steps"] == pytest.approx((80 + 1200 + 1200 + 120) / 4)
    assert a["failures"]["stale_update"] == 1 and a["failures"]["storage_failure"] == 1
    assert sum(a["failures"].values()) == 2

    t = summary["tasks"]["temporal_a"]
    assert kn(t, "SR") == (0, 2) and kn(t, "MUR") == (1, 4) and kn(t, "CSR") == (1, 4)
    assert t["MSR"]["value"] is None and t["MCR"]["value"] is None
    assert t["adapter_errors"] == 1 and t["env_errors"] == 0
    assert t["failures"]["late_stale"] == 1 and t["failures"]["adapter_error"] == 1

    o = summary["tasks"]["object_a"]
    assert kn(o, "SR") == (1, 2) and kn(o, "TSR") == (2, 2)  # a violation keeps stages done
    assert o["failures"]["over_execution"] == 1


def test_csr_equals_mean_stage_score_when_checkpoints_match(summary: dict) -> None:
    scores = [r.stage_score for r in LEDGER if r.task_id == "spatial_a"]
    assert summary["tasks"]["spatial_a"]["CSR"]["value"] == pytest.approx(sum(scores) / 4)


def test_per_memory_type_pools_counts(summary: dict) -> None:
    types = summary["memory_types"]
    assert list(types) == ["temporal", "spatial", "object"]  # MemoryType order, absent skipped
    sp = types["spatial"]
    assert sp["tasks"] == 2 and sp["episodes"] == 6
    assert [kn(sp, m) for m in ("SR", "MSR", "MUR", "MCR", "CSR", "TSR")] == [
        (3, 6),
        (5, 6),
        (3, 8),
        (2, 2),
        (9, 12),
        (4, 6),
    ]
    assert sp["failures"]["execution_failure"] == 1
    assert types["temporal"]["tasks"] == 1 and types["temporal"]["MSR"]["value"] is None


def test_macro_is_unweighted_over_types_defining_the_metric(summary: dict) -> None:
    macro = summary["macro"]
    assert macro["SR"] == pytest.approx((0.5 + 0.0 + 0.5) / 3)
    assert macro["MSR"] == pytest.approx((5 / 6 + 1.0) / 2)  # temporal has no storage
    assert macro["MUR"] == pytest.approx((1 / 4 + 3 / 8 + 1.0) / 3)
    assert macro["MCR"] == pytest.approx(1.0)  # only spatial has compression
    assert macro["CSR"] == pytest.approx((1 / 4 + 3 / 4 + 1.0) / 3)
    assert macro["TSR"] == pytest.approx((0.0 + 4 / 6 + 1.0) / 3)
    assert macro["types"]["MCR"] == ["spatial"]
    assert macro["types"]["MSR"] == ["spatial", "object"]
    assert macro["types"]["SR"] == ["temporal", "spatial", "object"]


def test_macro_is_none_when_no_type_defines_a_metric() -> None:
    macro = summarize([r for r in LEDGER if r.task_id == "temporal_a"])["macro"]
    assert macro["MCR"] is None and macro["types"]["MCR"] == []
    assert macro["MSR"] is None
    assert macro["MUR"] == pytest.approx(0.25)


def test_overall_pools_every_episode(summary: dict) -> None:
    ov = summary["overall"]
    assert summary["episodes"] == 10 and ov["episodes"] == 10 and ov["tasks"] == 4
    assert [kn(ov, m) for m in ("SR", "MSR", "MUR", "MCR", "CSR", "TSR")] == [
        (4, 10),
        (7, 8),
        (6, 14),
        (2, 2),
        (14, 20),
        (6, 10),
    ]
    assert sum(ov["failures"].values()) == 6
    assert ov["SR"]["ci95"][0] < 0.4 < ov["SR"]["ci95"][1]


def test_summary_is_strict_json_and_order_independent(summary: dict) -> None:
    text = json.dumps(summary, allow_nan=False)
    shuffled = LEDGER[:]
    random.Random(0).shuffle(shuffled)
    assert json.dumps(summarize(shuffled), allow_nan=False) == text
    assert list(summary["tasks"]) == sorted(summary["tasks"])


def test_task_with_two_memory_types_is_rejected() -> None:
    bad = rec("spatial_a", "object", 9, "S1", True)
    with pytest.raises(ValueError, match="spatial_a"):
        summarize([*LEDGER, bad])


def test_empty_ledger_summarizes_to_undefined_values() -> None:
    s = summarize([])
    assert s["episodes"] == 0 and s["tasks"] == {} and s["memory_types"] == {}
    assert s["overall"]["SR"]["value"] is None and s["overall"]["average_score_pct"] is None
    assert all(s["macro"][m] is None for m in ("SR", "MSR", "MUR", "MCR", "CSR", "TSR"))
    json.dumps(s, allow_nan=False)
