"""Export demonstrations as a dataset openpi fine-tunes pi0 / pi0.5 on (LeRobot format v2.1).

openpi pins a LeRobot commit whose loader reads format v2.1, not the v3.0 of
:mod:`memobench.data.lerobot`, and its LIBERO data config reads fixed keys. This export
writes that layout with those keys::

    meta/info.json                                           schema, fps, path templates, totals
    meta/tasks.jsonl                                         {"task_index", "task"}: one line per distinct prompt
    meta/episodes.jsonl                                      {"episode_index", "tasks", "length", memobench/...}
    meta/episodes_stats.jsonl                                {"episode_index", "stats"}: per feature min, max, mean,
                                                             std, count (and q01..q99)
    meta/memobench_prompts.json                              the prompt choice and its token-length report
    data/chunk-CCC/episode_EEEEEE.parquet                    one row per policy step
    cue/...                                                  each episode's cue (:mod:`memobench.data.export_cue`)
    norm_stats.json                                          openpi's normalisation statistics (below)

**Keys** (openpi's ``LeRobotLiberoDataConfig`` repacks exactly these): ``image`` and
``wrist_image`` (the two cameras), ``state`` (float32 [8]: end-effector position,
axis-angle, the two gripper joints; what ``memobench eval --policy remote`` sends as
``observation/state``), ``actions`` (float32 [7]) and the prompt, which openpi takes from
the row's task (``prompt_from_task``), so each distinct prompt is a task and a row's
``task_index`` is its prompt's. The memory annotation columns of the v3.0 export come along.

**Frames** are stored as PNG images in the parquet rows (LeRobot's ``image`` type), as openpi's
own LIBERO conversion stores them: lossless, and read by the pinned loader with no video
decoder. They are at the size the demos were rendered at, not resampled: openpi's model
transforms resize (with padding) to 224 px anyway, and a resampled copy would not be the
pixels the harness shows a policy. Render at 224 (``data render --image-size 224``) to train
on exactly what ``memobench eval`` sends at its default ``--resize-size`` 224.

**Prompts** (``prompt``): ``instruction`` (the task's instruction, what the harness sends
without ``--memory-oracle``) or ``oracle-{coarse,intermediate,fine}`` (the instruction, a
newline and the memory line of the checkpoints completed before the frame: what the harness
sends under ``--memory-oracle LEVEL``). The report estimates each task's longest prompt in
PaliGemma tokens (:mod:`memobench.data.prompt_tokens`) against pi0's 48 and pi0.5's 200.

**Statistics**: ``norm_stats.json`` is openpi's file (``{"norm_stats": {"state": {mean, std,
q01, q99}, "actions": {...}}}``), over the policy's rows only (there are no others: the cue
is not in the rows). mean and std are exact; q01 / q99 are the count-weighted means of the
episodes' quantiles (LeRobot's merge, :mod:`memobench.data.lerobot_stats`), where openpi's own
``compute_norm_stats.py`` bins values into a histogram: both approximate.

Streamed as the v3.0 export is: one demo in memory at a time.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np

from memobench.data.export_cue import CUE_PATH, CUE_VIDEO_PATH, write_cue
from memobench.data.lerobot import (
    FPS,
    LEVELS,
    NUMERIC,
    VIDEO_KEYS,
    arrow_column,
    arrow_schema,
    demos,
    features_of,
    frame_columns,
    survey,
)
from memobench.data.lerobot_stats import RunningStats, image_stats, vector_stats
from memobench.data.prompt_tokens import budget_report
from memobench.data.render import IMAGE_KEYS

CODEBASE_VERSION = "v2.1"
CHUNKS_SIZE = 1000
DATA_PATH = "data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet"
PROMPTS = ("instruction", *(f"oracle-{level}" for level in LEVELS))
# the v3.0 export's names -> the names openpi's LIBERO data config repacks
RENAME = {
    "observation.state": "state",
    "action": "actions",
    VIDEO_KEYS["agentview"]: "image",
    VIDEO_KEYS["wrist"]: "wrist_image",
}
CAMERA_KEYS = {"agentview": "image", "wrist": "wrist_image"}
NORM_KEYS = ("state", "actions")  # what openpi's compute_norm_stats.py computes


def prompts_of(instruction: str, columns: dict[str, Any], prompt: str) -> list[str]:
    """Each row's prompt, as the harness would send it under ``prompt`` (module docstring)."""
    if prompt not in PROMPTS:
        raise ValueError(f"unknown prompt {prompt!r}; available: {', '.join(PROMPTS)}")
    if prompt == "instruction":
        return [instruction] * len(columns["index"])
    # the harness's oracle prompt: the task, a newline, the memory line (memobench.core.oracle)
    return [f"{instruction}\n{line}" for line in columns[f"memory.so_far.{prompt.removeprefix('oracle-')}"]]


def openpi_features(v3_features: dict[str, Any]) -> dict[str, Any]:
    """The v3.0 export's features renamed for openpi, cameras as ``image`` (PNG) features."""
    features = {}
    for key, feature in v3_features.items():
        if feature["dtype"] == "video":
            feature = {"dtype": "image", "shape": feature["shape"], "names": ["height", "width", "channel"]}
        features[RENAME.get(key, key)] = feature
    return features


def hf_features(features: dict[str, Any]) -> dict[str, Any]:
    """``features`` as Hugging Face ``datasets`` describes them in a parquet file's metadata: how the
    pinned LeRobot's ``load_dataset("parquet")`` learns that an image column holds images."""
    out: dict[str, Any] = {}
    for key, feature in features.items():
        if feature["dtype"] == "image":
            out[key] = {"_type": "Image"}
        elif list(feature["shape"]) == [1]:
            out[key] = {"dtype": feature["dtype"], "_type": "Value"}
        else:
            value = {"dtype": feature["dtype"], "_type": "Value"}
            out[key] = {"feature": value, "length": feature["shape"][0], "_type": "Sequence"}
    return out


def png(frames: np.ndarray) -> list[dict[str, Any]]:
    """Frames [N, H, W, 3] uint8 as Hugging Face image cells (PNG bytes, no path)."""
    from PIL import Image

    cells = []
    for frame in frames:
        buffer = io.BytesIO()
        Image.fromarray(frame).save(buffer, format="PNG")
        cells.append({"bytes": buffer.getvalue(), "path": None})
    return cells


def norm_stats_json(running: dict[str, RunningStats]) -> dict[str, Any]:
    """openpi's ``norm_stats.json`` content from the merged statistics of ``state`` and ``actions``."""
    stats = {}
    for key in NORM_KEYS:
        result = running[key].result()
        stats[key] = {
            name: np.asarray(result[name], dtype=np.float64).tolist() for name in ("mean", "std", "q01", "q99")
        }
    return {"norm_stats": stats}


def _json_line(path: Path, item: dict[str, Any]) -> None:
    with path.open("a") as f:
        f.write(json.dumps(item) + "\n")


def export_openpi(source: Path, out: Path, *, prompt: str = "instruction") -> dict[str, Any]:
    """Convert every ``<task>.hdf5`` in ``source`` to one openpi-ready LeRobot v2.1 dataset in ``out``.

    Returns ``info.json`` with the prompt report under ``memobench/prompts`` (also written to
    ``meta/memobench_prompts.json``). ValueError for an unknown ``prompt``, demos without both cameras'
    images or a demo that cannot be exported.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    if prompt not in PROMPTS:
        raise ValueError(f"unknown prompt {prompt!r}; available: {', '.join(PROMPTS)}")
    files = sorted(source.glob("*.hdf5"))
    if not files:
        raise FileNotFoundError(f"no <task>.hdf5 files in {source}")
    width, first = survey(files)
    cameras = [c for c in IMAGE_KEYS if f"obs/{IMAGE_KEYS[c]}" in first.arrays]
    if len(cameras) < len(CAMERA_KEYS):  # openpi's LIBERO inputs read both cameras
        raise ValueError(f"the demos in {source} lack camera images (openpi reads both): render them first")
    image_size = int(first.arrays[f"obs/{IMAGE_KEYS[cameras[0]]}"].shape[1]) if cameras else None
    features = openpi_features(features_of(first.arrays["robot_states"].shape[1], width, image_size, cameras))
    del first
    schema = arrow_schema(features).with_metadata(
        {b"huggingface": json.dumps({"info": {"features": hf_features(features)}}).encode()}
    )
    numeric = [key for key, f in features.items() if f["dtype"] in NUMERIC]
    images = [CAMERA_KEYS[c] for c in cameras]
    meta = out / "meta"
    meta.mkdir(parents=True, exist_ok=True)
    for name in ("episodes.jsonl", "episodes_stats.jsonl"):  # appended to below, one line per episode
        (meta / name).write_text("")

    tasks: dict[str, int] = {}
    prompts_by_task: dict[str, set[str]] = {}
    running = {key: RunningStats() for key in NORM_KEYS}
    episode = index = 0
    for attrs, demo, _ in demos(files, None):
        v3 = frame_columns(demo, episode=episode, start=index, task_index=0, width=width, cameras=cameras)
        columns = {RENAME.get(key, key): value for key, value in v3.items()}
        rows = prompts_of(attrs["instruction"], columns, prompt)
        columns["task_index"] = np.array([tasks.setdefault(p, len(tasks)) for p in rows], np.int64)
        prompts_by_task.setdefault(attrs["task_id"], set()).update(rows)
        length = len(columns["index"])
        stats = {key: vector_stats(np.asarray(columns[key])) for key in numeric}
        stats.update({key: image_stats(columns[key]) for key in images})
        for key in images:
            columns[key] = png(columns[key])
        chunk = episode // CHUNKS_SIZE
        path = out / DATA_PATH.format(episode_chunk=chunk, episode_index=episode)
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table([arrow_column(columns[f.name], f.type) for f in schema], schema=schema), path)
        cue_length = write_cue(out, episode, demo, {c: CAMERA_KEYS[c] for c in cameras}, "state")
        _json_line(
            meta / "episodes.jsonl",
            {
                "episode_index": episode,
                "tasks": list(dict.fromkeys(rows)),
                "length": length,
                "memobench/task_id": attrs["task_id"],
                "memobench/seed": int(demo.attrs["seed"]),
                "memobench/checkpoints": json.dumps(demo.attrs["checkpoints"]),
                "memobench/cue_length": cue_length,
            },
        )
        del demo, columns
        for key in NORM_KEYS:
            running[key].add(stats[key])
        _json_line(
            meta / "episodes_stats.jsonl",
            {
                "episode_index": episode,
                "stats": {k: {n: np.asarray(v).tolist() for n, v in s.items()} for k, s in stats.items()},
            },
        )
        episode += 1
        index += length

    with (meta / "tasks.jsonl").open("w") as f:
        for task, task_index in tasks.items():
            f.write(json.dumps({"task_index": task_index, "task": task}) + "\n")
    (out / "norm_stats.json").write_text(json.dumps(norm_stats_json(running), indent=2) + "\n")
    report = {
        "prompt": prompt,
        "tokens": "an estimate (memobench.data.prompt_tokens) counting words, digits and punctuation as "
        "PaliGemma pieces plus pi0's BOS and separator; pi0.5 also spends tokens on the discretised state, not counted",
        "limits": {"pi0": 48, "pi05": 200},
        "tasks": budget_report(prompts_by_task),
    }
    (meta / "memobench_prompts.json").write_text(json.dumps(report, indent=2) + "\n")
    info = {
        "codebase_version": CODEBASE_VERSION,
        "robot_type": "panda",
        "total_episodes": episode,
        "total_frames": index,
        "total_tasks": len(tasks),
        "total_videos": 0,
        "total_chunks": (episode - 1) // CHUNKS_SIZE + 1 if episode else 0,
        "chunks_size": CHUNKS_SIZE,
        "fps": FPS,
        "splits": {"train": f"0:{episode}"},
        "data_path": DATA_PATH,
        "video_path": None,
        "features": features,
        "memobench/cue_path": CUE_PATH,
        "memobench/cue_video_path": CUE_VIDEO_PATH,
    }
    (meta / "info.json").write_text(json.dumps(info, indent=2) + "\n")
    return {**info, "memobench/prompts": report}
