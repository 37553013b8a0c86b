"""Training batches from a LeRobot v3.0 folder written by ``memobench data export``.

The export holds, per frame, the robot state, the action and the memory annotation, and per
episode the checkpoints with their key frames (``memobench/checkpoints``); exported with
``--environment-state`` it also holds the scene part of the state vector
(``observation.environment_state``). That is everything a ``state`` item needs, so a batch drawn
here equals the batch drawn from the HDF5 folder the export came from (same demos in the same
order, same frames, texts and targets; tests/training check it). Each episode's rows are read
from its parquet file when it is drawn (a filter on ``episode_index``, so only its row group is
decoded): nothing else is held in memory. Read with pyarrow (the ``export`` extra); the
``lerobot`` package is not needed.

The cue is read from the files beside the rows (:mod:`memobench.data.export_cue`): its robot
states, and in ``rgb`` mode its videos. ``rgb`` items take both cameras' frames from the export's
videos (rendered demos only): the episode's frames and its cue's are decoded with FFmpeg (imageio-ffmpeg, seeking to the
episode's start) when it is drawn. They are H.264 (yuv420p) frames, so close to but not the
pixels ``data render`` stored and the harness shows: for an ``rgb`` model the HDF5 folder is the
exact source.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memobench.data.export_cue import CHUNKS_SIZE as CUE_CHUNKS
from memobench.data.lerobot import CODEBASE_VERSION, ENVIRONMENT_STATE, FPS, VIDEO_KEYS
from memobench.evaluation.regular_files import read_json_file
from memobench.training.dataset import BatchSource, DataOptions, RawDemo

INFO = Path("meta") / "info.json"
CAMERA_VIDEOS = (VIDEO_KEYS["agentview"], VIDEO_KEYS["wrist"])  # the networks' camera order


def is_lerobot_export(folder: Path) -> bool:
    """True when ``folder`` looks like a LeRobot dataset (it has ``meta/info.json``)."""
    return (folder / INFO).is_file()


def export_image_size(folder: Path) -> int:
    """The side of the export's video frames (rgb mode)."""
    return int(read_json_file(folder / INFO)["features"][CAMERA_VIDEOS[0]]["shape"][0])


def export_file(folder: Path, template: Any, **keys: int) -> Path:
    """``folder / template.format(**keys)``: a file the export's ``info.json`` locates by a path
    template. The export is untrusted input, so the template must be text naming a regular file
    inside ``folder`` (no ``..``, no absolute path, no symlink on the way): ValueError naming it otherwise."""
    try:
        relative = Path(str(template).format(**keys)) if isinstance(template, str) else None
    except (KeyError, IndexError, ValueError, AttributeError):
        relative = None
    if relative is None or relative.is_absolute() or ".." in relative.parts:
        raise ValueError(f"{folder / INFO}: path template {template!r} does not name a file inside the export")
    path, node = folder / relative, folder
    for part in relative.parts:
        node = node / part
        if node.is_symlink():
            raise ValueError(f"{node}: a symlink in the export; it may point anywhere, so it is not read")
    if path.exists() and not path.is_file():  # a FIFO would block the reader, a device flood it
        raise ValueError(f"{path}: not a regular file")
    return path


@dataclass(frozen=True)
class EpisodeRef:
    episode: int
    data_file: Path
    instruction: str
    checkpoints: str  # JSON, as the export's episode row holds it
    videos: tuple[tuple[Path, int], ...] = ()  # rgb: per camera, its video file and the episode's first frame there
    cue_length: int = 0
    cue_file: Path | None = None  # the cue's robot states (export_cue), None without a cue
    cue_videos: tuple[Path, ...] = ()  # rgb: per camera, the cue's video

    @property
    def key(self) -> str:
        """Which episode this is, independent of where the export lies."""
        return f"episode_{self.episode}:{self.instruction}"


def index_episodes(folder: Path, obs: str) -> list[EpisodeRef]:
    """Every episode of the export in episode order; ValueError (one line) for an export training cannot use."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ValueError("training from a LeRobot export needs pyarrow: pip install 'memobench[export]'") from None
    info = read_json_file(folder / INFO)
    if info.get("codebase_version") != CODEBASE_VERSION:
        raise ValueError(f"{folder}: LeRobot format {info.get('codebase_version')!r}, not {CODEBASE_VERSION}")
    features = info.get("features", {})
    if obs == "rgb" and not all(features.get(key, {}).get("dtype") == "video" for key in CAMERA_VIDEOS):
        raise ValueError(f"{folder}: no videos of both cameras for rgb mode: render the demos, then export them")
    if obs == "state" and ENVIRONMENT_STATE not in features:
        raise ValueError(
            f"{folder}: no {ENVIRONMENT_STATE} (the visible object poses state mode needs): "
            "export again with memobench data export --environment-state"
        )
    files = sorted((folder / "meta" / "episodes").glob("chunk-*/file-*.parquet"))
    refs = []
    for path in files:
        table = pq.read_table(export_file(folder, str(path.relative_to(folder))))
        if "memobench/checkpoints" not in table.column_names:
            raise ValueError(
                f"{folder}: not written by memobench data export (episodes carry no memobench/checkpoints)"
            )
        for row in table.to_pylist():
            data = export_file(
                folder, info["data_path"], chunk_index=row["data/chunk_index"], file_index=row["data/file_index"]
            )
            videos = tuple(_video(folder, info, row, key) for key in CAMERA_VIDEOS) if obs == "rgb" else ()
            refs.append(
                EpisodeRef(
                    row["episode_index"],
                    data,
                    row["tasks"][0],
                    row["memobench/checkpoints"],
                    videos,
                    *_cue(folder, info, row, obs),
                )
            )
    if not refs:
        raise ValueError(f"{folder}: the LeRobot export holds no episodes")
    return sorted(refs, key=lambda r: r.episode)


def _video(folder: Path, info: dict[str, Any], row: dict[str, Any], key: str) -> tuple[Path, int]:
    """The video file of camera ``key`` holding the episode of ``row``, and the episode's first frame in it."""
    path = export_file(
        folder,
        info["video_path"],
        video_key=key,
        chunk_index=row[f"videos/{key}/chunk_index"],
        file_index=row[f"videos/{key}/file_index"],
    )
    return path, round(row[f"videos/{key}/from_timestamp"] * FPS)


def _cue(folder: Path, info: dict[str, Any], row: dict[str, Any], obs: str) -> tuple[int, Path | None, tuple]:
    """The episode's cue length, its states file and (rgb) its videos (:mod:`memobench.data.export_cue`)."""
    if "memobench/cue_length" not in row:
        raise ValueError(f"{folder}: an export from before the cue was kept out of the rows: export it again")
    length = int(row["memobench/cue_length"])
    if not length:
        return 0, None, ()
    keys = {"episode_chunk": row["episode_index"] // CUE_CHUNKS, "episode_index": row["episode_index"]}
    template = info["memobench/cue_video_path"]
    videos = tuple(export_file(folder, template, video_key=key, **keys) for key in CAMERA_VIDEOS)
    return length, export_file(folder, info["memobench/cue_path"], **keys), videos if obs == "rgb" else ()


def decode_frames(path: Path, first: int, count: int) -> np.ndarray:
    """Frames ``first .. first + count - 1`` of the video at ``path`` [count, H, W, 3] uint8 (FFmpeg, seeking)."""
    import imageio_ffmpeg

    # half a frame early: FFmpeg's accurate seek then starts at frame ``first`` whatever the rounding
    seek = max(first - 0.5, 0.0) / FPS
    reader = imageio_ffmpeg.read_frames(
        str(path), pix_fmt="rgb24", input_params=["-ss", f"{seek:.6f}"], output_params=["-frames:v", str(count)]
    )
    try:
        meta = next(reader)
        width, height = meta["size"]
        frames = [np.frombuffer(raw, np.uint8).reshape(height, width, 3) for raw in reader]
    finally:
        reader.close()
    if len(frames) != count:
        raise ValueError(f"{path}: {len(frames)} frames from frame {first}, expected {count}")
    return np.stack(frames) if frames else np.zeros((0, 0, 0, 3), np.uint8)


def _matrix(table, name: str) -> np.ndarray:
    """A fixed-size-list column as a [rows, width] array."""
    column = table.column(name).combine_chunks()
    return np.asarray(column.flatten()).reshape(len(column), -1)


class LeRobotSource(BatchSource):
    """:class:`~memobench.training.dataset.BatchSource` over an export's episodes (see the module docstring)."""

    def __init__(self, folder: Path, options: DataOptions, batch_size: int, seed: int) -> None:
        super().__init__(index_episodes(folder, options.obs), options, batch_size, seed)

    def _rows(self, ref: EpisodeRef, columns: list[str]):
        """The episode's rows (``columns`` and what the state needs), its robot states [rows, 8] and its
        state vectors [rows, S]: the policy's steps (the cue is not among them)."""
        import pyarrow.parquet as pq

        rgb = self.options.obs == "rgb"
        wanted = ["observation.state", *columns] + ([] if rgb else [ENVIRONMENT_STATE])
        rows = pq.read_table(ref.data_file, columns=wanted, filters=[("episode_index", "==", ref.episode)])
        if rows.num_rows == 0:
            raise ValueError(f"{ref.data_file}: no rows of episode {ref.episode}")
        robot = _matrix(rows, "observation.state")
        # rgb: the robot state beside the images, as from the HDF5
        state = robot if rgb else np.concatenate([robot, _matrix(rows, ENVIRONMENT_STATE)], axis=1)
        return rows, robot, state

    def _cue_states(self, ref: EpisodeRef) -> np.ndarray:
        """The cue's robot states [C, 8] (C = 0 without a cue)."""
        import pyarrow.parquet as pq

        if ref.cue_file is None:
            return np.zeros((0, 8), np.float32)
        return _matrix(pq.read_table(ref.cue_file, columns=["observation.state"]), "observation.state")

    def states(self, ref: EpisodeRef) -> np.ndarray:
        """The episode's state vectors [T, S], as :meth:`read` builds them, without videos."""
        return self._rows(ref, [])[2]

    def where(self, ref: EpisodeRef, name: str) -> str:
        return f"{ref.data_file}: episode {ref.episode}"

    def actions(self, ref: EpisodeRef) -> np.ndarray:
        """The episode's actions [T, 7]."""
        rows, _, _ = self._rows(ref, ["action"])
        return _matrix(rows, "action")

    def read(self, ref: EpisodeRef) -> RawDemo:
        rows, _, state = self._rows(ref, ["action"])
        checkpoints: list[dict[str, Any]] = json.loads(ref.checkpoints)
        cameras = cue_cameras = None
        if self.options.obs == "rgb":
            cameras = tuple(decode_frames(path, first, rows.num_rows) for path, first in ref.videos)
            if ref.cue_length:
                cue_cameras = tuple(decode_frames(path, 0, ref.cue_length) for path in ref.cue_videos)
            else:  # no cue: empty frames of the episode's shape, as the HDF5 source gives
                cue_cameras = tuple(np.zeros((0, *c.shape[1:]), np.uint8) for c in cameras)
        return RawDemo(
            actions=_matrix(rows, "action"),
            state=state,
            cue=self._cue_states(ref),
            checkpoints=checkpoints,
            instruction=ref.instruction,
            cameras=cameras,
            cue_cameras=cue_cameras,
        )
