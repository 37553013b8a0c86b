"""Training batches streamed from the HDF5 demos, one demo at a time (never the whole dataset in memory).

A training item is one demo as a sequence of frames, one every ``stride`` control steps from a
random phase (the checkpoint policy is queried every ``--replan-steps``, 5 by default, and sees
a frame at each query). Per frame ``t``:

- ``state``: in ``state`` mode the state vector (:mod:`memobench.data.state_features`), read from the demo
  file's features file; in ``rgb`` mode the robot state (8), with both cameras' frames (``images``,
  [F, 2, H, W, 3] uint8: agent view, wrist) as ``memobench data render`` stored them, reading only
  the frames used;
- the **prompt**: the instruction, or under oracle-memory training the exact prompt the harness gives
  under ``--memory-oracle`` (:func:`memobench.core.oracle.oracle_prompt` of the checkpoints completed
  before ``t``, at the text level);
- the **memory text**: the text of the checkpoint active at ``t`` (the first not yet completed; the last
  once all are), at the text level; the definitions are the LeRobot export's
  (:func:`memobench.data.lerobot.current_checkpoints`, :func:`~memobench.data.lerobot.completed_mask`);
- the **target**: ``actions[t : t + chunk]``, zero-padded past the demo's end, with a mask.

The cue is the sequence of its robot states every ``stride`` frames (in ``rgb`` mode with the cue's
rendered frames, ``cue_images``). Shuffled-subgoal training
permutes, per demo, which checkpoint's text each checkpoint carries.

Batch ``b`` draws its demos from ``numpy.random.SeedSequence([seed, b])``: a resumed run sees the
batches an uninterrupted one would.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from memobench.core.oracle import oracle_prompt
from memobench.data.demo_file import first_non_finite_row, open_demo_file, read_file_summary
from memobench.data.demo_layout import IMAGE_KEYS
from memobench.data.hdf5_input import open_hdf5
from memobench.data.lerobot import completed_mask, current_checkpoints
from memobench.data.state_features import feature_rows, features_path

TEXT_LEVELS = ("coarse", "intermediate", "fine")
OBS_MODES = ("state", "rgb")
CAMERA_KEYS = tuple(IMAGE_KEYS.values())  # the demo files' names, in the networks' camera order


@dataclass(frozen=True)
class DataOptions:
    """What a training item holds; saved with the checkpoint (evaluation must see the same)."""

    stride: int = 5
    chunk: int = 50
    text_level: str = "intermediate"
    oracle_memory: bool = False
    shuffle_subgoals: bool = False
    obs: str = "state"

    def __post_init__(self) -> None:
        if self.obs not in OBS_MODES:
            raise ValueError(f"--obs must be one of {', '.join(OBS_MODES)}, not {self.obs!r}")
        if self.text_level not in TEXT_LEVELS:
            raise ValueError(f"text level must be one of {', '.join(TEXT_LEVELS)}, not {self.text_level!r}")
        if self.stride < 1 or self.chunk < 1:
            raise ValueError("stride and chunk must be positive")


@dataclass
class EpisodeItem:
    """One demo as frames (numpy), with its texts; see the module docstring."""

    state: np.ndarray  # [F, S] float32
    steps: np.ndarray  # [F] int64: the control step of each frame
    actions: np.ndarray  # [F, chunk, 7] float32
    action_mask: np.ndarray  # [F, chunk] bool
    cue: np.ndarray  # [C, 8] float32
    prompts: list[str] = field(default_factory=list)  # [F]
    memory_texts: list[str] = field(default_factory=list)  # [F]
    images: np.ndarray | None = None  # rgb mode: [F, 2, H, W, 3] uint8
    cue_images: np.ndarray | None = None  # rgb mode: [C, 2, H, W, 3] uint8


def episode_item(
    actions: np.ndarray,
    state: np.ndarray,
    cue_robot_states: np.ndarray,
    checkpoints: list[dict[str, Any]],
    instruction: str,
    options: DataOptions,
    phase: int = 0,
    permutation: np.ndarray | None = None,
    cameras: tuple[Any, Any] | None = None,
    cue_cameras: tuple[Any, Any] | None = None,
) -> EpisodeItem:
    """The frames of one demo from ``phase`` on, every ``options.stride`` steps (see the module docstring).

    rgb mode: ``cameras`` and ``cue_cameras`` are the (agent view, wrist) frames [T, H, W, 3] of the
    demo and of its cue, as arrays or h5py datasets (only the frames used are read).
    """
    length = len(actions)
    if len(state) != length:
        raise ValueError(f"the features hold {len(state)} steps, the demo {length}: featurise it again")
    steps = np.arange(min(phase, max(length - 1, 0)), length, options.stride)
    texts = [cp["text"][options.text_level] for cp in checkpoints]
    if permutation is not None:
        texts = [texts[j] for j in permutation]
    active = current_checkpoints(checkpoints, length)[steps]
    done = completed_mask(checkpoints, length)[steps]
    chunk = options.chunk
    padded = np.concatenate([actions, np.zeros((chunk, actions.shape[1]))])
    windows = np.stack([padded[t : t + chunk] for t in steps]) if len(steps) else np.zeros((0, chunk, 7))
    mask = (steps[:, None] + np.arange(chunk)[None, :]) < length
    if options.oracle_memory:
        prompts = [oracle_prompt(instruction, [t for t, d in zip(texts, row, strict=True) if d]) for row in done]
    else:
        prompts = [instruction] * len(steps)
    images = cue_images = None
    if options.obs == "rgb":
        if cameras is None or cue_cameras is None:
            raise ValueError("rgb mode needs both cameras' frames of the demo and its cue")
        images = np.stack([_frames(c, steps) for c in cameras], axis=1)
        cue_images = np.stack([_frames(c, np.arange(0, len(c), options.stride)) for c in cue_cameras], axis=1)
    return EpisodeItem(
        state=state[steps].astype(np.float32),
        steps=steps.astype(np.int64),
        actions=windows.astype(np.float32),
        action_mask=mask,
        cue=np.asarray(cue_robot_states, np.float32)[:: options.stride],
        prompts=prompts,
        memory_texts=[texts[i] for i in active],
        images=images,
        cue_images=cue_images,
    )


def _frames(camera: Any, steps: np.ndarray) -> np.ndarray:
    """``camera[steps]`` [F, H, W, 3], read frame by frame: data render stores one frame per HDF5 chunk,
    and h5py reads a strided or listed selection ~100x slower than the same frames one at a time."""
    if not len(steps):
        return np.zeros((0, *camera.shape[1:]), np.uint8)
    return np.stack([np.asarray(camera[int(t)]) for t in steps])


def collate(items: list[EpisodeItem], prompt_ids: list[np.ndarray], memory_ids: list[np.ndarray]) -> dict:
    """Pad a batch of items to its longest sequence and cue (torch tensors; masks say what is real)."""
    import torch

    batch, frames = len(items), max(len(it.steps) for it in items)
    cue_len = max(len(it.cue) for it in items)
    width, chunk = items[0].state.shape[1], items[0].actions.shape[1]
    out = {
        "states": np.zeros((batch, frames, width), np.float32),
        "frame_mask": np.zeros((batch, frames), bool),
        "prompt_ids": np.zeros((batch, frames), np.int64),
        "memory_ids": np.zeros((batch, frames), np.int64),
        "actions": np.zeros((batch, frames, chunk, 7), np.float32),
        "action_mask": np.zeros((batch, frames, chunk), bool),
        "cue": np.zeros((batch, max(cue_len, 1), 8), np.float32),
        "cue_lengths": np.array([len(it.cue) for it in items], np.int64),
    }
    if items[0].images is not None:
        shape = items[0].images.shape[1:]  # cameras, H, W, 3
        out["images"] = np.zeros((batch, frames, *shape), np.uint8)
        out["cue_images"] = np.zeros((batch, max(cue_len, 1), *shape), np.uint8)
    for i, it in enumerate(items):
        n = len(it.steps)
        if it.images is not None:
            out["images"][i, :n] = it.images
            out["cue_images"][i, : len(it.cue)] = it.cue_images
        out["states"][i, :n] = it.state
        out["frame_mask"][i, :n] = True
        out["prompt_ids"][i, :n] = prompt_ids[i]
        out["memory_ids"][i, :n] = memory_ids[i]
        out["actions"][i, :n] = it.actions
        out["action_mask"][i, :n] = it.action_mask
        out["cue"][i, : len(it.cue)] = it.cue
    return {k: torch.from_numpy(v) for k, v in out.items()}


@dataclass(frozen=True)
class DemoRef:
    demo_file: Path
    features_file: Path
    name: str
    instruction: str

    @property
    def key(self) -> str:
        """Which demo this is, independent of where the folder lies."""
        return f"{self.demo_file.name}:{self.name}"


def index_demos(data_dir: Path, features_dir: Path) -> list[DemoRef]:
    """Every demo of every ``*.hdf5`` file in ``data_dir`` (attributes only), in file and demo order."""

    refs = []
    for path in sorted(data_dir.glob("*.hdf5")):
        attrs, _ = read_file_summary(path)
        with open_demo_file(path) as f:
            names = sorted((k for k in f["data"] if k.startswith("demo_")), key=lambda k: int(k.split("_")[1]))
        refs += [DemoRef(path, features_path(features_dir, path), n, str(attrs["instruction"])) for n in names]
    return refs


def image_size(data_dir: Path) -> int:
    """The side of the rendered frames of every ``*.hdf5`` in ``data_dir`` (rgb mode; they must agree).

    Raises ValueError naming a file without both cameras' frames (not rendered) or with another size.
    """

    sizes = {}
    for path in sorted(data_dir.glob("*.hdf5")):
        with open_demo_file(path) as f:
            data = f["data"]
            demos = [data[k] for k in data if k.startswith("demo_")]
            if not demos:
                continue
            if not all(f"obs/{key}" in d for d in demos for key in CAMERA_KEYS):
                raise ValueError(f"{path}: no camera frames for rgb mode: run memobench data render first")
            sizes[path.name] = int(data.attrs.get("image_size", demos[0][f"obs/{CAMERA_KEYS[0]}"].shape[1]))
    if len(set(sizes.values())) > 1:
        raise ValueError(f"the demo files were rendered at different sizes ({sizes}): render them at one --size")
    return next(iter(sizes.values()))


# A dimension that barely varies in the demos (a resting object's height) is scaled by at least
# this, so a small change at evaluation does not become a huge input.
MIN_STD = 1e-2


def refuse_non_finite(source: BatchSource, ref: Any, name: str, array: np.ndarray) -> None:
    """ValueError naming the file, the demo and the row if ``array`` (``ref``'s ``name``: ``actions``
    or ``state``) holds a NaN or an infinity: trained on, one makes every weight NaN."""
    row = first_non_finite_row(array)
    if row is not None:
        raise ValueError(
            f"{source.where(ref, name)}: {name} row {row} is not finite (NaN or inf); "
            "refusing to train on it (memobench data validate lists such demos)"
        )


def check_finite(source: BatchSource) -> None:
    """Refuse a demo with a NaN or infinite action (:func:`refuse_non_finite`); the states are checked
    as :func:`state_statistics` reads them."""
    for ref in source.refs:
        refuse_non_finite(source, ref, "actions", source.actions(ref))


def state_statistics(source: BatchSource) -> tuple[np.ndarray, np.ndarray]:
    """Per-dimension mean and standard deviation (float32, std >= ``MIN_STD``) of every state of every demo
    of ``source``, read demo by demo (float64 sums); a NaN or infinite state is refused
    (:func:`refuse_non_finite`)."""
    total = square = 0.0
    count = 0
    for ref in source.refs:
        states = np.asarray(source.states(ref), np.float64)
        refuse_non_finite(source, ref, "state", states)
        total, square, count = total + states.sum(0), square + (states**2).sum(0), count + len(states)
    if not count:
        raise ValueError("the demos hold no states to standardise by")
    mean = total / count
    std = np.sqrt(np.maximum(square / count - mean**2, 0.0))
    return mean.astype(np.float32), np.maximum(std, MIN_STD).astype(np.float32)


@dataclass
class RawDemo:
    """One demo as a source reads it, before frames are picked (see :func:`episode_item`)."""

    actions: np.ndarray  # [T, 7]
    state: np.ndarray  # [T, S]
    cue: np.ndarray  # [C, 8]: the cue's robot states
    checkpoints: list[dict[str, Any]]
    instruction: str
    cameras: tuple[Any, Any] | None = None  # rgb mode
    cue_cameras: tuple[Any, Any] | None = None


class BatchSource:
    """Batch ``b``: ``batch_size`` demos drawn with replacement from ``refs`` by ``(seed, b)``; reads only those.

    This one reads the HDF5 demo files (and, in state mode, their features files); a subclass
    reads another layout by overriding :meth:`read` and draws the same batches from the same demos.
    """

    def __init__(self, refs: list, options: DataOptions, batch_size: int, seed: int) -> None:
        if not refs:
            raise ValueError("no demos to train on")
        self.refs, self.options, self.batch_size, self.seed = refs, options, batch_size, seed
        self._files: dict[Path, Any] = {}

    def _file(self, path: Path, opener=open_demo_file):
        """The open file ``path`` (a demo file, checked; ``opener=open_hdf5`` for a features file)."""
        if path not in self._files:
            self._files[path] = opener(path)
        return self._files[path]

    def read(self, ref: DemoRef) -> RawDemo:
        import json

        group = self._file(ref.demo_file)["data"][ref.name]
        cameras = cue_cameras = None
        if self.options.obs == "rgb":
            cameras = tuple(group[f"obs/{key}"] for key in CAMERA_KEYS)
            cue_cameras = tuple(
                group[f"cue/{key}"] if f"cue/{key}" in group else np.zeros((0, *cameras[0].shape[1:]), np.uint8)
                for key in CAMERA_KEYS
            )
        return RawDemo(
            actions=group["actions"][()],
            state=self.states(ref),
            cue=group["cue/robot_states"][()] if "cue/robot_states" in group else np.zeros((0, 8)),
            checkpoints=json.loads(group.attrs["checkpoints"]),
            instruction=ref.instruction,
            cameras=cameras,
            cue_cameras=cue_cameras,
        )

    def where(self, ref: DemoRef, name: str) -> str:
        """Where ``name`` (``actions`` or ``state``) of ``ref`` is stored, for an error message."""
        features = name == "state" and self.options.obs != "rgb"
        return f"{ref.features_file if features else ref.demo_file}: {ref.name}"

    def actions(self, ref: DemoRef) -> np.ndarray:
        """The demo's actions [T, 7] alone."""
        return self._file(ref.demo_file)["data"][ref.name]["actions"][()]

    def states(self, ref: DemoRef) -> np.ndarray:
        """The demo's state vectors [T, S] alone: the features in state mode, the robot states in rgb mode."""
        if self.options.obs == "rgb":
            return self._file(ref.demo_file)["data"][ref.name]["robot_states"][()]
        return feature_rows(self._file(ref.features_file, open_hdf5), ref.name, ref.features_file)

    def item(self, ref, rng: np.random.Generator) -> EpisodeItem:
        raw = self.read(ref)
        phase = int(rng.integers(self.options.stride))
        permutation = rng.permutation(len(raw.checkpoints)) if self.options.shuffle_subgoals else None
        return episode_item(
            raw.actions,
            raw.state,
            raw.cue,
            raw.checkpoints,
            raw.instruction,
            self.options,
            phase=phase,
            permutation=permutation,
            cameras=raw.cameras,
            cue_cameras=raw.cue_cameras,
        )

    def items(self, b: int) -> list[EpisodeItem]:
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, b]))
        picks = rng.integers(len(self.refs), size=self.batch_size)
        return [self.item(self.refs[i], rng) for i in picks]

    def close(self) -> None:
        for f in self._files.values():
            f.close()
        self._files.clear()
