"""Aggregation on a small hand-built ledger whose every number is computed by hand below.

Ledger (S = storage, U = update, C = compression, u = optional update; 1 done, 0 missed):

task          type      ep  checkpoints     success  stages  end / class
spatial_a     spatial   0   S1 U1 u1        yes      yes
spatial_a     spatial   1   S1 U0 u0        no       no      stale_update
spatial_a     spatial   2   S0 U0 u0        no       no      storage_failure
spatial_a     spatial   3   S1 U1 u0        yes      yes     (optional miss is fine)
spatial_b     spatial   0   S1 C1           yes      yes
spatial_b     spatial   1   S1 C1           no       no      execution_failure (horizon in the post-goal window)
temporal_a    temporal  0   U1 U0           no       no      late_stale
temporal_a    temporal  1   U0 U0           no       no      adapter_error
object_a      object    0   S1 U1           yes      yes
object_a      object    1   S1 U1           no       no      over_execution (extra pour)

"stages" (``stages_complete``, per-episode TSR) is true exactly when every required
checkpoint completed and the monitor windows passed without a violation, which is when
the harness ends the episode with "success".

Per-episode CSR (``stage_score``, required checkpoints only):
spatial_a 1, 1/2, 0, 1; spatial_b 1, 1; temporal_a 1/2, 0; object_a 1, 1.
"""

from __future__ import annotations

import json
import random

import pytest

from memobench.core.records import (
    CheckpointResult,
    EpisodeRecord,
    EpisodeStatus,
    FailureClass,
)
from memobench.core.spec import MemoryOp, MemoryType
from memobench.core.taxonomy import classify_failure
from memobench.metrics.aggregate import summarize

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
        stages_complete=all(c.completed for c in required) and end_reason == "success",
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
    # CSR: mean per-episode share of required checkpoints (1 + 1/2 + 0 + 1) / 4; k is the sum
    assert a["CSR"]["value"] == 0.625 and kn(a, "CSR") == (2.5, 4) and a["CSR"]["unit"] == "episodes"
    assert kn(a, "TSR") == (2, 4)
    assert a["stage_success_rate"] == 0.5
    assert a["average_score_pct"] == pytest.approx(50.0)  # (1 + 1/3 + 0 + 2/3) / 4
    assert a["goal_success_rate"] == 0.625 and a["goal_success_rate_pct"] == 62.5
    assert a["steps"] == pytest.approx((80 + 1200 + 1200 + 120) / 4)
    assert a["failures"]["stale_update"] == 1 and a["failures"]["storage_failure"] == 1
    assert sum(a["failures"].values()) == 2

    t = summary["tasks"]["temporal_a"]
    assert kn(t, "SR") == (0, 2) and kn(t, "MUR") == (1, 4)
    assert t["CSR"]["value"] == 0.25  # (1/2 + 0) / 2
    assert t["MSR"]["value"] is None and t["MCR"]["value"] is None
    assert t["adapter_errors"] == 1 and t["env_errors"] == 0
    assert t["failures"]["late_stale"] == 1 and t["failures"]["adapter_error"] == 1

    o = summary["tasks"]["object_a"]
    # ep1 completed every checkpoint but ended in an extra pour: its stages are not complete
    assert kn(o, "SR") == (1, 2) and kn(o, "TSR") == (1, 2)
    assert o["CSR"]["value"] == 1.0  # (1 + 1) / 2: CSR counts the checkpoints, violation or not
    assert o["failures"]["over_execution"] == 1


def test_per_memory_type_pools_counts(summary: dict) -> None:
    types = summary["memory_types"]
    assert list(types) == ["temporal", "spatial", "object"]  # MemoryType order, absent skipped
    sp = types["spatial"]
    assert sp["tasks"] == 2 and sp["episodes"] == 6
    assert [kn(sp, m) for m in ("SR", "MSR", "MUR", "MCR", "TSR")] == [
        (3, 6),
        (5, 6),
        (3, 8),
        (2, 2),
        (3, 6),
    ]
    # CSR: mean of the task CSRs (0.625 + 1) / 2 = 0.8125, not pooled (9 of 12 = 0.75)
    assert sp["CSR"]["value"] == 0.8125 and kn(sp, "CSR") == (1.625, 2) and sp["CSR"]["unit"] == "tasks"
    assert sp["goal_success_rate_pct"] == 81.25
    assert sp["failures"]["execution_failure"] == 1
    assert types["temporal"]["tasks"] == 1 and types["temporal"]["MSR"]["value"] is None


def test_macro_is_unweighted_over_types_defining_the_metric(summary: dict) -> None:
    macro = summary["macro"]
    assert macro["SR"] == pytest.approx((0.5 + 0.0 + 0.5) / 3)
    assert macro["MSR"] == pytest.approx((5 / 6 + 1.0) / 2)  # temporal has no storage
    assert macro["MUR"] == pytest.approx((1 / 4 + 3 / 8 + 1.0) / 3)
    assert macro["MCR"] == pytest.approx(1.0)  # only spatial has compression
    # the per-type CSRs are temporal 0.25, spatial 0.8125, object 1.0
    assert macro["CSR"] == pytest.approx((0.25 + 0.8125 + 1.0) / 3)
    assert macro["TSR"] == pytest.approx((0.0 + 3 / 6 + 1 / 2) / 3)
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
    assert [kn(ov, m) for m in ("SR", "MSR", "MUR", "MCR", "TSR")] == [
        (4, 10),
        (7, 8),
        (6, 14),
        (2, 2),
        (4, 10),
    ]
    # CSR: mean over the four tasks (spatial_a 0.625, spatial_b 1, temporal_a 0.25, object_a 1)
    assert ov["CSR"]["value"] == (0.625 + 1 + 0.25 + 1) / 4 == 0.71875
    assert ov["macro_goal_success_rate_pct"] == ov["goal_success_rate_pct"] == 71.875
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


# -- TSR: a violation undoes complete stages -------------------------------------------------


@pytest.mark.parametrize("reason", ["violation", "extra_pour"])
def test_tsr_is_zero_for_complete_checkpoints_with_a_violation(reason: str) -> None:
    [record] = [rec("object_v", "object", 0, "S1 U1", False, end_reason=reason)]
    assert record.stages_complete is False and all(c.completed for c in record.checkpoints)
    t = summarize([record])["tasks"]["object_v"]
    assert kn(t, "TSR") == (0, 1) and t["stage_success_rate"] == 0.0
    assert t["CSR"]["value"] == 1.0  # 2 of 2 required checkpoints completed
    assert t["failures"]["over_execution"] == 1


# -- CSR: per episode, averaged per task, then a macro mean over tasks -----------------------

# task  type     required  per-episode CSR         task CSR
# T-a   temporal S U U     1/3, 3/3                (1/3 + 1) / 2 = 2/3
# T-b   temporal U         0, 1, 1, 1              3/4
# S-c   spatial  S U       1/2, 1/2                1/2
CSR_LEDGER = [
    rec("T-a", "temporal", 0, "S1 U0 U0", False),
    rec("T-a", "temporal", 1, "S1 U1 U1", True),
    rec("T-b", "temporal", 0, "U0", False),
    rec("T-b", "temporal", 1, "U1", True),
    rec("T-b", "temporal", 2, "U1", True),
    rec("T-b", "temporal", 3, "U1", True),
    rec("S-c", "spatial", 0, "S1 U0", False),
    rec("S-c", "spatial", 1, "S1 U0", False),
]
Z = 1.959963984540054


def test_csr_per_task_is_the_mean_episode_score_with_a_normal_interval() -> None:
    tasks = summarize(CSR_LEDGER)["tasks"]
    a, b, c = tasks["T-a"]["CSR"], tasks["T-b"]["CSR"], tasks["S-c"]["CSR"]
    assert a["value"] == pytest.approx(2 / 3) and (a["k"], a["n"]) == (pytest.approx(4 / 3), 2)
    # T-a: sample variance ((1/3 - 2/3)^2 + (1 - 2/3)^2) / 1 = 2/9; standard error sqrt(2/9 / 2) = 1/3
    assert a["ci95"] == pytest.approx([2 / 3 - Z / 3, 1.0])  # upper 2/3 + 0.653 clipped to 1
    # T-b: variance (9/16 + 3 * 1/16) / 3 = 1/4; standard error sqrt(1/4 / 4) = 1/4
    assert b["value"] == 0.75 and b["ci95"] == pytest.approx([0.75 - Z / 4, 1.0])
    # S-c: both episodes 1/2, so no spread: a zero-width interval
    assert c["value"] == 0.5 and c["ci95"] == [0.5, 0.5]


def test_csr_of_a_memory_type_is_the_mean_of_its_task_csrs_not_pooled() -> None:
    s = summarize(CSR_LEDGER)
    temporal = s["memory_types"]["temporal"]["CSR"]
    # (2/3 + 3/4) / 2 = 17/24; pooling checkpoint instances would give (1 + 3 + 3) / (3 + 3 + 4) = 7/10
    assert temporal["value"] == pytest.approx(17 / 24)
    assert temporal["value"] != pytest.approx(7 / 10)
    assert (temporal["n"], temporal["unit"]) == (2, "tasks")
    # per task s^2 / n: T-a (2/9) / 2 = 1/9, T-b (1/4) / 4 = 1/16;
    # standard error sqrt(1/9 + 1/16) / 2 tasks = sqrt(25/144) / 2 = (5/12) / 2 = 5/24
    assert temporal["ci95"] == pytest.approx([17 / 24 - Z * 5 / 24, 1.0])
    assert s["memory_types"]["temporal"]["goal_success_rate_pct"] == pytest.approx(100 * 17 / 24)
    # the macro row: mean over memory types of the per-type CSRs (17/24 + 1/2) / 2 = 29/48
    assert s["macro"]["CSR"] == pytest.approx(29 / 48)
    # overall: mean over all tasks (2/3 + 3/4 + 1/2) / 3 = 23/36 (RoboMemArena's macro_goal_success_rate_pct)
    assert s["overall"]["CSR"]["value"] == pytest.approx(23 / 36)
    assert s["overall"]["macro_goal_success_rate_pct"] == pytest.approx(100 * 23 / 36)


def test_csr_interval_is_undefined_with_a_single_episode_task() -> None:
    s = summarize(CSR_LEDGER[:3])  # T-a's two episodes, T-b's first only
    assert s["tasks"]["T-b"]["CSR"]["ci95"] == [None, None]
    temporal = s["memory_types"]["temporal"]["CSR"]
    assert temporal["value"] == pytest.approx((2 / 3 + 0) / 2) and temporal["ci95"] == [None, None]


# -- SR, MSR, MUR, MCR: pooled per memory type, macro over types ----------------------------

# type      task  episodes (checkpoints)                       success
# spatial   sp_a  S1 U1                                        1 of 1
# spatial   sp_b  S1 S1 U0 | S1 S0 U0 | S0 S0 U0               0 of 3
# temporal  tm_a  U1 C1 | U1 C0                                1 of 2
# temporal  tm_b  C1 | C0 | C0                                 1 of 3
POOL_LEDGER = [
    rec("sp_a", "spatial", 0, "S1 U1", True),
    rec("sp_b", "spatial", 0, "S1 S1 U0", False),
    rec("sp_b", "spatial", 1, "S1 S0 U0", False),
    rec("sp_b", "spatial", 2, "S0 S0 U0", False),
    rec("tm_a", "temporal", 0, "U1 C1", True),
    rec("tm_a", "temporal", 1, "U1 C0", False),
    rec("tm_b", "temporal", 0, "C1", True),
    rec("tm_b", "temporal", 1, "C0", False),
    rec("tm_b", "temporal", 2, "C0", False),
]


def test_sr_msr_mur_mcr_pool_per_type_and_macro_average_types() -> None:
    s = summarize(POOL_LEDGER)
    sp, tm = s["memory_types"]["spatial"], s["memory_types"]["temporal"]
    # spatial SR: 1 success in 1 + 3 episodes = 1/4 (a mean of task SRs would be (1 + 0) / 2)
    assert kn(sp, "SR") == (1, 4)
    # spatial MSR: sp_a 1 of 1, sp_b 2 + 1 + 0 of 6: 4/7; MUR: 1 of 1 + 0 of 3: 1/4; no compression
    assert kn(sp, "MSR") == (4, 7) and kn(sp, "MUR") == (1, 4) and kn(sp, "MCR") == (0, 0)
    # temporal SR: (1 + 1) / (2 + 3) = 2/5; MUR 2 of 2; MCR: tm_a 1 of 2, tm_b 1 of 3: 2/5
    assert kn(tm, "SR") == (2, 5) and kn(tm, "MUR") == (2, 2) and kn(tm, "MCR") == (2, 5)
    assert kn(tm, "MSR") == (0, 0)
    macro = s["macro"]
    assert macro["SR"] == pytest.approx((1 / 4 + 2 / 5) / 2)  # 13/40
    assert macro["MSR"] == pytest.approx(4 / 7)  # only spatial has storage
    assert macro["MUR"] == pytest.approx((1 / 4 + 1) / 2)  # 5/8
    assert macro["MCR"] == pytest.approx(2 / 5)  # only temporal has compression
    assert kn(s["overall"], "SR") == (3, 9)  # pooled over every episode
