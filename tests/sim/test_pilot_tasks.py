"""Every pilot task end to end on the real simulator, with state driven by the test.

For each task: the env builds from its rendered BDDL, two seeds draw
different bindings (visible in the reset scene), and a scripted sequence of
state edits makes the checkpoints complete in order; the resulting records
and metrics are compared with values computed by hand. Camera-free.
"""

from __future__ import annotations

import numpy as np
import pytest
from tests.sim.scripting import StateScript, body_pos, place, place_on, set_joint, tilted

from memobench.evaluation.episode import run_episode
from memobench.evaluation.protocol import Protocol, plan_episode
from memobench.metrics import summarize
from memobench.policies.adapter import AdapterGuard
from memobench.sim.env import SimEnv

pytestmark = pytest.mark.sim

# A short post-goal window and horizon keep the scripted episodes short; their rules are tested below.
MONITOR = 10
PROTOCOL = Protocol(horizon=80, adapter_timeout=0, monitor_steps=MONITOR)
# RoboMemArena's rule (and demonstration collection's): success ends the episode after the window.
ENDS_AT_WINDOW = PROTOCOL.model_copy(update={"commitments_to_horizon": False})
DRAWERS = ("top", "middle", "bottom")


def module_env(suite, task_id):
    """(task, env) of an unbound task, built once for the module's tests."""
    task = suite.get(task_id)
    env = SimEnv(task.bddl({}))
    yield task, env
    env.close()


def run(task, plan, env, adapter, protocol=PROTOCOL):
    return run_episode(task, plan, env, AdapterGuard(adapter, timeout=None), protocol).record


def plans_with_distinct_bindings(task, count=2):
    """The first ``count`` episodes (seed base 7) whose bindings differ."""
    plans, seen = [], set()
    for e in range(50):
        plan = plan_episode(task, e, 7)
        if plan.variant not in seen:
            seen.add(plan.variant)
            plans.append(plan)
        if len(plans) == count:
            return plans
    raise AssertionError(f"{task.id}: fewer than {count} distinct bindings in 50 seeds")


def steps(record):
    return [c.step for c in record.checkpoints]


# -- T03: temporal, no binding ----------------------------------------------------------------
def drawer(env, name, q):
    return set_joint(env, f"wooden_cabinet_1_{name}_level", q)


def check(name, open_at, close_at):
    return {open_at: lambda env, _: drawer(env, name, -0.15), close_at: lambda env, _: drawer(env, name, 0.002)}


@pytest.fixture(scope="module")
def t03(suite):
    yield from module_env(suite, "T03-check-all-drawers")


def test_t03_checks_in_order_complete_each_checkpoint(t03):
    task, env = t03
    edits = {**check("top", 4, 9), **check("middle", 14, 19), **check("bottom", 24, 29)}
    record = run(task, plan_episode(task, 0, 7), env, StateScript(env, edits))
    # An edit after step t is seen at step t + 1.
    assert steps(record) == [10, 20, 30]
    # the commitments hold to the horizon: the success is declared there
    assert record.success and record.end_reason == "success" and record.steps == PROTOCOL.horizon
    assert record.stage_score == 1.0 and record.failure_class is None
    # under RoboMemArena's rule, once the post-goal window after the goal (step 30) has passed: steps 31..40
    early = run(task, plan_episode(task, 0, 7), env, StateScript(env, edits), ENDS_AT_WINDOW)
    assert early.success and steps(early) == [10, 20, 30] and early.steps == 30 + MONITOR + 1


def test_t03_out_of_order_check_is_a_violation(t03):
    task, env = t03
    # Middle opened before the top one was checked: the commitment ends the episode there.
    edits = {**check("middle", 4, 9), **check("top", 14, 19)}
    record = run(task, plan_episode(task, 1, 7), env, StateScript(env, edits))
    assert steps(record) == [None, None, None]
    assert record.violation.model_dump() == {"name": "checked-out-of-order", "step": 5}
    assert not record.success and record.end_reason == "violation" and record.steps == 6
    assert record.failure_class == "over_execution" and record.stage_score == 0.0


def test_t03_reopening_a_checked_drawer_after_the_goal_is_a_violation(t03):
    task, env = t03
    edits = {
        **check("top", 4, 9),
        **check("middle", 14, 19),
        **check("bottom", 24, 29),
        35: lambda env, _: drawer(env, "top", -0.05),
    }  # inside the window 31..40
    record = run(task, plan_episode(task, 0, 7), env, StateScript(env, edits))
    assert steps(record) == [10, 20, 30]
    assert record.violation.model_dump() == {"name": "top-reopened", "step": 36}
    assert not record.success and not record.stages_complete and record.failure_class == "over_execution"


def test_t03_reopening_a_checked_drawer_after_the_window_is_a_violation_until_the_horizon(t03):
    task, env = t03
    edits = {
        **check("top", 4, 9),
        **check("middle", 14, 19),
        **check("bottom", 24, 29),
        60: lambda env, _: drawer(env, "top", -0.05),
    }  # after the window 31..40, before the horizon (80)
    record = run(task, plan_episode(task, 0, 7), env, StateScript(env, edits))
    assert steps(record) == [10, 20, 30]
    assert record.violation.model_dump() == {"name": "top-reopened", "step": 61}
    assert not record.success and record.end_reason == "violation" and record.failure_class == "over_execution"
    # RoboMemArena's rule ended the episode a success at step 40, before the redo
    early = run(task, plan_episode(task, 0, 7), env, StateScript(env, edits), ENDS_AT_WINDOW)
    assert early.success and early.steps == 30 + MONITOR + 1 and early.violation is None


def test_t03_a_goal_too_late_for_the_window_is_not_a_success(t03):
    task, env = t03
    edits = {**check("top", 4, 9), **check("middle", 14, 19), **check("bottom", 24, 73)}
    record = run(task, plan_episode(task, 0, 7), env, StateScript(env, edits))
    assert steps(record) == [10, 20, 74] and PROTOCOL.horizon - 1 < 74 + MONITOR
    assert not record.success and record.end_reason == "horizon" and record.failure_class == "execution_failure"


def test_t03_metrics_by_hand(t03):
    task, env = t03
    full = run(
        task,
        plan_episode(task, 0, 7),
        env,
        StateScript(env, {**check("top", 4, 9), **check("middle", 14, 19), **check("bottom", 24, 29)}),
    )
    partial = run(task, plan_episode(task, 1, 7), env, StateScript(env, check("top", 4, 9)))
    summary = summarize([full, partial])["tasks"][task.id]
    assert summary["SR"]["value"] == 0.5
    assert (summary["MSR"]["k"], summary["MSR"]["n"]) == (2, 2)
    assert (summary["MUR"]["k"], summary["MUR"]["n"]) == (1, 2)
    assert (summary["MCR"]["k"], summary["MCR"]["n"]) == (1, 2)
    assert summary["CSR"]["value"] == pytest.approx(4 / 6)
    assert summary["TSR"]["value"] == 0.5


# -- S01: spatial, binding = which drawer starts open ----------------------------------------------
def hide_and_retrieve(region: str, level: str):
    """Drop the butter into the open drawer, shut the drawer with it, then put it on the plate."""
    offset = {}

    def drop(env, _):
        place(env, "butter_1", body_pos(env, region) + [0, 0, 0.02])

    def shut(env, _):
        offset["rel"] = body_pos(env, "butter_1") - body_pos(env, region)
        set_joint(env, level, 0.0)
        place(env, "butter_1", body_pos(env, region) + offset["rel"])

    def to_plate(env, _):
        place_on(env, "butter_1", "plate_1")

    return {4: drop, 19: shut, 34: to_plate}


def test_s01_bindings_open_different_drawers_and_checkpoints_complete(suite):
    task = suite.get("S01-hide-and-retrieve-butter")
    records = []
    for plan in plans_with_distinct_bindings(task):
        name = plan.binding["drawer"]["name"]
        env = SimEnv(task.bddl(plan.binding))
        try:
            env.reset(plan.layout_seed)
            qs = {d: env.sim.data.get_joint_qpos(f"wooden_cabinet_1_{d}_level") for d in DRAWERS}
            assert qs[name] < -0.14 and all(q > -0.01 for d, q in qs.items() if d != name), qs
            edits = hide_and_retrieve(plan.binding["drawer"]["region"], f"wooden_cabinet_1_{name}_level")
            records.append(run(task, plan, env, StateScript(env, edits)))
        finally:
            env.close()
    for record in records:
        s = steps(record)
        assert record.success, (record.binding, s)
        assert 5 <= s[0] < 20 <= s[1] < 35 <= s[2]
    assert records[0].binding != records[1].binding
    summary = summarize(records)["tasks"][task.id]
    assert summary["SR"]["value"] == 1.0 and summary["MCR"]["n"] == 2 and summary["MUR"]["k"] == 2


# -- O01: object, binding = which carton is cued -------------------------------------------------
def plate_item(obj: str, at: int):
    return {at: lambda env, _: place_on(env, obj, "plate_1")}


def test_o01_cued_carton_counts_the_other_does_not(suite):
    task = suite.get("O01-cued-milk")
    right, wrong = plans_with_distinct_bindings(task)
    env = SimEnv(task.bddl(right.binding))  # the BDDL differs only in its :goal
    try:
        ok = run(task, right, env, StateScript(env, plate_item(right.binding["cued"]["target"], 4)))
        other = right.binding["cued"]["others"][0]
        bad = run(task, right, env, StateScript(env, plate_item(other, 4)))
    finally:
        env.close()
    assert ok.success and ok.checkpoints[0].completed and ok.steps == PROTOCOL.horizon
    # the carton that was not cued on the plate: a violation at once
    assert not bad.success and bad.failure_class == "over_execution" and steps(bad) == [None]
    assert bad.violation.name == "wrong-carton-placed" and bad.steps == bad.violation.step + 1
    assert wrong.binding != right.binding


# -- P04: procedural, binding = stacking order ---------------------------------------------------
def test_p04_stacking_in_the_shown_order(suite):
    task = suite.get("P04-stack-in-order")
    shown, other = plans_with_distinct_bindings(task)
    order = shown.binding["order"]
    env = SimEnv(task.bddl(shown.binding))
    try:
        edits = {
            4: lambda env, _: place_on(env, order["middle"], order["bottom"]),
            24: lambda env, _: place_on(env, order["top"], order["middle"]),
        }
        good = run(task, shown, env, StateScript(env, edits))
        # Reversed roles: the middle bowl goes on the top one; nothing the order asks for.
        wrong = run(
            task, shown, env, StateScript(env, {4: lambda env, _: place_on(env, order["middle"], order["top"])})
        )
        # The bottom bowl never moves: lifting it onto another is a disturbed register at once.
        moved = run(
            task, shown, env, StateScript(env, {4: lambda env, _: place_on(env, order["bottom"], order["middle"])})
        )
    finally:
        env.close()
    s = steps(good)
    assert good.success and 5 <= s[0] < 25 <= s[1], s
    # a bowl on one it does not go on: a violation once it has held 10 steps in a row
    assert not wrong.success and wrong.failure_class == "over_execution"
    assert wrong.violation.name == "wrong-stack" and steps(wrong) == [None, None]
    assert wrong.violation.step >= 4 + 10
    assert not moved.success and moved.violation.name == f"disturbed:{order['bottom']}"
    assert moved.violation.step < 4 + 10
    assert other.binding != shown.binding


# -- T09: temporal counting task ----------------------------------------------------------------
def pours(n: int, first: int = 5, tilt_steps: int = 10, gap: int = 6, rest: int = 4):
    """``n`` times: hold the bottle over the bowl, tip it (0.6 rad) and back, stand it in its place
    (its start region's centre) for ``rest`` steps; then stand it on the plate. The arm stays home."""
    start = {}
    cycle = tilt_steps + gap + rest
    end = first + n * cycle

    def every_step(env, step):
        if "pose" not in start:
            start["pose"] = env.sim.data.get_joint_qpos("tomato_sauce_1_joint0").copy()
        pos, quat = start["pose"][:3], start["pose"][3:]
        if step == end:
            place_on(env, "tomato_sauce_1", "plate_1", clearance=0.02)
        if not first <= step < end:
            return
        k = (step - first) % cycle
        if k < tilt_steps + gap:
            above_bowl = np.r_[body_pos(env, "akita_black_bowl_1")[:2] + [0.0, 0.05], pos[2] + 0.15]
            place(env, "tomato_sauce_1", above_bowl, tilted(quat, 0.6 if k < tilt_steps else 0.0))
        elif k == tilt_steps + gap:
            place_at = body_pos(env, "kitchen_table_tomato_sauce_init_region")[:2]
            place(env, "tomato_sauce_1", np.r_[place_at, pos[2] + 0.005], quat)

    return every_step, end


@pytest.fixture(scope="module")
def t09(suite):
    yield from module_env(suite, "T09-pour-twice-bowl")


def test_t09_two_pours_then_on_the_plate_succeeds_with_both_windows_passed(t09):
    task, env = t09
    script, end = pours(2)
    record = run(task, plan_episode(task, 0, 7), env, StateScript(env, every_step=script))
    s = steps(record)
    # Pour i is counted when the bottle is back upright: first tilt at 6..15, upright at 16; the
    # bottle stands in its place from step 21, the arm home all along: the gate passes then.
    assert s[:2] == [16, 36] and s[2] > end, s
    assert record.gates[0] in (21, 22) and record.gates[1] in (41, 42), record.gates
    assert record.pour_counts == {"tomato_sauce_1->akita_black_bowl_1": 2}
    # a success at the horizon; under RoboMemArena's rule once both windows passed: the
    # extra-pour monitor after the second pour (step 32) and the post-goal window after the
    # set-down (the goal)
    assert record.success and record.steps == PROTOCOL.horizon
    script, end = pours(2)
    early = run(task, plan_episode(task, 0, 7), env, StateScript(env, every_step=script), ENDS_AT_WINDOW)
    assert early.success
    assert early.steps == max(36 + PROTOCOL.extra_pour_monitor_steps, s[2] + MONITOR) + 1


def test_t09_third_pour_in_the_window_fails_with_extra_pour(t09):
    task, env = t09
    script, _ = pours(3)
    record = run(task, plan_episode(task, 0, 7), env, StateScript(env, every_step=script))
    assert record.end_reason == "extra_pour" and record.failure_class == "over_execution"
    assert not record.success and record.steps == 56 + 1
    assert record.pour_counts == {"tomato_sauce_1->akita_black_bowl_1": 3}


def test_t09_no_fail_on_extra_pour_is_diagnostic_only(t09):
    task, env = t09
    script, _ = pours(3)
    lenient = PROTOCOL.model_copy(update={"fail_on_extra_pour": False})
    record = run(task, plan_episode(task, 0, 7), env, StateScript(env, every_step=script), lenient)
    assert record.end_reason != "extra_pour"
    assert record.pour_counts == {"tomato_sauce_1->akita_black_bowl_1": 3}


def test_t09_a_second_pour_before_the_bottle_is_back_in_its_place_fails(t09):
    """The home gate after the first pour: the bottle stays in the hand over the bowl (as a hand
    carrying the count would), so the gate never passes and the second pour breaks its ``keep``."""
    task, env = t09
    script, _ = pours(2, rest=0)
    record = run(task, plan_episode(task, 0, 7), env, StateScript(env, every_step=script))
    assert not record.success and record.gates[0] is None
    assert record.violation.name == "left-before-home" and record.violation.step == 32
