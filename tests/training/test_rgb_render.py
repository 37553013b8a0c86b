"""End to end: an rgb checkpoint runs in the harness, seeing the cue's frames and its own at the trained size."""

from __future__ import annotations

import ctypes.util
import json

import pytest

torch = pytest.importorskip("torch", reason="the training tests need torch (pip install 'memobench[train]')")

from tests.training.synthetic import write_dataset  # noqa: E402

from memobench.core.suite import Suite  # noqa: E402
from memobench.evaluation.protocol import Protocol  # noqa: E402
from memobench.evaluation.run_request import RunRequest  # noqa: E402
from memobench.evaluation.runner import evaluate  # noqa: E402
from memobench.training.checkpoint_policy import CheckpointPolicy  # noqa: E402
from memobench.training.trainer import TrainSettings, train  # noqa: E402

pytestmark = [
    pytest.mark.sim,
    pytest.mark.render,
    pytest.mark.skipif(ctypes.util.find_library("EGL") is None, reason="EGL not installed"),
]
SIDE = 32


class Watched(CheckpointPolicy):
    """Remembers how many cue frames it held, the image shape at each query, and what it observed."""

    def observe(self, obs):
        self.observed.append(bool(obs.get("cue")))
        super().observe(obs)

    def infer_actions(self, obs, prompt, resize_size):
        self.seen.append((len(self._cue_images), obs["observation/image"].shape, resize_size))
        return super().infer_actions(obs, prompt, resize_size)


def test_an_rgb_checkpoint_runs_in_the_harness_at_its_size_only(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("MUJOCO_GL", "egl")
    write_dataset(tmp_path / "data", tmp_path / "features", image_size=SIDE)
    settings = TrainSettings(policy="bc-gru", obs="rgb", steps=1, batch_size=2, hidden=16, embedder="hash")
    train(settings, tmp_path / "data", tmp_path / "model")
    task = Suite.load().get("O01-cued-milk")  # a task with a cue video
    ledgers = {}
    for size in (SIDE, 64):
        policy = Watched(str(tmp_path / "model"))
        policy.seen, policy.observed = [], []
        request = RunRequest(
            tasks=[task],
            num_trials_per_task=1,
            out_root=tmp_path / f"run{size}",
            protocol=Protocol(horizon=15, resize_size=size, adapter_timeout=0),
            policy={"name": "checkpoint", "adapter_kwargs": {"path": str(tmp_path / "model")}},
            workers=0,
        )
        evaluate(request, policy)
        ledgers[size] = json.loads((tmp_path / f"run{size}" / "ledger.jsonl").read_text().splitlines()[0])
        if size == SIDE:
            cue_frames = {seen[0] for seen in policy.seen}
            assert len(cue_frames) == 1 and cue_frames.pop() > 0  # the cue's frames arrived through observe
            assert policy.observed and all(policy.observed)  # and only they: no render each rollout step
            # the cue query, then a query every 5 steps
            assert {seen[1:] for seen in policy.seen} == {((SIDE, SIDE, 3), SIDE)} and len(policy.seen) == 1 + 3
    assert ledgers[SIDE]["status"] == "ok" and ledgers[SIDE]["steps"] == 15
    assert ledgers[64]["status"] != "ok" and f"evaluate it with --resize-size {SIDE}" in ledgers[64]["error"]
