"""Vector envs on cue tasks: two envs, seeds whose cues differ in length, reset and a step.

O01 (a point cue: 22 and 21 frames for seeds 7 and 8) and P04 (a demonstration: 86 and 89),
each in a ``SyncVectorEnv`` and an ``AsyncVectorEnv`` built by :func:`memobench.gym.vector.make_env`.
Camera-free; an async env builds three envs (the parent's, for the spaces, and two workers).
"""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

from memobench.core.suite import Suite
from memobench.gym.cue import cue_bound
from memobench.gym.vector import make_env
from memobench.sim.env import NOOP_ACTION

pytestmark = pytest.mark.sim


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("task", ["O01-cued-milk", "P04-stack-in-order"])
def test_cues_of_different_lengths_stack_padded_to_the_tasks_bound(task: str, use_async: bool) -> None:
    envs = make_env(task, 2, use_async_envs=use_async)
    kind = gymnasium.vector.AsyncVectorEnv if use_async else gymnasium.vector.SyncVectorEnv
    bound = cue_bound(Suite.load().get(task))
    try:
        assert isinstance(envs, kind)
        _, info = envs.reset(seed=[7, 8])
        lengths = info["cue_length"].tolist()
        assert lengths[0] != lengths[1] and max(lengths) <= bound
        states = info["cue"]["robot_state"]
        assert states.shape == (2, bound, 8)
        for cue, length in zip(states, lengths, strict=True):
            assert np.abs(cue[:length]).sum(axis=1).all() and not cue[length:].any()  # the cue, then zeros
        assert info["cue"]["object_poses"].shape[:2] == (2, bound)
        _, _, terminated, truncated, info = envs.step(np.tile(NOOP_ACTION, (2, 1)).astype(np.float32))
        assert list(info["step"]) == [1, 1] and not terminated.any() and not truncated.any()
    finally:
        envs.close()
