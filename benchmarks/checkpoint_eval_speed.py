"""Evaluation speed of a trained ``checkpoint`` policy against a reference run in the same process.

Both sides run through the harness in this process, one after the other, on the same task, seeds
and horizon, replan 5: the numbers that matter are the ratios, so a busy machine moves both sides
alike. ``--obs state`` (camera-free) compares the checkpoint with the scripted expert; ``--obs rgb``
(both cameras at 64 px) compares it with the same checkpoint observing every control step, i.e.
what declining ``observe_rollout`` saves: two renders a step. Reported per policy: episodes/hour,
control steps/s (episodes end at different steps: the expert when the task is done, a weak policy at
the horizon, so steps/s compares the per-step cost fairly), and milliseconds per policy query (the
adapter's own time: the expert's forward-model plan, the checkpoint's observation plus the network).

    .venv/bin/python -m benchmarks.checkpoint_eval_speed [--obs state|rgb] [--checkpoint DIR] [--task T03]
        [--episodes 2] [--horizon H]

Without ``--checkpoint`` it first trains a stand-in (bc-gru, width 128, 20 steps on the synthetic
demos of tests/training, hashed-word text vectors; rendered at 64 px for ``rgb``): the network has
the trained shape and cost, but has not learnt the task, so its episodes run to the horizon. Run it
as a module from the repository root.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

os.environ.setdefault("MUJOCO_GL", "egl")


RGB_SIZE = 64  # the size run.sh renders the rgb model's demos at


def stand_in_checkpoint(folder: Path, obs: str) -> Path:
    """Train a bc-gru for a few steps on synthetic demos into ``folder``; returns the training folder."""
    from tests.training.synthetic import write_dataset

    from memobench.training.trainer import TrainSettings, train

    data, out = folder / "data", folder / "train"
    size = RGB_SIZE if obs == "rgb" else 0
    write_dataset(data, data / "state-features", tasks=2, demos=4, length=200, cue=60, image_size=size)
    train(TrainSettings(policy="bc-gru", obs=obs, steps=20, checkpoint_every=20, embedder="hash"), data, out)
    return out


def run(task, policy: dict, adapter, episodes: int, horizon: int | None) -> dict:
    """Episodes of ``task`` through the harness in this process: seconds, steps, queries, adapter time."""
    from benchmarks.harness_speed import timed_run

    size = RGB_SIZE if adapter.needs_images else 224
    seconds, records = timed_run(task, episodes, horizon, policy, adapter, resize_size=size)
    return {
        "seconds": seconds,
        "steps": sum(r["steps"] for r in records),
        "successes": sum(bool(r["success"]) for r in records),
        "queries": sum(r["policy_queries"] for r in records),
        "policy_seconds": sum(r.get("timings", {}).get("policy", 0.0) for r in records),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--obs", choices=["state", "rgb"], default="state", help="the stand-in's observations")
    parser.add_argument("--checkpoint", type=Path, help="a training folder (default: train a stand-in)")
    parser.add_argument("--task", default="T03-check-all-drawers")
    parser.add_argument("--episodes", type=int, default=2)
    parser.add_argument("--horizon", type=int, help="control steps per episode (default: the task's own)")
    args = parser.parse_args()

    import torch

    from memobench.core.suite import Suite
    from memobench.policies.loader import build_adapter, builtin_spec
    from memobench.training.checkpoint_policy import CheckpointPolicy

    class ObservingEveryStep(CheckpointPolicy):
        observe_rollout = True  # the harness's default: observe() (and its renders) every control step

    torch.set_num_threads(1)  # as in an evaluation worker
    task = Suite.load().get(args.task)
    with tempfile.TemporaryDirectory() as scratch:
        path = args.checkpoint or stand_in_checkpoint(Path(scratch), args.obs)
        checkpoint = {"name": "checkpoint", "adapter_kwargs": {"path": str(path)}}
        if CheckpointPolicy(str(path)).needs_images:
            reference, adapter = "observing every step", ObservingEveryStep(str(path))
            reference_spec = checkpoint
        else:
            reference, adapter = "expert", build_adapter(builtin_spec("expert"))
            reference_spec = {"name": "expert", "adapter_kwargs": {}}
        results = {
            reference: run(task, reference_spec, adapter, args.episodes, args.horizon),
            "checkpoint": run(task, checkpoint, CheckpointPolicy(str(path)), args.episodes, args.horizon),
        }
    n, h = args.episodes, args.horizon
    horizon = f"horizon {h}" if h else f"the task's horizon ({task.spec.horizon})"
    cameras = f"both cameras at {RGB_SIZE} px" if reference != "expert" else "camera-free"
    print(f"{task.id}, {n} episodes (seeds 7..{6 + n}), {horizon}, replan 5, {cameras}, one process")
    for name, r in results.items():
        per_hour = n * 3600 / r["seconds"]
        queries = max(r["queries"], 1)
        print(
            f"{name:20s}: {per_hour:7.0f} episodes/h, {r['steps'] / r['seconds']:6.1f} steps/s, "
            f"{1000 * r['policy_seconds'] / queries:6.1f} ms/query ({r['successes']}/{n} successes, "
            f"{r['steps']} steps, {r['seconds']:.1f} s)"
        )
    e, c = results[reference], results["checkpoint"]
    print(
        f"checkpoint / {reference}: episodes/h {e['seconds'] / c['seconds']:.2f}x, "
        f"steps/s {(c['steps'] / c['seconds']) / (e['steps'] / e['seconds']):.2f}x"
    )


if __name__ == "__main__":
    main()
