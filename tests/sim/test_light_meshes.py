"""Light render meshes: physics identical across render qualities; decimation keeps a usable mesh."""

from __future__ import annotations

import ctypes.util

import numpy as np
import pytest

from memobench.evaluation.protocol import plan_episode
from memobench.sim.env import SimEnv
from memobench.sim.render import psnr


@pytest.mark.sim
@pytest.mark.render
@pytest.mark.skipif(ctypes.util.find_library("EGL") is None, reason="EGL not installed")
def test_fast_quality_changes_frames_only_never_physics(suite, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMOBENCH_CACHE", str(tmp_path))
    task = suite.get("S01")
    plan = plan_episode(task, 0, 7)
    envs = {q: SimEnv(task.bddl(plan.binding), render=True, render_quality=q) for q in ("reference", "fast")}
    try:
        ref, fast = envs["reference"], envs["fast"]
        m_ref, m_fast = ref.sim.model._model, fast.sim.model._model
        assert m_fast.nmeshface == m_ref.nmeshface  # the physics model keeps every face
        np.testing.assert_array_equal(m_fast.mesh_facenum, m_ref.mesh_facenum)
        for env in envs.values():
            env.reset(plan.layout_seed)
        first = {q: env.render("agentview", 128) for q, env in envs.items()}
        assert not np.array_equal(first["reference"], first["fast"])  # the light meshes are drawn
        assert psnr(first["reference"], first["fast"]) > 28
        actions = np.random.default_rng(1).uniform(-1, 1, size=(40, 7))
        for i, action in enumerate(actions):
            for env in envs.values():
                env.step(action)
                if i % 5 == 0:  # frames at a policy's query rate: rendering must leave no trace
                    env.render("agentview", 128)
                    env.render("wrist", 128)
            np.testing.assert_array_equal(ref.physics_state(), fast.physics_state())
            np.testing.assert_array_equal(ref.sim.data.qvel, fast.sim.data.qvel)
    finally:
        for env in envs.values():
            env.close()
