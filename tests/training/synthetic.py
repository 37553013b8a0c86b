"""Tiny demo files in the layout ``memobench collect`` writes, with their state-features files.

The features are what :func:`memobench.data.state_features.featurise_task_file` writes, but made up
(each step's robot state, padded), so training tests need no simulator.
"""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np

from memobench.data.demo_file import Demo, write_task_file
from memobench.data.state_features import FEATURES_FORMAT, STATE_DIM, features_path

CHECKPOINTS = [
    {
        "index": 0,
        "id": "a",
        "op": "storage",
        "optional": False,
        "text": {lvl: f"first {lvl}" for lvl in ("coarse", "intermediate", "fine")},
    },
    {
        "index": 1,
        "id": "b",
        "op": "update",
        "optional": False,
        "text": {lvl: f"second {lvl}" for lvl in ("coarse", "intermediate", "fine")},
    },
]


def demo(length: int, key_frames: tuple[int | None, int | None], cue: int, seed: int, image_size: int = 0) -> Demo:
    """One demo; with ``image_size``, both cameras' frames of the demo and its cue, as ``data render`` adds them."""
    rng = np.random.default_rng(seed)
    checkpoints = [dict(cp, key_frame=k) for cp, k in zip(CHECKPOINTS, key_frames, strict=True)]
    robot = rng.standard_normal((length, 8)).astype(np.float32)
    arrays = {
        "actions": np.tanh(robot[:, :7]).astype(np.float64),  # learnable: a function of the current state
        "states": rng.standard_normal((length, 5)),
        "robot_states": robot,
        "cue/states": rng.standard_normal((cue, 5)),
        "cue/robot_states": rng.standard_normal((cue, 8)).astype(np.float32),
    }
    if image_size:
        for prefix, count in (("obs", length), ("cue", cue)):
            for key in ("agentview_rgb", "eye_in_hand_rgb"):
                arrays[f"{prefix}/{key}"] = rng.integers(0, 256, (count, image_size, image_size, 3), dtype=np.uint8)
    attrs = {"seed": 1_000_000 + seed, "attempt": seed, "variant": 0, "binding": {}, "layout_seed": seed}
    return Demo(arrays, attrs | {"checkpoints": checkpoints, "policy_start": cue, "bddl": ""})


def write_dataset(
    data: Path, features: Path, tasks: int = 2, demos: int = 2, length: int = 23, cue: int = 12, image_size: int = 0
) -> None:
    """``tasks`` files of ``demos`` demos (``length`` + 7 per demo index + task index steps; the first demo
    of each file has a ``cue``-frame cue) and their features; rendered at ``image_size`` px if given."""
    for t in range(tasks):
        path = data / f"T0{t + 1}-synthetic.hdf5"
        items = [
            demo(length + 7 * i + t, (5 + i, 15 + i), cue=cue if i == 0 else 0, seed=10 * t + i, image_size=image_size)
            for i in range(demos)
        ]
        attrs = {
            "task_id": path.stem,
            "instruction": f"do task {t}",
            "family": "temporal",
            "spec_hash": f"h{t}",
            "total": sum(d.length for d in items),
        } | ({"image_size": image_size} if image_size else {})
        write_task_file(path, attrs, items)
        write_features(path, features_path(features, path), items, attrs)


def write_features(source: Path, target: Path, items: list[Demo], attrs: dict) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with h5py.File(target, "w") as f:
        for i, d in enumerate(items):
            state = np.zeros((d.length, STATE_DIM), np.float32)
            state[:, :8] = d.arrays["robot_states"]
            f.create_dataset(f"demo_{i}/state", data=state)
        f.attrs.update(
            {"format": FEATURES_FORMAT, "spec_hash": attrs["spec_hash"], "demos": len(items), "total": attrs["total"]}
        )
