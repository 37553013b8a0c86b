"""Training batches from a LeRobot v3.0 folder written by ``memobench data export`` (state mode).

The export holds, per frame, the robot state, the action and the memory annotation, and per
episode the checkpoints with their key frames (``memobench/checkpoints``); exported with
``--environment-state`` it also holds the scene part of the state vector
(``observation.environment_state``). That is everything a training item needs, so a batch drawn
here equals the batch drawn from the HDF5 folder the export came from (same demos in the same
order, same frames, texts and targets; tests/training check it). Each episode's rows are read
from its parquet file when it is drawn (a filter on ``episode_index``, so only its row group is
decoded): nothing else is held in memory. Read with pyarrow (the ``export`` extra); the
``lerobot`` package is not needed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memobench.data.lerobot import CODEBASE_VERSION, ENVIRONMENT_STATE
from memobench.training.dataset import BatchSource, DataOptions, RawDemo

INFO = Path("meta") / "info.json"


def is_lerobot_export(folder: Path) -> bool:
    """True when ``folder`` looks like a LeRobot dataset (it has ``meta/info.json``)."""
    return (folder / INFO).is_file()


@dataclass(frozen=True)
class EpisodeRef:
    episode: int
    data_file: Path
    instruction: str
    checkpoints: str  # JSON, as the export's episode row holds it


def index_episodes(folder: Path, obs: str) -> list[EpisodeRef]:
    """Every episode of the export in episode order; ValueError (one line) for an export training cannot use."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ValueError("training from a LeRobot export needs pyarrow: pip install 'memobench[export]'") from None
    info = json.loads((folder / INFO).read_text())
    if info.get("codebase_version") != CODEBASE_VERSION:
        raise ValueError(f"{folder}: LeRobot format {info.get('codebase_version')!r}, not {CODEBASE_VERSION}")
    if obs != "state":
        raise ValueError(f"{folder}: a LeRobot export trains in state mode only (rgb reads the rendered HDF5 demos)")
    if ENVIRONMENT_STATE not in info.get("features", {}):
        raise ValueError(
            f"{folder}: no {ENVIRONMENT_STATE} (the visible object poses state mode needs): "
            "export again with memobench data export --environment-state"
        )
    files = sorted((folder / "meta" / "episodes").glob("chunk-*/file-*.parquet"))
    columns = ["episode_index", "tasks", "data/chunk_index", "data/file_index", "memobench/checkpoints"]
    refs = []
    for path in files:
        table = pq.read_table(path)
        if "memobench/checkpoints" not in table.column_names:
            raise ValueError(
                f"{folder}: not written by memobench data export (episodes carry no memobench/checkpoints)"
            )
        for row in table.select(columns).to_pylist():
            data = info["data_path"].format(chunk_index=row["data/chunk_index"], file_index=row["data/file_index"])
            refs.append(EpisodeRef(row["episode_index"], folder / data, row["tasks"][0], row["memobench/checkpoints"]))
    if not refs:
        raise ValueError(f"{folder}: the LeRobot export holds no episodes")
    return sorted(refs, key=lambda r: r.episode)


def _matrix(table, name: str) -> np.ndarray:
    """A fixed-size-list column as a [rows, width] array."""
    column = table.column(name).combine_chunks()
    return np.asarray(column.flatten()).reshape(len(column), -1)


class LeRobotSource(BatchSource):
    """:class:`~memobench.training.dataset.BatchSource` over an export's episodes (see the module docstring)."""

    COLUMNS = ("observation.state", ENVIRONMENT_STATE, "action", "memory.policy_start")

    def __init__(self, folder: Path, options: DataOptions, batch_size: int, seed: int) -> None:
        super().__init__(index_episodes(folder, options.obs), options, batch_size, seed)

    def read(self, ref: EpisodeRef) -> RawDemo:
        import pyarrow.parquet as pq

        rows = pq.read_table(ref.data_file, columns=list(self.COLUMNS), filters=[("episode_index", "==", ref.episode)])
        if rows.num_rows == 0:
            raise ValueError(f"{ref.data_file}: no rows of episode {ref.episode}")
        cue = int(rows.column("memory.policy_start")[0].as_py())
        robot = _matrix(rows, "observation.state")
        state = np.concatenate([robot, _matrix(rows, ENVIRONMENT_STATE)], axis=1)
        checkpoints: list[dict[str, Any]] = json.loads(ref.checkpoints)
        return RawDemo(
            actions=_matrix(rows, "action")[cue:],
            state=state[cue:],
            cue=robot[:cue],
            checkpoints=checkpoints,
            instruction=ref.instruction,
        )
