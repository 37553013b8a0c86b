"""Export demonstrations as a LeRobot dataset (format v3.0) that trains memory policies.

The layout is LeRobot 0.4.x's v3.0 (``lerobot`` is not a dependency; tests/data loads
the export with it where it is installed)::

    meta/info.json                                   schema, fps, path templates, totals
    meta/stats.json                                  per feature: min, max, mean, std, count, q01..q99
    meta/tasks.parquet                               task string (index) -> task_index
    meta/episodes/chunk-000/file-000.parquet         one row per episode: length, tasks, row and video
                                                     ranges, and the episode's statistics (``stats/<feature>/<stat>``)
    data/chunk-CCC/file-FFF.parquet                  one row per policy step, files cut by size
    videos/<image key>/chunk-CCC/file-FFF.mp4        episodes' frames one after another, files cut by size
    cue/...                                          each episode's cue, beside its rows (below)

**Streamed.** Demos are read, converted and written one at a time (one row group per
episode, video frames piped to an open encoder, statistics merged as episodes arrive:
:mod:`memobench.data.lerobot_stats`), so memory holds one demo whatever the number of
demos. A data or video file that has reached its size limit is closed and the next episode
starts a new one. Videos are H.264 with a keyframe every :data:`KEYFRAME_INTERVAL` frames
(LeRobot's own default GOP), so decoding one item seeks at most that far.

**Episodes.** Each episode's rows are the policy's steps, one per row, from its first step
(``frame_index`` 0) to its last. The cue the harness shows before that first step is no row
(a row of zero actions would teach standing still and shift the action statistics): it is
written beside the episode, its robot states and videos per episode under ``cue/``
(:mod:`memobench.data.export_cue`; ``info.json``'s ``memobench/cue_path`` and
``memobench/cue_video_path`` are their path templates), and the episode row's
``memobench/cue_length`` says how many frames it has. Statistics are over the policy's rows only.

**Per-frame memory annotation.** At frame ``t`` (the observation before action ``t``)
a checkpoint is *completed* when the action that completed it came before ``t`` (its key
frame ``< t``): what the harness's tracker has recorded when it asks the policy at ``t``.

- ``memory.so_far.{coarse,intermediate,fine}``: :func:`memobench.core.oracle.memory_line`
  of the completed checkpoints' texts, the very line the harness appends to the
  instruction under ``--memory-oracle`` (the prompt is ``task + "\\n" + so_far``);
- ``memory.completed``: the completed-checkpoint mask, padded with False to the largest
  checkpoint count in the dataset (``memory.num_checkpoints`` says how many are real);
- ``memory.checkpoint_index`` / ``memory.op`` / ``memory.text.*``: the active checkpoint
  (the first not completed; the last once all are), its op label and its texts;
- ``memory.binding``: the episode's binding (JSON), the same on every row.

**Environment state** (optional, ``environment_state=FEATURES_DIR``): LeRobot's conventional
``observation.environment_state`` holds the ``state`` observation's scene part
(:mod:`memobench.data.state_features` without its first ``ROBOT_DIM`` robot entries: object poses
and visibility, fixture joints, objects inside a closed drawer or microwave masked as the experts'
memory is), so ``observation.state`` + ``observation.environment_state`` is the state vector
``memobench train --obs state`` reads (a camera-free policy is shown the cue's robot states
only, so the cue files carry no scene vectors). The vectors come from the features files ``memobench train`` caches
(computed in the simulator where missing or stale).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from memobench.core.oracle import memory_line
from memobench.data.demo_file import Demo, iter_demos, non_finite_rows, read_file_summary
from memobench.data.export_cue import CUE_PATH, CUE_VIDEO_PATH, FPS, video_writer, write_cue
from memobench.data.hdf5_input import open_hdf5
from memobench.data.lerobot_stats import RunningStats, as_json, image_stats, vector_stats
from memobench.data.render import IMAGE_KEYS
from memobench.data.state_features import (
    ROBOT_DIM,
    STATE_DIM,
    feature_rows,
    features_path,
    featurise_task_file,
    stale_feature_files,
)

CODEBASE_VERSION = "v3.0"
CHUNKS_SIZE = 1000  # files per chunk folder (LeRobot's default)
DATA_FILE_MB = 100  # LeRobot's defaults for the size at which a file is cut
VIDEO_FILE_MB = 200
KEYFRAME_INTERVAL = 2
DATA_PATH = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
VIDEO_PATH = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
EPISODES_PATH = "meta/episodes/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
VIDEO_KEYS = {"agentview": "observation.images.image", "wrist": "observation.images.wrist_image"}
LEVELS = ("coarse", "intermediate", "fine")
NUMERIC = {"float32", "int64", "bool"}
ENVIRONMENT_STATE = "observation.environment_state"
# where each episode's cue lies (info.json; LeRobot ignores keys it does not know)
CUE_INFO = {"memobench/cue_path": CUE_PATH, "memobench/cue_video_path": CUE_VIDEO_PATH}


def current_checkpoints(checkpoints: list[dict[str, Any]], length: int) -> np.ndarray:
    """Per frame, the index of the checkpoint being worked toward (the last one after all are done)."""
    frames = [c["key_frame"] if c["key_frame"] is not None else length for c in checkpoints]
    out = np.empty(length, dtype=np.int64)
    for t in range(length):
        out[t] = next((i for i, f in enumerate(frames) if f >= t), len(frames) - 1)
    return out


def completed_mask(checkpoints: list[dict[str, Any]], length: int) -> np.ndarray:
    """[length, K] bool: checkpoint k is completed at frame t when its key frame is before t."""
    frames = np.array([c["key_frame"] if c["key_frame"] is not None else length for c in checkpoints])
    return frames[None, :] < np.arange(length)[:, None]


def frame_columns(
    demo: Demo,
    *,
    episode: int,
    start: int,
    task_index: int,
    width: int,
    cameras: list[str],
    environment: np.ndarray | None = None,
) -> dict[str, Any]:
    """Every column of one episode's rows, one row per policy step (the cue is not among them:
    :mod:`memobench.data.export_cue`); ``environment``: the steps' scene vectors (module docstring).
    Keys are the v3.0 export's names; the openpi export renames a few."""
    cps = demo.attrs["checkpoints"]
    n = demo.length
    done = np.zeros((n, width), dtype=bool)
    done[:, : len(cps)] = completed_mask(cps, n)
    active = current_checkpoints(cps, n)
    columns: dict[str, Any] = {
        "observation.state": np.asarray(demo.arrays["robot_states"], dtype=np.float32),
        "action": np.asarray(demo.arrays["actions"], dtype=np.float32),
        "timestamp": np.arange(n, dtype=np.float32) / FPS,
        "frame_index": np.arange(n, dtype=np.int64),
        "episode_index": np.full(n, episode, dtype=np.int64),
        "index": np.arange(start, start + n, dtype=np.int64),
        "task_index": np.full(n, task_index, dtype=np.int64),
        "memory.num_checkpoints": np.full(n, len(cps), dtype=np.int64),
        "memory.completed": done,
        "memory.checkpoint_index": active,
        "memory.op": [cps[i]["op"] for i in active],
        "memory.binding": [json.dumps(demo.attrs["binding"], sort_keys=True)] * n,
    }
    if environment is not None:
        if len(environment) != n:
            raise ValueError(f"demo of seed {demo.attrs['seed']}: {len(environment)} feature rows for {n} steps")
        columns[ENVIRONMENT_STATE] = np.asarray(environment, dtype=np.float32)
    for level in LEVELS:
        columns[f"memory.text.{level}"] = [cps[i]["text"][level] for i in active]
        lines: dict[tuple[bool, ...], str] = {}
        so_far = []
        for row in done:
            key = tuple(row[: len(cps)])
            if key not in lines:
                lines[key] = memory_line([cp["text"][level] for cp, d in zip(cps, key, strict=True) if d])
            so_far.append(lines[key])
        columns[f"memory.so_far.{level}"] = so_far
    for camera in cameras:
        columns[VIDEO_KEYS[camera]] = demo.arrays[f"obs/{IMAGE_KEYS[camera]}"]
    return columns


def _scalar(dtype: str) -> dict[str, Any]:
    return {"dtype": dtype, "shape": [1], "names": None}


def features_of(
    state_dim: int, width: int, image_size: int | None, cameras: list[str], environment: bool = False
) -> dict[str, Any]:
    features: dict[str, Any] = {
        "observation.state": {
            "dtype": "float32",
            "shape": [state_dim],
            "names": ["x", "y", "z", "ax", "ay", "az", "gripper_left", "gripper_right"],
        },
        **(
            {ENVIRONMENT_STATE: {"dtype": "float32", "shape": [STATE_DIM - ROBOT_DIM], "names": None}}
            if environment
            else {}
        ),
        "action": {"dtype": "float32", "shape": [7], "names": ["dx", "dy", "dz", "drx", "dry", "drz", "gripper"]},
        "timestamp": _scalar("float32"),
        "frame_index": _scalar("int64"),
        "episode_index": _scalar("int64"),
        "index": _scalar("int64"),
        "task_index": _scalar("int64"),
        "memory.num_checkpoints": _scalar("int64"),
        "memory.completed": {"dtype": "bool", "shape": [width], "names": None},
        "memory.checkpoint_index": _scalar("int64"),
        "memory.op": _scalar("string"),
        "memory.binding": _scalar("string"),
        **{f"memory.text.{level}": _scalar("string") for level in LEVELS},
        **{f"memory.so_far.{level}": _scalar("string") for level in LEVELS},
    }
    for camera in cameras if image_size else []:
        features[VIDEO_KEYS[camera]] = {
            "dtype": "video",
            "shape": [image_size, image_size, 3],
            "names": ["height", "width", "channels"],
            "info": {
                "video.height": image_size,
                "video.width": image_size,
                "video.codec": "h264",
                "video.pix_fmt": "yuv420p",
                "video.is_depth_map": False,
                "video.fps": FPS,
                "video.channels": 3,
                "has_audio": False,
            },
        }
    return features


def arrow_schema(features: dict[str, Any]):
    import pyarrow as pa

    kinds = {"float32": pa.float32(), "int64": pa.int64(), "bool": pa.bool_(), "string": pa.string()}
    fields = []
    for key, feature in features.items():
        if feature["dtype"] == "video":
            continue
        if feature["dtype"] == "image":  # encoded frames as Hugging Face datasets stores an Image
            fields.append(pa.field(key, pa.struct([("bytes", pa.binary()), ("path", pa.string())])))
            continue
        kind = kinds[feature["dtype"]]
        vector = feature["shape"] != [1] or key in ("observation.state", ENVIRONMENT_STATE, "action")
        fields.append(pa.field(key, pa.list_(kind, feature["shape"][0]) if vector else kind))
    return pa.schema(fields)


def arrow_column(values: Any, kind):
    """One column as an Arrow array; [N, D] arrays become fixed-size lists without a Python copy."""
    import pyarrow as pa

    if isinstance(kind, pa.FixedSizeListType):
        flat = np.ascontiguousarray(values).reshape(-1)
        return pa.FixedSizeListArray.from_arrays(pa.array(flat, kind.value_type), kind.list_size)
    if isinstance(values, np.ndarray) and values.ndim == 2 and values.shape[1] == 1:
        values = values[:, 0]  # a one-wide column (a dataset whose tasks have one checkpoint) is a scalar feature
    return pa.array(values, kind)


def _tasks_table(tasks: dict[str, int]):
    """``meta/tasks.parquet``: LeRobot reads it with pandas and looks tasks up by the index, so the
    ``task`` column is marked as the pandas index in the schema metadata (what pandas itself writes)."""
    import pyarrow as pa

    table = pa.table({"task_index": pa.array(list(tasks.values()), pa.int64()), "task": pa.array(list(tasks))})
    columns = [
        {"name": name, "field_name": name, "pandas_type": kind, "numpy_type": numpy, "metadata": None}
        for name, kind, numpy in (("task_index", "int64", "int64"), ("task", "unicode", "object"))
    ]
    pandas_meta = {
        "index_columns": ["task"],
        "column_indexes": [],
        "columns": columns,
        "creator": {"library": "memobench"},
        "pandas_version": "2.2.0",
    }
    return table.replace_schema_metadata({b"pandas": json.dumps(pandas_meta).encode()})


class _FileSeries:
    """Files of one kind numbered chunk/file as LeRobot numbers them, cut once one reaches its size limit."""

    def __init__(self, out: Path, template: str, limit_bytes: float, **keys: str) -> None:
        self.out, self.template, self.limit, self.keys = out, template, limit_bytes, keys
        self.number = -1  # files started so far, minus one
        self.episodes_in_file = 0

    @property
    def chunk_index(self) -> int:
        return self.number // CHUNKS_SIZE

    @property
    def file_index(self) -> int:
        return self.number % CHUNKS_SIZE

    @property
    def path(self) -> Path:
        return self.out / self.template.format(chunk_index=self.chunk_index, file_index=self.file_index, **self.keys)

    def needs_new_file(self) -> bool:
        """True before the first episode and once the current file has reached the limit."""
        return self.number < 0 or (self.episodes_in_file > 0 and self._size() >= self.limit)

    def next_path(self) -> Path:
        self.number += 1
        self.episodes_in_file = 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return self.path

    def _size(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0


class _DataFiles(_FileSeries):
    def __init__(self, out: Path, schema, limit_bytes: float) -> None:
        super().__init__(out, DATA_PATH, limit_bytes)
        self.schema, self.writer = schema, None

    def write(self, table) -> None:
        import pyarrow.parquet as pq

        if self.needs_new_file():
            self.close()
            self.writer = pq.ParquetWriter(self.next_path(), self.schema)
        self.writer.write_table(table)
        self.episodes_in_file += 1

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


class _VideoFiles(_FileSeries):
    def __init__(self, out: Path, video_key: str, limit_bytes: float) -> None:
        super().__init__(out, VIDEO_PATH, limit_bytes, video_key=video_key)
        self.writer, self.frames_in_file = None, 0

    def write(self, frames: np.ndarray) -> float:
        """Append one episode's frames; returns the timestamp in its file where the episode starts."""
        if self.needs_new_file():
            self.close()
            self.writer = video_writer(self.next_path(), KEYFRAME_INTERVAL)
            self.frames_in_file = 0
        start = self.frames_in_file / FPS
        for frame in frames:
            self.writer.append_data(frame)
        self.frames_in_file += len(frames)
        self.episodes_in_file += 1
        return start

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


def demos(files: list[Path], features_dir: Path | None) -> Iterator[tuple[dict[str, Any], Demo, np.ndarray | None]]:
    """Each demo with its file's attributes and, with ``features_dir``, its scene vectors [T, STATE_DIM - ROBOT_DIM]."""

    for path in files:
        attrs, _ = read_file_summary(path)
        if features_dir is None:
            for demo in iter_demos(path):
                yield attrs, demo, None
            continue
        features_file = features_path(features_dir, path)
        with open_hdf5(features_file) as features:
            for i, demo in enumerate(iter_demos(path)):
                yield attrs, demo, feature_rows(features, f"demo_{i}", features_file)[:, ROBOT_DIM:]


def prepare_environment_state(files: list[Path], features_dir: Path) -> list[Path]:
    """Compute the features files of ``files`` that are missing or stale (in the simulator); returns those."""
    stale = stale_feature_files(files, features_dir)
    for path in stale:
        featurise_task_file(path, features_path(features_dir, path))
    return stale


def survey(files: list[Path]) -> tuple[int, Demo]:
    """The largest checkpoint count of any demo and the first demo (its arrays); ValueError for a demo
    with a NaN or infinite number (before anything is written)."""
    width, first = 0, None
    for path in files:
        for i, demo in enumerate(iter_demos(path, images=False)):
            width = max(width, len(demo.attrs["checkpoints"]))
            problems = non_finite_rows(demo)
            if problems:
                raise ValueError(
                    f"{path}: demo_{i}: {problems[0]}; refusing to export it (memobench data validate lists such demos)"
                )
        if first is None:
            first = next(iter_demos(path), None)
    if first is None:
        raise ValueError(f"the files in {files[0].parent} hold no demos")
    return width, first


def export_lerobot(
    source: Path,
    out: Path,
    *,
    data_file_mb: float = DATA_FILE_MB,
    video_file_mb: float = VIDEO_FILE_MB,
    environment_state: Path | None = None,
) -> dict[str, Any]:
    """Convert every ``<task>.hdf5`` in ``source`` to one LeRobot v3.0 dataset in ``out``; returns info.json.

    Streams demo by demo (see the module docstring); ``*_file_mb`` are the sizes at which files are cut.
    ``environment_state``: the state-features folder to add ``observation.environment_state`` from
    (features computed there first where missing or stale: that needs the simulator).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = sorted(source.glob("*.hdf5"))
    if not files:
        raise FileNotFoundError(f"no <task>.hdf5 files in {source}")
    width, first = survey(files)
    if environment_state is not None:
        prepare_environment_state(files, environment_state)
    cameras = [c for c in IMAGE_KEYS if f"obs/{IMAGE_KEYS[c]}" in first.arrays]
    image_size = int(first.arrays[f"obs/{IMAGE_KEYS[cameras[0]]}"].shape[1]) if cameras else None
    features = features_of(
        first.arrays["robot_states"].shape[1], width, image_size, cameras, environment_state is not None
    )
    del first
    schema = arrow_schema(features)
    numeric = [key for key, f in features.items() if f["dtype"] in NUMERIC]
    videos = [VIDEO_KEYS[c] for c in cameras]

    tasks: dict[str, int] = {}
    data = _DataFiles(out, schema, data_file_mb * 2**20)
    video_files = {key: _VideoFiles(out, key, video_file_mb * 2**20) for key in videos}
    running = {key: RunningStats() for key in numeric + videos}
    episodes_path = out / EPISODES_PATH.format(chunk_index=0, file_index=0)
    episodes_path.parent.mkdir(parents=True, exist_ok=True)
    episode_writer = None
    episode = index = 0
    try:
        for attrs, demo, environment in demos(files, environment_state):
            task_index = tasks.setdefault(attrs["instruction"], len(tasks))
            columns = frame_columns(
                demo,
                episode=episode,
                start=index,
                task_index=task_index,
                width=width,
                cameras=cameras,
                environment=environment,
            )
            length = len(columns["index"])
            data.write(pa.table([arrow_column(columns[f.name], f.type) for f in schema], schema=schema))
            row: dict[str, Any] = {
                "episode_index": episode,
                "tasks": [attrs["instruction"]],
                "length": length,
                "dataset_from_index": index,
                "dataset_to_index": index + length,
                "data/chunk_index": data.chunk_index,
                "data/file_index": data.file_index,
                "meta/episodes/chunk_index": 0,
                "meta/episodes/file_index": 0,
                "memobench/task_id": attrs["task_id"],
                "memobench/seed": int(demo.attrs["seed"]),
                "memobench/checkpoints": json.dumps(demo.attrs["checkpoints"]),
                "memobench/cue_length": write_cue(
                    out, episode, demo, {c: VIDEO_KEYS[c] for c in cameras}, "observation.state"
                ),
            }
            del demo  # the episode's rows hold what is still needed
            stats = {key: vector_stats(np.asarray(columns[key])) for key in numeric}
            for key in videos:
                start = video_files[key].write(columns[key])
                stats[key] = image_stats(columns[key])
                row.update(
                    {
                        f"videos/{key}/chunk_index": video_files[key].chunk_index,
                        f"videos/{key}/file_index": video_files[key].file_index,
                        f"videos/{key}/from_timestamp": start,
                        f"videos/{key}/to_timestamp": start + length / FPS,
                    }
                )
            for key, value in stats.items():
                running[key].add(value)
                row.update({f"stats/{key}/{name}": np.asarray(v).tolist() for name, v in value.items()})
            row_table = pa.Table.from_pylist([row])
            if episode_writer is None:
                episode_writer = pq.ParquetWriter(episodes_path, row_table.schema)
            episode_writer.write_table(row_table.cast(episode_writer.schema))
            episode += 1
            index += length
    finally:
        data.close()
        for files_ in video_files.values():
            files_.close()
        if episode_writer is not None:
            episode_writer.close()

    pq.write_table(_tasks_table(tasks), out / "meta" / "tasks.parquet")
    stats_json = {key: as_json(r.result()) for key, r in running.items()}
    (out / "meta" / "stats.json").write_text(json.dumps(stats_json, indent=2) + "\n")
    info = {
        "codebase_version": CODEBASE_VERSION,
        "robot_type": "panda",
        "total_episodes": episode,
        "total_frames": index,
        "total_tasks": len(tasks),
        "chunks_size": CHUNKS_SIZE,
        "data_files_size_in_mb": data_file_mb,
        "video_files_size_in_mb": video_file_mb,
        "fps": FPS,
        "splits": {"train": f"0:{episode}"},
        "data_path": DATA_PATH,
        "video_path": VIDEO_PATH if cameras else None,
        "features": features,
        **CUE_INFO,
    }
    (out / "meta" / "info.json").write_text(json.dumps(info, indent=2) + "\n")
    return info
