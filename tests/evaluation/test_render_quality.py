"""The render quality changes what a camera shows, never the episode: ledgers are identical across qualities."""

from __future__ import annotations

import ctypes.util

import pytest

from memobench.core.suite import Suite
from memobench.evaluation.protocol import Protocol
from memobench.evaluation.run_request import RunRequest
from memobench.evaluation.runner import evaluate
from memobench.policies.loader import build_adapter, builtin_spec

pytestmark = [
    pytest.mark.sim,
    pytest.mark.render,
    pytest.mark.skipif(ctypes.util.find_library("EGL") is None, reason="EGL not installed"),
]


def test_ledgers_are_identical_across_render_qualities(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMOBENCH_CACHE", str(tmp_path / "cache"))
    task = Suite.load().get("T01-check-top-drawer")
    records = {}
    for quality in ("reference", "fast"):
        request = RunRequest(
            tasks=[task],
            num_trials_per_task=1,
            out_root=tmp_path / quality,
            # 120 steps of the expert opening the drawer, a frame of both cameras before every query
            protocol=Protocol(horizon=120, resize_size=64, adapter_timeout=0, render_quality=quality),
            policy={"name": "expert", "adapter_kwargs": {}},
            video="all",
        )
        result = evaluate(request, build_adapter(builtin_spec("expert")))
        (record,) = result.records
        records[quality] = record.model_dump(exclude={"timings"})
        assert len(list((tmp_path / quality / "videos" / task.id).glob("*.mp4"))) == 2  # frames were drawn
    assert records["reference"]["checkpoints"], "the expert made progress in 120 steps"
    assert records["reference"] == records["fast"]
