"""Export demonstrations as a LeRobot dataset (format v3.0), with per-frame memory annotations.

Written against LeRobot's documented v3.0 layout (``lerobot`` itself needs a
torch this machine cannot install offline, so it is not a dependency)::

    meta/info.json                                   schema, fps, path templates, totals
    meta/stats.json                                  per-feature min/max/mean/std/count
    meta/tasks.parquet                               task string (index) -> task_index
    meta/episodes/chunk-000/file-000.parquet         one row per episode: length, tasks, row and video ranges
    data/chunk-000/file-000.parquet                  one row per frame
    videos/<image key>/chunk-000/file-000.mp4        every episode's frames, concatenated

Frame rows carry ``observation.state`` (eef position, axis-angle, gripper:
the harness's 8-D state), ``action`` (7-D), the standard index columns, and
MEMOBench's memory annotation: ``memory.checkpoint_index`` (the checkpoint
being worked toward at that frame: the first whose key frame is at or after
it), ``memory.op`` and ``memory.text.{coarse,intermediate,fine}``. The
``task`` of an episode is its instruction. Images come from rendered demos
(``memobench data render``); without them the export has no video features.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from memobench.data.demo_file import Demo, read_task_file
from memobench.data.render import IMAGE_KEYS

CODEBASE_VERSION = "v3.0"
FPS = 20  # the control frequency
CHUNK_INDEX = FILE_INDEX = 0  # the whole dataset fits one chunk and one file per kind
DATA_PATH = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
VIDEO_PATH = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
EPISODES_PATH = "meta/episodes/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
VIDEO_KEYS = {"agentview": "observation.images.image", "wrist": "observation.images.wrist_image"}
LEVELS = ("coarse", "intermediate", "fine")


def current_checkpoints(checkpoints: list[dict[str, Any]], length: int) -> np.ndarray:
    """Per frame, the index of the checkpoint being worked toward (the last one after all are done)."""
    frames = [c["key_frame"] if c["key_frame"] is not None else length for c in checkpoints]
    out = np.empty(length, dtype=np.int64)
    for t in range(length):
        out[t] = next((i for i, f in enumerate(frames) if f >= t), len(frames) - 1)
    return out


def _frame_columns(demo: Demo, episode: int, start: int, task_index: int) -> dict[str, Any]:
    n = demo.length
    current = current_checkpoints(demo.attrs["checkpoints"], n)
    cps = demo.attrs["checkpoints"]
    columns: dict[str, Any] = {
        "observation.state": demo.arrays["robot_states"].astype(np.float32),
        "action": demo.arrays["actions"].astype(np.float32),
        "timestamp": np.arange(n, dtype=np.float32) / FPS,
        "frame_index": np.arange(n, dtype=np.int64),
        "episode_index": np.full(n, episode, dtype=np.int64),
        "index": np.arange(start, start + n, dtype=np.int64),
        "task_index": np.full(n, task_index, dtype=np.int64),
        "memory.checkpoint_index": current,
        "memory.op": [cps[i]["op"] for i in current],
    }
    for level in LEVELS:
        columns[f"memory.text.{level}"] = [cps[i]["text"][level] for i in current]
    return columns


def _stats(values: np.ndarray) -> dict[str, list]:
    values = values.reshape(len(values), -1).astype(np.float64)
    return {
        "min": values.min(0).tolist(),
        "max": values.max(0).tolist(),
        "mean": values.mean(0).tolist(),
        "std": values.std(0).tolist(),
        "count": [len(values)],
    }


def _image_stats(frames: np.ndarray) -> dict[str, list]:
    # LeRobot keeps image stats per channel, in [0, 1], shaped (3, 1, 1)
    per_channel = frames.reshape(-1, 3).astype(np.float64) / 255.0

    def shaped(v):
        return [[[float(x)]] for x in v]

    return {
        "min": shaped(per_channel.min(0)),
        "max": shaped(per_channel.max(0)),
        "mean": shaped(per_channel.mean(0)),
        "std": shaped(per_channel.std(0)),
        "count": [len(frames)],
    }


def _write_video(path: Path, frames: list[np.ndarray]) -> None:
    import imageio.v2 as imageio

    path.parent.mkdir(parents=True, exist_ok=True)
    with imageio.get_writer(
        path, fps=FPS, codec="libx264", pixelformat="yuv420p", macro_block_size=1, ffmpeg_log_level="error"
    ) as writer:
        for frame in frames:
            writer.append_data(frame)


def _features(state_dim: int, image_size: int | None, cameras: list[str]) -> dict[str, Any]:
    features: dict[str, Any] = {
        "observation.state": {
            "dtype": "float32",
            "shape": [state_dim],
            "names": ["x", "y", "z", "ax", "ay", "az", "gripper_left", "gripper_right"],
        },
        "action": {"dtype": "float32", "shape": [7], "names": ["dx", "dy", "dz", "drx", "dry", "drz", "gripper"]},
        "timestamp": {"dtype": "float32", "shape": [1], "names": None},
        "frame_index": {"dtype": "int64", "shape": [1], "names": None},
        "episode_index": {"dtype": "int64", "shape": [1], "names": None},
        "index": {"dtype": "int64", "shape": [1], "names": None},
        "task_index": {"dtype": "int64", "shape": [1], "names": None},
        "memory.checkpoint_index": {"dtype": "int64", "shape": [1], "names": None},
        "memory.op": {"dtype": "string", "shape": [1], "names": None},
        **{f"memory.text.{level}": {"dtype": "string", "shape": [1], "names": None} for level in LEVELS},
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


def export_lerobot(source: Path, out: Path) -> dict[str, Any]:
    """Convert every ``<task>.hdf5`` in ``source`` to one LeRobot v3.0 dataset in ``out``; returns info.json."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = sorted(source.glob("*.hdf5"))
    if not files:
        raise FileNotFoundError(f"no <task>.hdf5 files in {source}")
    loaded = [read_task_file(path) for path in files]
    first_demo = next((d for _, demos in loaded for d in demos), None)
    if first_demo is None:
        raise ValueError(f"the files in {source} hold no demos")
    cameras = [c for c in IMAGE_KEYS if f"obs/{IMAGE_KEYS[c]}" in first_demo.arrays]
    image_size = int(first_demo.arrays[f"obs/{IMAGE_KEYS[cameras[0]]}"].shape[1]) if cameras else None

    tasks: dict[str, int] = {}
    frame_columns: dict[str, list] = {}
    episode_rows: list[dict[str, Any]] = []
    videos: dict[str, list[np.ndarray]] = {c: [] for c in cameras}
    index = 0
    for attrs, demos in loaded:
        task_index = tasks.setdefault(attrs["instruction"], len(tasks))
        for demo in demos:
            episode = len(episode_rows)
            columns = _frame_columns(demo, episode, index, task_index)
            for key, value in columns.items():
                frame_columns.setdefault(key, []).extend(list(value))
            row: dict[str, Any] = {
                "episode_index": episode,
                "tasks": [attrs["instruction"]],
                "length": demo.length,
                "dataset_from_index": index,
                "dataset_to_index": index + demo.length,
                "data/chunk_index": CHUNK_INDEX,
                "data/file_index": FILE_INDEX,
                "meta/episodes/chunk_index": CHUNK_INDEX,
                "meta/episodes/file_index": FILE_INDEX,
                "memobench/task_id": attrs["task_id"],
                "memobench/seed": int(demo.attrs["seed"]),
                "memobench/checkpoints": json.dumps(demo.attrs["checkpoints"]),
            }
            for camera in cameras:
                key = VIDEO_KEYS[camera]
                start = sum(len(f) for f in videos[camera]) / FPS
                frames = demo.arrays[f"obs/{IMAGE_KEYS[camera]}"]
                videos[camera].append(frames)
                row.update(
                    {
                        f"videos/{key}/chunk_index": CHUNK_INDEX,
                        f"videos/{key}/file_index": FILE_INDEX,
                        f"videos/{key}/from_timestamp": start,
                        f"videos/{key}/to_timestamp": start + len(frames) / FPS,
                    }
                )
            episode_rows.append(row)
            index += demo.length

    def at(template: str, **keys) -> Path:
        path = out / template.format(chunk_index=CHUNK_INDEX, file_index=FILE_INDEX, **keys)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    table = {}
    for key, values in frame_columns.items():
        if key in ("observation.state", "action"):
            table[key] = pa.array(
                [np.asarray(v, dtype=np.float32) for v in values], type=pa.list_(pa.float32(), len(values[0]))
            )
        else:
            table[key] = pa.array(values)
    pq.write_table(pa.table(table), at(DATA_PATH))
    pq.write_table(pa.Table.from_pylist(episode_rows), at(EPISODES_PATH))
    pq.write_table(_tasks_table(tasks), at("meta/tasks.parquet"))
    for camera, chunks in videos.items():
        _write_video(at(VIDEO_PATH, video_key=VIDEO_KEYS[camera]), [f for chunk in chunks for f in chunk])

    stats = {
        key: _stats(np.asarray(frame_columns[key], dtype=np.float64))
        for key in (
            "observation.state",
            "action",
            "timestamp",
            "frame_index",
            "episode_index",
            "index",
            "task_index",
            "memory.checkpoint_index",
        )
    }
    for camera, chunks in videos.items():
        stats[VIDEO_KEYS[camera]] = _image_stats(np.concatenate(chunks))
    (out / "meta" / "stats.json").write_text(json.dumps(stats, indent=2) + "\n")
    info = {
        "codebase_version": CODEBASE_VERSION,
        "robot_type": "panda",
        "total_episodes": len(episode_rows),
        "total_frames": index,
        "total_tasks": len(tasks),
        "chunks_size": 1000,
        "data_files_size_in_mb": 100,
        "video_files_size_in_mb": 500,
        "fps": FPS,
        "splits": {"train": f"0:{len(episode_rows)}"},
        "data_path": DATA_PATH,
        "video_path": VIDEO_PATH if cameras else None,
        "features": _features(first_demo.arrays["robot_states"].shape[1], image_size, cameras),
    }
    (out / "meta" / "info.json").write_text(json.dumps(info, indent=2) + "\n")
    return info
