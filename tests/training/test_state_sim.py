"""The training state vector is the Gymnasium ``state`` observation, flattened and padded (real simulator)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch", reason="the training tests need torch (pip install 'memobench[train]')")
gymnasium = pytest.importorskip("gymnasium")

import memobench.gym  # noqa: E402, F401  (registers the ids)
from memobench.data.state_features import MAX_OBJECTS, ROBOT_DIM, STATE_DIM, state_vector  # noqa: E402
from memobench.sim.env import NOOP_ACTION  # noqa: E402

pytestmark = pytest.mark.sim

TOP = "wooden_cabinet_1_top_region"


def flattened(obs: dict) -> np.ndarray:
    out = np.zeros(STATE_DIM, np.float32)
    n = len(obs["object_visible"])
    out[:ROBOT_DIM] = obs["robot_state"]
    out[ROBOT_DIM : ROBOT_DIM + 7 * n] = obs["object_poses"].ravel()
    out[ROBOT_DIM + 7 * MAX_OBJECTS : ROBOT_DIM + 7 * MAX_OBJECTS + n] = obs["object_visible"]
    joints = obs.get("fixture_joints", np.zeros(0))
    start = ROBOT_DIM + 8 * MAX_OBJECTS
    out[start : start + len(joints)] = joints
    return out


def test_state_vector_equals_the_gym_observation_and_masks_a_shut_in_object() -> None:
    env = gymnasium.make("MEMOBench/S01-hide-and-retrieve-butter-v2")
    try:
        obs, info = env.reset(seed=7)
        sim, world = env.unwrapped._sim, env.unwrapped._world
        np.testing.assert_array_equal(state_vector(sim, world, obs["robot_state"]), flattened(obs))
        butter = info["object_names"].index("butter_1")
        joint = sim.sim.model.get_joint_qpos_addr("butter_1_joint0")[0]
        sim.sim.data.qpos[joint : joint + 3] = world.position(TOP) + [0, 0, 0.01]
        for _ in range(20):
            env.step(NOOP_ACTION)
        open_at = world.position(TOP)
        sim.sim.data.set_joint_qpos("wooden_cabinet_1_top_level", 0.0)
        sim.sim.forward()
        sim.sim.data.qpos[joint : joint + 3] += world.position(TOP) - open_at
        sim.sim.forward()
        obs, *_ = env.step(NOOP_ACTION)
        vector = state_vector(sim, world, obs["robot_state"])
        np.testing.assert_array_equal(vector, flattened(obs))
        assert vector[ROBOT_DIM + 7 * MAX_OBJECTS + butter] == 0
        assert not vector[ROBOT_DIM + 7 * butter : ROBOT_DIM + 7 * butter + 7].any()
    finally:
        env.close()
