"""Episode videos hold the frames the policy was shown, plus every n-th step when asked; nothing else."""

from __future__ import annotations

import ctypes.util

import imageio.v3 as iio
import pytest

from memobench.core.suite import Suite
from memobench.evaluation.protocol import Protocol
from memobench.evaluation.run_request import RunRequest
from memobench.evaluation.runner import evaluate
from memobench.policies.builtin import NoopPolicy

pytestmark = [pytest.mark.sim, pytest.mark.skipif(ctypes.util.find_library("EGL") is None, reason="EGL not installed")]


def test_videos_have_one_frame_per_query_plus_every_nth_step(tmp_path):
    task = Suite.load().get("T03-check-all-drawers")
    counts = {}
    for every in (0, 2):
        request = RunRequest(
            tasks=[task],
            num_trials_per_task=1,
            out_root=tmp_path / f"every{every}",
            protocol=Protocol(horizon=20, replan_steps=5, resize_size=64, adapter_timeout=0),
            policy={"name": "noop", "adapter_kwargs": {}},
            video="all",
            video_every=every,
        )
        evaluate(request, NoopPolicy())
        videos = sorted((tmp_path / f"every{every}" / "videos" / task.id).glob("*.mp4"))
        assert [v.name.endswith("_wrist.mp4") for v in videos] == [False, True]
        counts[every] = [iio.imread(v).shape for v in videos]
    # 20 steps at replan 5: queries before steps 0, 5, 10, 15
    assert counts[0] == [(4, 64, 64, 3)] * 2
    # plus the states after steps 2, 4, 6, 8, 12, 14, 16, 18 (after 10 and 20 a query or the end follows)
    assert counts[2] == [(12, 64, 64, 3)] * 2
