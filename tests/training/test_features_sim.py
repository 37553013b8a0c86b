"""Features computed from a demo file equal the state vectors the checkpoint policy builds live (real simulator).

A short episode of O01 (it has a cue and a drawn binding) is recorded as ``collect`` records one,
with a privileged probe as the policy that builds, at every step, the vector the checkpoint policy
builds (:class:`SceneCopy`, restored from the harness's snapshot). ``memobench data features``
(``featurise_task_file`` on its job) must give the same vectors from the stored physics states.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch", reason="the training tests need torch (pip install 'memobench[train]')")

from typer.testing import CliRunner  # noqa: E402

from memobench.cli import app  # noqa: E402
from memobench.core.suite import Suite  # noqa: E402
from memobench.data.collect import record_demo  # noqa: E402
from memobench.data.demo_file import file_attrs, write_task_file  # noqa: E402
from memobench.data.state_features import STATE_DIM, features_path  # noqa: E402
from memobench.evaluation.protocol import Protocol, plan_episode  # noqa: E402
from memobench.policies.adapter import AdapterGuard  # noqa: E402
from memobench.sim.env import SimEnv  # noqa: E402
from memobench.training.checkpoint_policy import SceneCopy  # noqa: E402

pytestmark = pytest.mark.sim

SEED_BASE = 1_000_000


class Probe:
    """Moves the arm a little and keeps the checkpoint policy's state vector of every query."""

    privileged = True
    needs_images = False
    chunk_size = 1

    def __init__(self) -> None:
        self.scene = SceneCopy()
        self.vectors: list[np.ndarray] = []

    def reset(self) -> None:
        pass

    def infer_actions(self, obs, prompt, resize_size):
        action = np.zeros((1, 7))
        if obs.get("cue"):  # the cue query: its chunk is discarded, no demo frame is made of it
            return action
        self.vectors.append(self.scene.vector(obs))
        action[0, 1] = 0.5  # sideways: the arm's pose changes every step
        action[0, 6] = -1.0
        return action


def test_featurised_demo_equals_the_live_state_vectors(tmp_path) -> None:
    task = Suite.load().get("O01-cued-milk")
    probe = Probe()
    plan = plan_episode(task, 0, SEED_BASE)
    env = SimEnv(task.bddl(plan.binding), render=False)
    try:
        _, demo = record_demo(
            task, 0, SEED_BASE, env, AdapterGuard(probe, timeout=None), Protocol(horizon=12, replan_steps=1)
        )
    finally:
        env.close()
        probe.scene.close()
    path = tmp_path / f"{task.id}.hdf5"
    write_task_file(path, file_attrs(task, SEED_BASE, 1, [demo]), [demo])
    # through `memobench data features` (a job, as its workers run it), then kept when current
    featurise = ["data", "features", str(tmp_path), "--workers", "0"]
    first = CliRunner().invoke(app, featurise)
    assert first.exit_code == 0 and "Featurised 1 file(s) (12 frames)" in first.output, first.output
    again = CliRunner().invoke(app, featurise)
    assert again.exit_code == 0 and "Featurised 0 file(s)" in again.output and "1 already current" in again.output

    import h5py

    with h5py.File(features_path(tmp_path / "state-features", path)) as f:
        stored = f["demo_0/state"][()]
    assert stored.shape == (12, STATE_DIM) and len(demo.arrays["cue/states"]) > 0
    np.testing.assert_allclose(stored, np.stack(probe.vectors), atol=1e-6)
    assert not np.allclose(stored[0], stored[-1])  # the arm moved
