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
import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np

from memobench.data.demo_bddl import DemoFileError, replay_envs, suite_scenes
from memobench.data.demo_file import read_task_file
from memobench.data.demo_layout import IMAGE_KEYS
from memobench.data.hdf5_input import open_hdf5
from memobench.evaluation.atomic_file import atomic_write_text
from memobench.evaluation.protocol import Protocol
from memobench.sim.render import resize_with_pad


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

    try:
        with open_hdf5(path) as f:
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

    The file is replaced only when every demo is drawn, so an interrupted render leaves it as
    it was. Each demo's frames go first to a journal beside it (:class:`RenderJournal`, kept
    when the render stops early, removed once the file is complete), so an interrupted render
    keeps its finished demos and the next one draws only the others: the result is the same.
    Raises :class:`~memobench.data.demo_bddl.DemoFileError` (before writing anything) for a
    file that is not a readable demo file or whose stored BDDL is not the suite's.
    ``after_demo`` is called once each demo is drawn (a worker checks there whether to stop).
    """
    unknown = [c for c in cameras if c not in IMAGE_KEYS]
    if unknown:
        raise ValueError(f"unknown camera(s) {', '.join(unknown)}; known: {', '.join(IMAGE_KEYS)}")
    try:
        attrs, demos = read_task_file(path, images=False)
    except (OSError, KeyError, ValueError) as e:  # not HDF5, no data group, bad JSON attribute
        raise DemoFileError(f"{path}: not a readable demo file ({type(e).__name__}: {e})") from None
    scenes = suite_scenes(path, attrs, demos)
    journal = RenderJournal.open(path, size, cameras, quality)
    pending = {i for i, demo in enumerate(demos) if not journal.has(i, demo)}
    drawn = 0
    with contextlib.closing(replay_envs(demos, scenes, only=pending, render=True, render_quality=quality)) as replays:
        for i, demo, env in replays:
            frames = {
                f"{prefix}/{IMAGE_KEYS[camera]}": images
                for prefix, key in (("obs", "states"), ("cue", "cue/states"))
                for camera, images in render_states(env, demo.arrays[key], cameras, size).items()
            }
            journal.add(i, frames)
            drawn += sum(len(images) for images in frames.values())
            if after_demo:
                after_demo()
    camera_size = Protocol().camera_size
    attrs = {"image_size": size, "camera_size": camera_size, "cameras": ",".join(cameras), "render_quality": quality}
    journal.write_into(path, len(demos), attrs)
    return drawn


class RenderJournal:
    """The demos of one file drawn so far: ``<task>.render/demo_<i>.hdf5``, each written whole.

    A demo's frames are stored as the finished file stores them (gzip, one frame a chunk) and
    copied into it as they are, compressed. ``key.json`` records what the frames were drawn
    for (size, cameras, quality, the SHA-256 of the demo file); a journal drawn for anything
    else is discarded when opened, and a demo whose journal entry is unreadable or does not
    match the demo's length is drawn again.
    """

    def __init__(self, folder: Path, size: int, cameras: list[str]) -> None:
        self.folder, self.size, self.cameras = folder, size, cameras

    @classmethod
    def open(cls, path: Path, size: int, cameras: list[str], quality: str) -> RenderJournal:
        folder = path.with_suffix(".render")
        key = {"size": size, "cameras": cameras, "quality": quality, "source": _sha256(path)}
        try:
            kept = json.loads((folder / "key.json").read_text()) == key
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            kept = False
        if not kept:
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            atomic_write_text(folder / "key.json", json.dumps(key))
        return cls(folder, size, cameras)

    def _entry(self, i: int) -> Path:
        return self.folder / f"demo_{i}.hdf5"

    def has(self, i: int, demo) -> bool:
        """Whether demo ``i``'s frames are in the journal: every camera, one uint8 frame per state."""

        lengths = {"obs": len(demo.arrays["states"]), "cue": len(demo.arrays["cue/states"])}
        try:
            with open_hdf5(self._entry(i)) as f:
                entries = [f[f"{prefix}/{IMAGE_KEYS[c]}"] for prefix in lengths for c in self.cameras]
                shapes = [(lengths[prefix], self.size, self.size, 3) for prefix in lengths for _ in self.cameras]
                return all(e.shape == shape and e.dtype == np.uint8 for e, shape in zip(entries, shapes, strict=True))
        except (OSError, KeyError, ValueError):
            return False

    def add(self, i: int, frames: dict[str, np.ndarray]) -> None:
        """Journal demo ``i``'s frames (``obs/<key>`` and ``cue/<key>`` arrays): written whole, then named."""
        import h5py

        partial = self._entry(i).with_suffix(".partial")
        with h5py.File(partial, "w") as f:
            for name, images in frames.items():
                chunks = (1, self.size, self.size, 3) if len(images) else None
                f.create_dataset(name, data=images, compression="gzip", chunks=chunks)
        os.replace(partial, self._entry(i))

    def write_into(self, path: Path, demos: int, attrs: dict) -> None:
        """Put every journaled demo's frames into a copy of ``path``, swap it in, drop the journal."""
        import h5py

        partial = path.with_suffix(".hdf5.partial")
        shutil.copyfile(path, partial)
        try:
            with h5py.File(partial, "a") as f:
                for i in range(demos):
                    group = f[f"data/demo_{i}"]
                    with open_hdf5(self._entry(i)) as entry:
                        for name in (f"{p}/{IMAGE_KEYS[c]}" for p in ("obs", "cue") for c in self.cameras):
                            if name in group:
                                del group[name]
                            entry.copy(entry[name], group, name=name)
                f["data"].attrs.update(attrs)
            os.replace(partial, path)
        finally:
            partial.unlink(missing_ok=True)
        shutil.rmtree(self.folder)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
