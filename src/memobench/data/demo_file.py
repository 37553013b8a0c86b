"""One HDF5 file per task, in the LIBERO/robomimic layout, plus MEMOBench's memory annotation.

::

    data/                       attrs: task_id, family, instruction, env_args (JSON), total,
                                       seed_base, attempts, successes, spec_hash, memobench_version
    data/demo_<i>/              attrs: num_samples, seed, attempt, variant, binding (JSON), layout_seed,
                                       arm_jitter (the protocol's arm_start_jitter; absent: 0),
                                       bddl, checkpoints (JSON), policy_start
        actions                 [T, 7]  float64, OSC_POSE delta actions as executed
        states                  [T, S]  float64, MuJoCo integration state before each action
        robot_states            [T, 8]  float32, eef position, axis-angle, gripper joints
        obs/ee_pos, obs/ee_ori, obs/gripper_states, obs/joint_states   [T, k] float64
        obs/agentview_rgb, obs/eye_in_hand_rgb                         [T, H, W, 3] uint8 (after render)
        cue/states, cue/robot_states                                   the cue video's states (C frames)
        cue/agentview_rgb, cue/eye_in_hand_rgb                         [C, H, W, 3] uint8 (after render)

``checkpoints`` holds, per checkpoint: ``index``, ``id``, ``op``, ``optional``,
the three ``text`` levels and ``key_frame``: the index ``t`` of the action
that completed it (its effect shows from ``states[t + 1]``), or null.
``policy_start`` is the number of cue frames: in a video made of the cue
followed by the demo, the policy's part begins there.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memobench.core.suite import Task
from memobench.data.demo_layout import check_demo_groups
from memobench.data.hdf5_input import open_hdf5

ENV_NAME = "MEMOBench-LIBERO"


@dataclass
class Demo:
    """One recorded demonstration: its arrays and attributes (see the module docstring)."""

    arrays: dict[str, np.ndarray]
    attrs: dict[str, Any]

    @property
    def length(self) -> int:
        return int(self.arrays["actions"].shape[0])


def checkpoint_annotation(task: Task, key_frames: list[int | None]) -> list[dict[str, Any]]:
    """The memory annotation of one demo: the task's checkpoints with their key frames."""
    return [
        {
            "index": i,
            "id": cp.id,
            "op": cp.op.value,
            "optional": cp.optional,
            "key_frame": frame,
            "text": {"coarse": cp.text.coarse, "intermediate": cp.text.intermediate, "fine": cp.text.fine},
        }
        for i, (cp, frame) in enumerate(zip(task.spec.checkpoints, key_frames, strict=True))
    ]


def file_attrs(
    task: Task, seed_base: int, attempts: int, demos: list[Demo], action_noise: float = 0.0
) -> dict[str, Any]:
    import memobench

    env_args = {
        "env_name": ENV_NAME,
        "type": "libero",
        "env_kwargs": {
            "controller": "OSC_POSE",
            "control_freq": 20,
            "camera_names": ["agentview", "robot0_eye_in_hand"],
        },
    }
    return {
        "task_id": task.id,
        "family": task.spec.family.value,
        "instruction": task.spec.instruction,
        "env_args": json.dumps(env_args),
        "total": sum(d.length for d in demos),
        "seed_base": seed_base,
        "action_noise": float(action_noise),
        "attempts": attempts,
        "successes": len(demos),
        "spec_hash": task.spec_hash,
        "memobench_version": getattr(memobench, "__version__", "unknown"),
    }


def _attr(value: Any) -> Any:
    return json.dumps(value) if isinstance(value, dict | list) else value


def write_task_file(path: Path, attrs: dict[str, Any], demos: list[Demo]) -> None:
    """Write the task's file atomically (a killed write leaves the old file or none)."""
    import h5py

    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".hdf5.partial")
    with h5py.File(partial, "w") as f:
        data = f.create_group("data")
        for key, value in attrs.items():
            data.attrs[key] = _attr(value)
        for i, demo in enumerate(demos):
            group = data.create_group(f"demo_{i}")
            for key, value in demo.attrs.items():
                group.attrs[key] = _attr(value)
            group.attrs["num_samples"] = demo.length
            for key, array in demo.arrays.items():
                images = array.dtype == np.uint8 and array.ndim == 4
                group.create_dataset(
                    key,
                    data=array,
                    compression="gzip" if images else None,
                    chunks=(1, *array.shape[1:]) if images and len(array) else None,
                )
    os.replace(partial, path)


JSON_ATTRS = {"env_args", "binding", "checkpoints"}


def open_demo_file(path: Path):
    """``h5py.File`` of a self-contained demo file whose demos have the documented layout (use it as
    a context manager); :class:`~memobench.data.hdf5_input.UntrustedHdf5Error` or
    :class:`~memobench.data.demo_layout.DemoLayoutError` (both ValueError) naming the file otherwise."""
    f = open_hdf5(path)
    try:
        check_demo_groups(f, path)
    except BaseException:
        f.close()
        raise
    return f


def _read_attrs(node) -> dict[str, Any]:
    out = {}
    for key, value in node.attrs.items():
        value = value.item() if isinstance(value, np.generic) else value
        out[key] = json.loads(value) if key in JSON_ATTRS else value
    return out


def read_file_summary(path: Path) -> tuple[dict[str, Any], int]:
    """The file's attributes and its number of demos, without reading any array."""

    with open_demo_file(path) as f:
        return _read_attrs(f["data"]), sum(1 for k in f["data"] if k.startswith("demo_"))


def iter_demos(path: Path, *, images: bool = True, arrays: bool = True) -> Iterator[Demo]:
    """The file's demos in order, read one at a time (memory holds one demo, never the file).

    Image arrays are skipped unless ``images``; with ``arrays=False`` only the attributes are read.
    """
    import h5py

    with open_demo_file(path) as f:
        data = f["data"]
        names = sorted((k for k in data if k.startswith("demo_")), key=lambda k: int(k.split("_")[1]))
        for name in names:
            group = data[name]
            found: dict[str, np.ndarray] = {}

            def keep(key: str, node, found=found) -> None:
                if isinstance(node, h5py.Dataset) and (images or not key.endswith("_rgb")):
                    found[key] = node[()]

            if arrays:
                group.visititems(keep)
            yield Demo(found, _read_attrs(group))


def read_task_file(path: Path, *, images: bool = True) -> tuple[dict[str, Any], list[Demo]]:
    """The file's attributes and its demos in order (image arrays skipped unless ``images``)."""

    with open_demo_file(path) as f:
        attrs = _read_attrs(f["data"])
    return attrs, list(iter_demos(path, images=images))


def first_non_finite_row(array: np.ndarray) -> int | None:
    """The first row (index along axis 0) of ``array`` holding a NaN or an infinity, or None."""
    array = np.asarray(array)
    if not np.issubdtype(array.dtype, np.floating) or not array.size:
        return None
    bad = ~np.isfinite(array).reshape(len(array), -1).all(axis=1)
    return int(np.argmax(bad)) if bad.any() else None


def non_finite_rows(demo: Demo) -> list[str]:
    """``"<key> row <i> is not finite (NaN or inf)"`` for each floating-point array of ``demo``
    holding a NaN or an infinity (its first such row): ``data validate``, ``data export`` and
    ``train`` refuse such a demo."""
    rows = ((key, first_non_finite_row(array)) for key, array in sorted(demo.arrays.items()))
    return [f"{key} row {row} is not finite (NaN or inf)" for key, row in rows if row is not None]
