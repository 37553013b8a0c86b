"""SimEnv: deterministic layouts, env reuse, exact cue restore, rendering."""

from __future__ import annotations

import ctypes.util

import numpy as np
import pytest

from memobench.evaluation.protocol import plan_episode
from memobench.sim import fast_controller
from memobench.sim.cue import run_cue
from memobench.sim.env import GRIP_SITE, SimEnv
from memobench.sim.world import WorldView

pytestmark = pytest.mark.sim


@pytest.fixture(scope="module")
def o01(suite):
    task = suite.get("O01-cued-milk")
    plan = plan_episode(task, 0, 7)
    env = SimEnv(task.bddl(plan.binding))
    yield task, plan, env
    env.close()


def trajectory(env: SimEnv, actions: np.ndarray) -> np.ndarray:
    states = []
    for a in actions:
        env.step(a)
        states.append(env.physics_state())
    return np.array(states)


ACTIONS = np.random.default_rng(0).uniform(-1, 1, size=(30, 7))


def test_layout_is_a_function_of_the_seed_and_env_reuse_leaves_no_trace(o01, suite):
    task, plan, env = o01
    env.reset(plan.layout_seed)
    first = trajectory(env, ACTIONS)
    env.reset(plan.layout_seed + 1)
    other = trajectory(env, ACTIONS)
    env.reset(plan.layout_seed)  # after other episodes in the same env
    again = trajectory(env, ACTIONS)
    assert not np.array_equal(first[0], other[0])
    np.testing.assert_array_equal(first, again)
    fresh = SimEnv(task.bddl(plan.binding))
    try:
        fresh.reset(plan.layout_seed)
        np.testing.assert_array_equal(first, trajectory(fresh, ACTIONS))
    finally:
        fresh.close()


def test_no_separate_forward_per_substep_leaves_physics_and_observations_bit_identical(o01):
    """sim/forward_once.py: the controller's repeated mj_forward is skipped and each substep runs as
    mj_step1 + mj_step2; the same states and observations at every step, with contacts (the
    gripper pressed onto the table and dragged)."""
    task, plan, env = o01
    press = np.tile([0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 1.0], (40, 1))
    drag = np.tile([0.6, 0.4, -0.3, 0.0, 0.0, 0.3, 1.0], (30, 1))
    actions = np.concatenate([ACTIONS, press, drag])
    counts = env._forward_once
    results = {}
    for enabled in (True, False):
        counts.enabled, counts.skipped, counts.split = enabled, 0, 0
        env.reset(plan.layout_seed)
        observations, states = [], []
        for a in actions:
            env.step(a)
            observations.append(env.observations())
            states.append(env.physics_state())
        results[enabled] = observations, np.array(states), env.sim.data.qacc_warmstart.copy()
        substeps = len(actions) * round(env.libero.control_timestep / env.libero.model_timestep)
        # one repeat per substep, but the first after a reset (the controller's reset already updated it)
        assert counts.skipped == (substeps - 1 if enabled else 0)
        assert counts.split == (substeps if enabled else 0)
    counts.enabled = True
    on, off = results[True], results[False]
    assert len(on[0]) == len(off[0]) == len(actions)
    for step, (a, b) in enumerate(zip(on[0], off[0], strict=True)):
        assert a.keys() == b.keys()
        for key in a:
            np.testing.assert_array_equal(a[key], b[key], err_msg=f"step {step}, {key}")
    np.testing.assert_array_equal(on[1], off[1])
    np.testing.assert_array_equal(on[2], off[2])


def test_stepping_never_evaluates_libero_s_goal(o01, monkeypatch):
    """LIBERO's goal check (its BDDL goal's predicates, twice after every control step) never runs."""
    task, plan, env = o01

    def goal_checked(self):
        raise AssertionError("LIBERO's goal was evaluated")

    monkeypatch.setattr(type(env.libero), "_eval_predicate", goal_checked)
    env.reset(plan.layout_seed)
    for a in ACTIONS[:3]:
        env.step(a)


def test_the_fast_controller_update_leaves_the_physics_bit_identical(o01, monkeypatch):
    """sim/fast_controller.py: the same states at every step, through contacts, and after a reset
    (a controller is built per reset)."""
    task, plan, env = o01
    press = np.tile([0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 1.0], (40, 1))
    drag = np.tile([0.6, 0.4, -0.3, 0.0, 0.0, 0.3, -1.0], (30, 1))
    actions = np.concatenate([ACTIONS, press, drag])
    results = {}
    for enabled in (True, False):
        monkeypatch.setattr(fast_controller, "ENABLED", enabled)
        env.reset(plan.layout_seed)
        results[enabled] = trajectory(env, actions), env.sim.data.qacc_warmstart.copy()
        # the replacement ran (it caches the site on the controller), or it did not
        assert ("_memobench_site" in vars(env.libero.robots[0].controller)) == enabled
    np.testing.assert_array_equal(results[True][0], results[False][0])
    np.testing.assert_array_equal(results[True][1], results[False][1])


def test_cue_moves_the_robot_then_restores_the_state_bit_for_bit(o01):
    task, plan, env = o01
    env.reset(plan.layout_seed)
    without_cue = trajectory(env, ACTIONS)
    env.reset(plan.layout_seed)
    before = env.physics_state()
    world = WorldView(env)
    target = plan.binding["cued"]["target"]
    rec = run_cue(env, world, "point", [target])
    eef = np.array([s[:3] for s in rec.states])
    # The cue really went to the cued carton: the hand passed within 3 cm (xy) of it.
    assert rec.steps > 10
    assert np.min(np.linalg.norm(eef[:, :2] - world.position(target)[:2], axis=1)) < 0.03
    np.testing.assert_array_equal(before, env.physics_state())
    np.testing.assert_array_equal(without_cue, trajectory(env, ACTIONS))


@pytest.mark.render
@pytest.mark.skipif(ctypes.util.find_library("EGL") is None, reason="EGL not installed")
def test_rendered_frames_are_upright_and_cue_frames_are_kept(suite):
    task = suite.get("O01-cued-milk")
    plan = plan_episode(task, 0, 7)
    env = SimEnv(task.bddl(plan.binding), render=True)
    try:
        env.reset(plan.layout_seed)
        frame = env.render("agentview", 128)
        assert frame.shape == (128, 128, 3) and frame.dtype == np.uint8
        # Upright: the table (bright, low in the view) fills the bottom rows, not the top.
        assert frame[-20:].mean() > frame[:20].mean()
        rec = run_cue(env, WorldView(env), "point", [plan.binding["cued"]["target"]], size=64)
        video = rec.video()
        assert video is not None and video.shape[1:] == (64, 64, 3) and len(video) == len(rec.states)
        assert len(rec.wrist_frames) == len(rec.frames)
        assert not np.array_equal(video[0], video[len(video) // 2])  # the arm moved in view
        # Tearing down another rendering env must not break this one's frames.
        other = SimEnv(task.bddl(plan.binding), render=True)
        other.close()
        np.testing.assert_array_equal(frame, env.render("agentview", 128))
        # ... nor tearing down an older one while a newer env's context is current (the
        # env cache evicting the oldest env used to wipe the newest env's GL textures).
        newer = SimEnv(task.bddl(plan.binding), render=True)
        newer.reset(plan.layout_seed)
        before = newer.render("agentview", 128)
        env.close()
        np.testing.assert_array_equal(before, newer.render("agentview", 128))
        newer.close()
    finally:
        env.close()


def test_a_snapshot_restored_into_another_env_of_the_scene_continues_identically(suite):
    """The experts' forward model: same future, fixture placement included."""
    task = suite.get("T03-check-all-drawers")
    source, mirror = SimEnv(task.bddl({})), SimEnv(task.bddl({}))
    try:
        source.reset(11)
        mirror.reset(12)
        # A layout that moved the cabinet (a joint-less fixture: its pose lives in the model).
        cabinet = source.sim.model.body_name2id("wooden_cabinet_1_main")
        source.sim.model._model.body_pos[cabinet] += [0.02, -0.01, 0.0]
        source.step(ACTIONS[0])
        mirror.restore(source.snapshot())
        np.testing.assert_array_equal(mirror.sim.model.body_pos, source.sim.model.body_pos)
        np.testing.assert_array_equal(trajectory(mirror, ACTIONS), trajectory(source, ACTIONS))
    finally:
        source.close()
        mirror.close()


def test_a_snapshot_copied_into_a_dropped_snapshot_s_data_has_the_same_future(suite):
    """Snapshots reuse the mjData of dropped ones (allocating one was most of a snapshot's
    cost): what that mjData held before, another state with its contacts, must not show."""
    task = suite.get("T03-check-all-drawers")
    env = SimEnv(task.bddl({}))
    try:
        env.reset(11)
        trajectory(env, ACTIONS)
        dropped = env.snapshot()
        spare = dropped.data
        del dropped
        env.reset(12)
        env.step(ACTIONS[0])
        reused = env.snapshot()
        assert reused.data is spare
        fresh = env.snapshot()  # the spare is taken: a new mjData
        assert fresh.data is not spare
        env.restore(fresh)
        from_fresh = trajectory(env, ACTIONS)
        env.restore(reused)
        np.testing.assert_array_equal(trajectory(env, ACTIONS), from_fresh)
    finally:
        env.close()


@pytest.mark.parametrize(
    ("task_id", "heights"),
    [
        # origin over the top's surface, settled: the packs lying flat, the jar and the cartons upright
        ("A18-chocolate-butter-cabinet", {"chocolate_pudding_1": 0.013, "butter_1": 0.0085}),
        ("A19-tomato-milk-orange-cabinet", {"tomato_sauce_1": 0.038, "milk_1": 0.070, "orange_juice_1": 0.070}),
    ],
)
def test_items_declared_on_a_cabinet_rest_apart_on_its_top_in_libero_s_orientation(suite, task_id, heights):
    task = suite.get(task_id)
    plan = plan_episode(task, 0, 7)
    env = SimEnv(task.bddl(plan.binding))
    try:
        env.reset(plan.layout_seed)
        for _ in range(20):
            env.step(np.array([0, 0, 0, 0, 0, 0, -1.0]))
        world = WorldView(env)
        site = world.position("wooden_cabinet_1_top_side")
        top = site[2] + 0.0015  # the top's surface (the site lies ~1 mm under it)
        boxes = []
        for name, height in heights.items():
            assert world.position(name)[2] - top == pytest.approx(height, abs=0.004), name
            boxes.append(env._collision_box(env.libero.objects_dict[name]))
        # side by side along x in the facts' order, not touching, on the 25 cm wide top
        for (_, left), (right, _) in zip(boxes, boxes[1:], strict=False):
            assert right[0] - left[0] > 0.005
        assert boxes[0][0][0] > site[0] - 0.125 and boxes[-1][1][0] < site[0] + 0.125
    finally:
        env.close()


def test_the_arm_starts_jittered_by_the_layout_seed_and_holds_its_start(o01):
    """MEMOBench's protocol jitters the arm's start (docs/protocol.md, "Registers"): a pose of the
    layout seed's, not LIBERO's shared one, and the controller holds it (no drift back); the
    fingers start fully open and stay so (LIBERO's creep open for ~140 steps: a clock)."""
    _, plan, env = o01
    env.reset(plan.layout_seed)
    libero_pose = env.home_pose[0].copy()
    env.reset(plan.layout_seed, arm_jitter=0.02)
    first = env.home_pose[0].copy()
    first_state = env.physics_state()
    for _ in range(20):
        env.step(np.array([0, 0, 0, 0, 0, 0, -1.0]))
    held = np.array(env.sim.data.get_site_xpos(GRIP_SITE))
    fingers = env.robot_state()[6:8]
    env.reset(plan.layout_seed + 1, arm_jitter=0.02)
    other = env.home_pose[0].copy()
    env.reset(plan.layout_seed, arm_jitter=0.02)
    np.testing.assert_array_equal(env.physics_state(), first_state)  # a function of the seed
    assert 0.003 < np.linalg.norm(first - libero_pose) < 0.06
    assert 0.003 < np.linalg.norm(first - other) < 0.08
    assert np.linalg.norm(held - first) < 0.002  # 20 no-op steps later, still there
    np.testing.assert_allclose(fingers, [0.04, -0.04], atol=2e-5)


def test_a_stored_state_of_another_scene_s_width_is_refused_not_set(o01):
    """A demo file's ``states`` set into a scene (render, features) must be that scene's width."""
    _, plan, env = o01
    env.reset(plan.layout_seed)
    state = env.physics_state()
    env.set_physics_state(state)
    with pytest.raises(ValueError, match=rf"shape \[{len(state) - 1}\]; this scene's MuJoCo state has {len(state)}"):
        env.set_physics_state(state[:-1])
    np.testing.assert_array_equal(env.physics_state(), state)
