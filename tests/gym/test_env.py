"""The Gymnasium env on the real simulator: the checker, masking, the harness's episodes, vector envs.

Builds cost seconds, so one camera-free S01 env serves the module; the vector test builds three
(the parent's dummy and two workers) and the image test one with cameras.
"""

from __future__ import annotations

import functools
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import memobench.gym  # noqa: F401  (registers the ids)
from memobench.evaluation.episode import run_episode
from memobench.evaluation.protocol import Protocol, plan_episode
from memobench.policies.adapter import AdapterGuard
from memobench.sim.env import NOOP_ACTION, SimEnv

pytestmark = pytest.mark.sim

S01 = "MEMOBench/S01-hide-and-retrieve-butter-v2"
TOP = "wooden_cabinet_1_top_region"


@pytest.fixture(scope="module")
def env():
    env = gymnasium.make(S01)
    yield env
    env.close()


def test_passes_gymnasiums_checker(env) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the checker reports problems as warnings
        check_env(env.unwrapped, skip_render_check=True)


def test_an_object_in_a_closed_drawer_is_masked(env) -> None:
    """Put the butter into the open top drawer and shut it: its pose leaves the observation."""
    hide_the_butter(env)


def hide_the_butter(env) -> None:
    """S01 seed 7 (the top drawer starts open): the butter put in it, the drawer shut over it."""
    obs, info = env.reset(seed=7)
    assert info["binding"] == {"drawer": "top"} and obs["object_visible"].all()
    sim, world = env.unwrapped._sim, env.unwrapped._world
    butter = info["object_names"].index("butter_1")
    joint = sim.sim.model.get_joint_qpos_addr("butter_1_joint0")[0]
    sim.sim.data.qpos[joint : joint + 3] = world.position(TOP) + [0, 0, 0.01]
    for _ in range(20):
        obs, *_ = env.step(NOOP_ACTION)
    assert obs["object_visible"][butter] == 1 and obs["object_poses"][butter].any()
    pull(env, "top", 0.0, rider="butter_1")  # shut: the butter rides along
    obs, _, _, _, info = env.step(NOOP_ACTION)
    assert obs["object_visible"][butter] == 0 and not obs["object_poses"][butter].any()
    assert obs["object_visible"][1 - butter] == 1  # the plate stays in view
    assert obs["fixture_joints"][0] == 0.0  # the drawer itself is visible: shut
    assert info["checkpoints_completed"].tolist() == [True, True, False]  # butter-in-drawer, butter-hidden


def pull(env, level: str, q: float, rider: str | None = None) -> None:
    """Set drawer ``level``'s joint to ``q`` at rest (``rider``, an object in it, moves along)."""
    sim, world = env.unwrapped._sim, env.unwrapped._world
    region = f"wooden_cabinet_1_{level}_region"
    before = world.position(region)
    sim.sim.data.set_joint_qpos(f"wooden_cabinet_1_{level}_level", q)
    sim.sim.data.set_joint_qvel(f"wooden_cabinet_1_{level}_level", 0.0)
    sim.sim.forward()
    if rider is not None:
        address = sim.sim.model.get_joint_qpos_addr(f"{rider}_joint0")[0]
        sim.sim.data.qpos[address : address + 3] += world.position(region) - before
        sim.sim.forward()


def test_a_drawer_out_4_mm_shows_nothing_2_cm_shows_all_and_breaks_the_rule(env) -> None:
    """After butter-hidden (S01, binding top), one band decides what a drawer shows and whether
    opening it breaks ``wrong-drawer-opened``: 4 mm out it reads 0.0 and hides its contents, 2 cm
    out it reads its joint and shows them; a 2 cm pull of a drawer without the butter fails at once."""
    hide_the_butter(env)
    sim = env.unwrapped._sim
    names = env.unwrapped.layout
    butter, top = names.objects.index("butter_1"), names.fixture_joints.index("wooden_cabinet_1_top_level")
    middle = names.fixture_joints.index("wooden_cabinet_1_middle_level")
    pull(env, "top", -0.004, rider="butter_1")
    obs, _, terminated, _, info = env.step(NOOP_ACTION)
    assert sim.sim.data.get_joint_qpos("wooden_cabinet_1_top_level") < -0.0035
    assert obs["fixture_joints"][top] == 0.0 and obs["object_visible"][butter] == 0 and not terminated
    pull(env, "top", -0.02, rider="butter_1")  # the butter's own drawer: no rule against it
    obs, _, terminated, _, info = env.step(NOOP_ACTION)
    raw = sim.sim.data.get_joint_qpos("wooden_cabinet_1_top_level")
    assert raw == pytest.approx(-0.02, abs=1e-3) and obs["fixture_joints"][top] == np.float32(raw)
    assert obs["object_visible"][butter] == 1 and obs["object_poses"][butter].any() and not terminated
    pull(env, "middle", -0.004)
    obs, _, terminated, _, info = env.step(NOOP_ACTION)
    assert obs["fixture_joints"][middle] == 0.0 and not terminated and info["violation"] == ""
    pull(env, "middle", -0.02)
    obs, _, terminated, _, info = env.step(NOOP_ACTION)
    assert obs["fixture_joints"][middle] == np.float32(sim.sim.data.get_joint_qpos("wooden_cabinet_1_middle_level"))
    assert terminated and info["violation"] == "wrong-drawer-opened" and info["end_reason"] == "violation"


class _Recorder:
    """Keeps the harness's scene as the policy's first action meets it."""

    def begin(self, cue) -> None:
        self.cue_states = np.array(cue.states)

    def add(self, env: SimEnv, action: np.ndarray) -> None:
        if not hasattr(self, "physics"):
            self.physics, self.robot_state = env.physics_state(), env.robot_state()


class _Still:
    def reset(self) -> None: ...

    def infer_actions(self, obs, prompt, resize_size):
        return np.tile(NOOP_ACTION, (5, 1))


def test_reset_is_the_harness_episode_of_the_seed(env) -> None:
    """Seed s is the harness's episode of seed s: binding, layout, stabilised scene; another variant too."""
    task = env.unwrapped.task
    plan = next(p for p in (plan_episode(task, e, 7) for e in range(20)) if p.variant != 0)
    harness_env = SimEnv(task.bddl(plan.binding))
    recorder = _Recorder()
    try:
        protocol = Protocol(horizon=1, adapter_timeout=0)
        record = run_episode(
            task, plan, harness_env, AdapterGuard(_Still(), timeout=None), protocol, recorder=recorder
        ).record
    finally:
        harness_env.close()
    obs, info = env.reset(seed=plan.seed)
    assert (info["seed"], info["variant"], info["layout_seed"]) == (plan.seed, plan.variant, plan.layout_seed)
    assert record.status == "ok" and info["binding"] == record.binding
    np.testing.assert_array_equal(env.unwrapped._sim.physics_state(), recorder.physics)
    np.testing.assert_array_equal(obs["robot_state"], recorder.robot_state)
    again, info_again = env.reset(seed=plan.seed)
    for key in obs:
        np.testing.assert_array_equal(obs[key], again[key])
    assert info_again["binding"] == info["binding"] and not info["checkpoints_completed"].any()


def test_runs_in_an_async_vector_env() -> None:
    """Two worker processes (spawned: they register the ids through the ``memobench.gym:`` prefix)."""
    make = functools.partial(gymnasium.make, f"memobench.gym:{S01}", reward="dense")
    envs = gymnasium.vector.AsyncVectorEnv([make, make], context="spawn")
    try:
        obs, info = envs.reset(seed=[7, 8])
        assert obs["object_poses"].shape == (2, 2, 7) and list(info["seed"]) == [7, 8]
        obs, reward, terminated, truncated, info = envs.step(np.tile(NOOP_ACTION, (2, 1)).astype(np.float32))
        assert reward.tolist() == [0.0, 0.0] and not terminated.any() and not truncated.any()
        assert list(info["step"]) == [1, 1]
    finally:
        envs.close()


@pytest.mark.render
def test_rgb_mode_shows_the_cameras_and_the_cue() -> None:
    env = gymnasium.make("MEMOBench/O01-cued-milk-v2", obs_mode="rgb", size=64)
    try:
        obs, info = env.reset(seed=7)
        assert obs["agentview"].shape == obs["wrist"].shape == (64, 64, 3) and obs["agentview"].any()
        cue = info["cue"]
        assert cue["agentview"].shape[1:] == (64, 64, 3) and len(cue["agentview"]) == len(cue["robot_state"])
        assert 5 < info["cue_length"] < len(cue["agentview"]) == env.unwrapped.cue_frames  # padded to the bound
        assert cue["agentview"][info["cue_length"] - 1].any() and not cue["agentview"][info["cue_length"] :].any()
        assert env.observation_space.contains(obs)
    finally:
        env.close()


def test_a_success_is_reported_at_the_horizon_not_at_the_goal() -> None:
    """The commitments hold to the horizon: the drawers checked by step 30 are a success only when the
    episode is truncated at its horizon (the goal plus the post-goal window, plus 10), with the sparse
    reward there; and the observation has no step."""
    from tests.sim.scripting import set_joint

    from memobench.core.suite import Suite

    horizon = 30 + Suite.load().get("T03-check-all-drawers").spec.monitor_steps + 10
    env = gymnasium.make("MEMOBench/T03-check-all-drawers-v2", horizon=horizon).unwrapped
    try:
        obs, _ = env.reset(seed=7)
        assert not {"episode", "step"} & set(obs)
        edits = {}
        for level, (opened, shut) in zip(("top", "middle", "bottom"), ((4, 9), (14, 19), (24, 29)), strict=True):
            edits[opened] = (f"wooden_cabinet_1_{level}_level", -0.15)
            edits[shut] = (f"wooden_cabinet_1_{level}_level", 0.002)
        rewards, ends = [], []
        for step in range(horizon):
            _, reward, terminated, truncated, info = env.step(NOOP_ACTION.astype(np.float32))
            if step in edits:
                set_joint(env._sim, *edits[step])
            rewards.append(reward)
            ends.append((terminated, truncated))
        assert info["checkpoints_completed"].all() and info["success"] and info["end_reason"] == "success"
        assert rewards == [0.0] * (horizon - 1) + [1.0]
        assert ends == [(False, False)] * (horizon - 1) + [(False, True)]
    finally:
        env.close()
