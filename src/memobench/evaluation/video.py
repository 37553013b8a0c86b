"""Episode videos: ``videos/<task>/<task>_<success|failure>_ep<NNN>_seed<S>.mp4`` (+ ``_wrist``).

An arena task's videos follow RoboMemArena's naming instead:
``videos/task<N>/task<N>_<success|failure>_ep<ep>_seed<S>.mp4`` (N: its number, 1-26).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from memobench.core.records import EpisodeRecord
from memobench.core.suite import arena_number

VIDEO_MODES = ("none", "failures", "all")
FPS = 10


def wants_video(mode: str, success: bool) -> bool:
    return mode == "all" or (mode == "failures" and not success)


def video_path(out_root: Path, record: EpisodeRecord, camera: str) -> Path:
    outcome = "success" if record.success else "failure"
    suffix = "" if camera == "agentview" else "_wrist"
    number = arena_number(record.task_id)
    if number is not None:
        name = f"task{number}_{outcome}_ep{record.episode}_seed{record.seed}{suffix}.mp4"
        return out_root / "videos" / f"task{number}" / name
    name = f"{record.task_id}_{outcome}_ep{record.episode:03d}_seed{record.seed}{suffix}.mp4"
    return out_root / "videos" / record.task_id / name


def write_video(path: Path, frames: list[np.ndarray], fps: int = FPS) -> None:
    """Write uint8 [H, W, 3] frames as H.264 mp4; written to a temp name, then renamed."""
    import imageio.v2 as imageio

    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.stem + ".partial.mp4")
    with imageio.get_writer(partial, fps=fps, codec="libx264", macro_block_size=1, ffmpeg_log_level="error") as writer:
        for frame in frames:
            writer.append_data(frame)
    os.replace(partial, path)


def save_episode_videos(out_root: Path, record: EpisodeRecord, frames: dict[str, list[np.ndarray]]) -> list[Path]:
    """Write the episode's videos for every camera with frames; returns the paths written."""
    written = []
    for camera, camera_frames in frames.items():
        if camera_frames:
            path = video_path(out_root, record, camera)
            write_video(path, camera_frames)
            written.append(path)
    return written
