"""How the exports' time and peak memory grow with the number of demos (LeRobot v3.0 and openpi).

The exports stream one demo at a time, so peak memory should stay flat as demos are added and
time should grow linearly. This checks both on synthetic demo files in MEMOBench's layout
(:mod:`memobench.data.demo_layout`): ``--steps`` policy frames and a 40-frame cue per demo,
both cameras at ``--size`` px (smooth images with noise, so video and PNG coding do real
work), the demos spread over the 30 task ids. Each export runs in a fresh child process, so its
peak RSS is its own. Printed per demo count and format: seconds, seconds per demo, peak RSS
(MB), and both as ratios to the smallest count's (the growth, measured in this run).

    .venv/bin/python benchmarks/export_scale.py [--demos 150,450,1500] [--size 64] [--steps 300]

Needs pyarrow (the ``export`` extra); the synthetic files are written under a temporary folder.
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import tempfile
import time
from pathlib import Path

import numpy as np

CUE_FRAMES = 40
STATE_WIDTH = 77


def synthetic_demo(rng: np.random.Generator, steps: int, size: int):
    """A demo with every array of the layout, images a drifting gradient plus noise."""
    from memobench.data.demo_file import Demo

    def frames(n: int) -> np.ndarray:
        ramp = np.linspace(0, 200, size, dtype=np.float32)
        base = (ramp[None, :, None] + ramp[None, None, :] / 2 + np.arange(n, dtype=np.float32)[:, None, None]) % 256
        noisy = base[..., None] + rng.normal(0, 8, (n, size, size, 3)).astype(np.float32)
        return np.clip(noisy, 0, 255).astype(np.uint8)

    arrays = {
        "actions": rng.uniform(-1, 1, (steps, 7)),
        "states": rng.normal(size=(steps, STATE_WIDTH)),
        "robot_states": rng.normal(size=(steps, 8)).astype(np.float32),
        "obs/ee_pos": rng.normal(size=(steps, 3)),
        "obs/ee_ori": rng.normal(size=(steps, 4)),
        "obs/gripper_states": rng.normal(size=(steps, 2)),
        "obs/joint_states": rng.normal(size=(steps, 7)),
        "obs/agentview_rgb": frames(steps),
        "obs/eye_in_hand_rgb": frames(steps),
        "cue/states": rng.normal(size=(CUE_FRAMES, STATE_WIDTH)),
        "cue/robot_states": rng.normal(size=(CUE_FRAMES, 8)).astype(np.float32),
        "cue/agentview_rgb": frames(CUE_FRAMES),
        "cue/eye_in_hand_rgb": frames(CUE_FRAMES),
    }
    third = steps // 3
    checkpoints = [
        {
            "index": i,
            "id": f"c{i}",
            "op": "storage",
            "optional": False,
            "key_frame": frame,
            "text": {"coarse": f"step {i}", "intermediate": f"the step {i} done", "fine": f"the step {i} was done"},
        }
        for i, frame in enumerate((third, 2 * third))
    ]
    attrs = {"num_samples": steps, "seed": 1_000_000, "attempt": 0, "variant": 0, "layout_seed": 0}
    return Demo(arrays, attrs | {"checkpoints": checkpoints, "binding": {}, "policy_start": CUE_FRAMES})


def write_source(folder: Path, demos: int, steps: int, size: int) -> None:
    """``demos`` synthetic demos over the suite's 30 task ids, one file per task."""
    from memobench.core.suite import Suite
    from memobench.data.demo_file import write_task_file

    ids = Suite.load().ids
    rng = np.random.default_rng(0)
    for k, task_id in enumerate(ids):
        count = demos // len(ids) + (1 if k < demos % len(ids) else 0)
        if count:
            batch = [synthetic_demo(rng, steps, size) for _ in range(count)]
            attrs = {"task_id": task_id, "family": "x", "instruction": f"do task {k}", "seed_base": 1_000_000}
            write_task_file(folder / f"{task_id}.hdf5", attrs | {"attempts": count, "total": count * steps}, batch)


def _export(fmt: str, source: str, out: str, queue) -> None:
    from memobench.data.export import export

    start = time.perf_counter()
    export(Path(source), Path(out), fmt=fmt, prompt="instruction", environment_state=None)
    queue.put((time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))


def measure(fmt: str, source: Path, out: Path) -> tuple[float, float]:
    """(seconds, peak RSS in MB) of one export in a fresh process."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    child = context.Process(target=_export, args=(fmt, str(source), str(out), queue))
    child.start()
    result = queue.get()
    child.join()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--demos", default="150,450,1500")
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    counts = [int(n) for n in args.demos.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in counts:
            source = Path(tmp) / f"src-{n}"
            write_source(source, n, args.steps, args.size)
            for fmt in ("lerobot", "openpi"):
                seconds, rss = measure(fmt, source, Path(tmp) / f"{fmt}-{n}")
                rows.append((n, fmt, seconds, rss))
                print(
                    f"{n:>5} demos  {fmt:<8} {seconds:8.1f} s  {seconds / n:6.3f} s/demo  peak RSS {rss:7.0f} MB",
                    flush=True,
                )
    print(f"\ngrowth against {counts[0]} demos ({args.steps} steps, {args.size} px, both cameras):")
    for fmt in ("lerobot", "openpi"):
        base = next(r for r in rows if r[1] == fmt and r[0] == counts[0])
        for n, f, seconds, rss in rows:
            if f == fmt:
                print(
                    f"  {fmt:<8} {n:>5} demos: time x{seconds / base[2]:.2f} (demos x{n / counts[0]:.1f}), "
                    f"peak RSS x{rss / base[3]:.2f}"
                )


if __name__ == "__main__":
    main()
