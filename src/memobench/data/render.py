"""``memobench data render``: add camera images to camera-free demos by replaying their states.

Collection stores the MuJoCo state before every action (and at every cue
frame); rendering puts each stored state back into a rendering env built from
the suite's BDDL of the demo's task and variant (a file whose stored BDDL differs
is refused: :mod:`memobench.data.demo_bddl`) and reset to its layout, and draws it. The frames are the
ones a camera would have shown live (tests/data check them bit for bit):
:meth:`SimEnv.render` always draws poses computed from the current state.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np

from memobench.data.demo_bddl import DemoFileError, replay_envs, suite_scenes
from memobench.data.demo_file import read_task_file
from memobench.evaluation.protocol import Protocol
from memobench.sim.render import resize_with_pad

IMAGE_KEYS = {"agentview": "agentview_rgb", "wrist": "eye_in_hand_rgb"}  # LIBERO's observation names


def render_states(env, states: np.ndarray, cameras: list[str], size: int) -> dict[str, np.ndarray]:
    """Frames [N, size, size, 3] per camera for stored physics states, as a policy is shown them.

    Drawn at the protocol's camera size and resized to ``size`` the way the harness resizes
    to ``--resize-size`` (:func:`memobench.evaluation.episode.policy_images`): a model trained
    on these frames sees the same pixels at evaluation with ``--resize-size size``.
    """
    camera_size = Protocol().camera_size
    frames: dict[str, list[np.ndarray]] = {c: [] for c in cameras}
    for state in states:
        for i, camera in enumerate(cameras):
            # the first camera puts the state in place; the others draw the same state
            frame = env.render_state(state, camera, camera_size) if i == 0 else env.render(camera, camera_size)
            frames[camera].append(resize_with_pad(frame, size))
    return {c: np.stack(f) if f else np.zeros((0, size, size, 3), np.uint8) for c, f in frames.items()}


def already_rendered(path: Path, size: int, cameras: list[str], quality: str) -> bool:
    """Whether every demo of ``path`` has ``cameras``' frames drawn at ``size`` and ``quality``.

    What lets a killed ``data render`` resume by skipping finished files. The file attributes
    suffice for a file this project wrote (collection refuses to add demos to a rendered file);
    the per-demo check guards against a file changed some other way. False for any unreadable file.
    """
    import h5py

    try:
        with h5py.File(path, "r") as f:
            data = f["data"]
            if (
                int(data.attrs.get("image_size", 0)) != size
                or str(data.attrs.get("render_quality", "")) != quality
                or not set(cameras) <= set(str(data.attrs.get("cameras", "")).split(","))
            ):
                return False
            keys = [f"{prefix}/{IMAGE_KEYS[c]}" for c in cameras for prefix in ("obs", "cue")]
            demos = [data[k] for k in data if k.startswith("demo_")]
            return all(key in demo for demo in demos for key in keys)
    except (OSError, KeyError, ValueError):
        return False


def render_task_file(
    path: Path,
    size: int,
    cameras: list[str],
    after_demo: Callable[[], None] | None = None,
    quality: str = "reference",
) -> int:
    """Add ``obs/<camera>_rgb`` and ``cue/<camera>_rgb`` to every demo of ``path``; returns frames drawn.

    ``quality`` is :class:`~memobench.sim.env.SimEnv`'s ``render_quality``, recorded in the
    file's ``data`` attribute ``render_quality``.

    Rewrites a copy and swaps it in, so an interrupted render leaves the file as it was.
    Raises :class:`~memobench.data.demo_bddl.DemoFileError` (before writing anything) for a
    file that is not a readable demo file or whose stored BDDL is not the suite's.
    ``after_demo`` is called once each demo is drawn (a worker checks there whether to stop).
    """
    import h5py

    unknown = [c for c in cameras if c not in IMAGE_KEYS]
    if unknown:
        raise ValueError(f"unknown camera(s) {', '.join(unknown)}; known: {', '.join(IMAGE_KEYS)}")
    try:
        attrs, demos = read_task_file(path, images=False)
    except (OSError, KeyError, ValueError) as e:  # not HDF5, no data group, bad JSON attribute
        raise DemoFileError(f"{path}: not a readable demo file ({type(e).__name__}: {e})") from None
    scenes = suite_scenes(path, attrs, demos)
    partial = path.with_suffix(".hdf5.partial")
    shutil.copyfile(path, partial)
    drawn = 0
    try:
        replays = replay_envs(demos, scenes, render=True, render_quality=quality)
        with h5py.File(partial, "a") as f, contextlib.closing(replays):
            for i, demo, env in replays:
                group = f[f"data/demo_{i}"]
                for prefix, key in (("obs", "states"), ("cue", "cue/states")):
                    for camera, frames in render_states(env, demo.arrays[key], cameras, size).items():
                        name = f"{prefix}/{IMAGE_KEYS[camera]}"
                        if name in group:
                            del group[name]
                        group.create_dataset(
                            name, data=frames, compression="gzip", chunks=(1, size, size, 3) if len(frames) else None
                        )
                        drawn += len(frames)
                if after_demo:
                    after_demo()
            f["data"].attrs["image_size"] = size
            f["data"].attrs["camera_size"] = Protocol().camera_size
            f["data"].attrs["cameras"] = ",".join(cameras)
            f["data"].attrs["render_quality"] = quality
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return drawn
