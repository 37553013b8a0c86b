"""Training batches streamed from the HDF5 demos, one demo at a time (never the whole dataset in memory).

A training item is one demo as a sequence of frames, one every ``stride`` control steps from a
random phase (the checkpoint policy is queried every ``--replan-steps``, 5 by default, and sees
a frame at each query). Per frame ``t``:

- ``state``: the state vector (:mod:`memobench.training.state`), read from the demo file's features file;
- the **prompt**: the instruction, or under oracle-memory training the exact prompt the harness gives
  under ``--memory-oracle`` (:func:`memobench.core.oracle.oracle_prompt` of the checkpoints completed
  before ``t``, at the text level);
- the **memory text**: the text of the checkpoint active at ``t`` (the first not yet completed; the last
  once all are), at the text level; the definitions are the LeRobot export's
  (:func:`memobench.data.lerobot.current_checkpoints`, :func:`~memobench.data.lerobot.completed_mask`);
- the **target**: ``actions[t : t + chunk]``, zero-padded past the demo's end, with a mask.

The cue is the sequence of its robot states every ``stride`` frames. Shuffled-subgoal training
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
from memobench.data.demo_file import read_file_summary
from memobench.data.lerobot import completed_mask, current_checkpoints
from memobench.training.state import features_path

TEXT_LEVELS = ("coarse", "intermediate", "fine")
TIME_SCALE = 1200.0  # a frame's time input is its step / TIME_SCALE (the suite's shortest horizon)


@dataclass(frozen=True)
class DataOptions:
    """What a training item holds; saved with the checkpoint (evaluation must see the same)."""

    stride: int = 5
    chunk: int = 50
    text_level: str = "intermediate"
    oracle_memory: bool = False
    shuffle_subgoals: bool = False

    def __post_init__(self) -> None:
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


def episode_item(
    actions: np.ndarray,
    state: np.ndarray,
    cue_robot_states: np.ndarray,
    checkpoints: list[dict[str, Any]],
    instruction: str,
    options: DataOptions,
    phase: int = 0,
    permutation: np.ndarray | None = None,
) -> EpisodeItem:
    """The frames of one demo from ``phase`` on, every ``options.stride`` steps (see the module docstring)."""
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
    return EpisodeItem(
        state=state[steps].astype(np.float32),
        steps=steps.astype(np.int64),
        actions=windows.astype(np.float32),
        action_mask=mask,
        cue=np.asarray(cue_robot_states, np.float32)[:: options.stride],
        prompts=prompts,
        memory_texts=[texts[i] for i in active],
    )


def collate(items: list[EpisodeItem], prompt_ids: list[np.ndarray], memory_ids: list[np.ndarray]) -> dict:
    """Pad a batch of items to its longest sequence and cue (torch tensors; masks say what is real)."""
    import torch

    batch, frames = len(items), max(len(it.steps) for it in items)
    cue_len = max(len(it.cue) for it in items)
    width, chunk = items[0].state.shape[1], items[0].actions.shape[1]
    out = {
        "states": np.zeros((batch, frames, width), np.float32),
        "times": np.zeros((batch, frames), np.float32),
        "frame_index": np.zeros((batch, frames), np.int64),
        "frame_mask": np.zeros((batch, frames), bool),
        "prompt_ids": np.zeros((batch, frames), np.int64),
        "memory_ids": np.zeros((batch, frames), np.int64),
        "actions": np.zeros((batch, frames, chunk, 7), np.float32),
        "action_mask": np.zeros((batch, frames, chunk), bool),
        "cue": np.zeros((batch, max(cue_len, 1), 8), np.float32),
        "cue_lengths": np.array([len(it.cue) for it in items], np.int64),
    }
    for i, it in enumerate(items):
        n = len(it.steps)
        out["states"][i, :n] = it.state
        out["times"][i, :n] = it.steps / TIME_SCALE
        out["frame_index"][i, :n] = np.arange(n)
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


def index_demos(data_dir: Path, features_dir: Path) -> list[DemoRef]:
    """Every demo of every ``*.hdf5`` file in ``data_dir`` (attributes only), in file and demo order."""
    import h5py

    refs = []
    for path in sorted(data_dir.glob("*.hdf5")):
        attrs, _ = read_file_summary(path)
        with h5py.File(path, "r") as f:
            names = sorted((k for k in f["data"] if k.startswith("demo_")), key=lambda k: int(k.split("_")[1]))
        refs += [DemoRef(path, features_path(features_dir, path), n, str(attrs["instruction"])) for n in names]
    return refs


class BatchSource:
    """Batch ``b``: ``batch_size`` demos drawn with replacement from ``refs`` by ``(seed, b)``; reads only those."""

    def __init__(self, refs: list[DemoRef], options: DataOptions, batch_size: int, seed: int) -> None:
        if not refs:
            raise ValueError("no demos to train on")
        self.refs, self.options, self.batch_size, self.seed = refs, options, batch_size, seed
        self._files: dict[Path, Any] = {}

    def _file(self, path: Path):
        import h5py

        if path not in self._files:
            self._files[path] = h5py.File(path, "r")
        return self._files[path]

    def item(self, ref: DemoRef, rng: np.random.Generator) -> EpisodeItem:
        import json

        group = self._file(ref.demo_file)["data"][ref.name]
        state = self._file(ref.features_file)[ref.name]["state"][()]
        checkpoints = json.loads(group.attrs["checkpoints"])
        phase = int(rng.integers(self.options.stride))
        permutation = rng.permutation(len(checkpoints)) if self.options.shuffle_subgoals else None
        return episode_item(
            group["actions"][()],
            state,
            group["cue/robot_states"][()] if "cue/robot_states" in group else np.zeros((0, 8)),
            checkpoints,
            ref.instruction,
            self.options,
            phase=phase,
            permutation=permutation,
        )

    def items(self, b: int) -> list[EpisodeItem]:
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, b]))
        picks = rng.integers(len(self.refs), size=self.batch_size)
        return [self.item(self.refs[i], rng) for i in picks]

    def close(self) -> None:
        for f in self._files.values():
            f.close()
        self._files.clear()
