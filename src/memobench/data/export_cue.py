"""The cue of each exported episode, kept out of the episode's frames (both LeRobot exports).

A policy is shown the cue before its first step, and takes no action during it, so the cue
has no place among the rows a policy learns actions from: a row of zero actions teaches a
policy to stand still, an action chunk crossing into the policy's part mixes such zeros with
real actions, and they pull the action statistics toward 0. Each episode's rows therefore
start at the policy's first step, and its cue is written beside them, indexed by episode::

    cue/chunk-CCC/episode_EEEEEE.parquet              frame_index, timestamp and the robot state per cue frame
    cue/chunk-CCC/<image key>/episode_EEEEEE.mp4      the cue as each camera saw it (H.264, one file per episode)

An episode without a cue (no ``cue/`` frames in its demo) has no cue files; the episode's
metadata says how many cue frames it has (``memobench/cue_length``) in either case.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memobench.data.demo_file import Demo
from memobench.data.render import IMAGE_KEYS

CUE_PATH = "cue/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet"
CUE_VIDEO_PATH = "cue/chunk-{episode_chunk:03d}/{video_key}/episode_{episode_index:06d}.mp4"
CHUNKS_SIZE = 1000  # episodes per cue chunk folder, as LeRobot v2.1 chunks its episode files
FPS = 20  # the control frequency: the frame rate of every export (memobench.data.lerobot re-exports it)


def cue_states(demo: Demo) -> np.ndarray:
    """The cue's robot states [C, 8] float32 (C = 0 for a task without a cue)."""
    return np.asarray(demo.arrays["cue/robot_states"], dtype=np.float32)


def cue_frames(demo: Demo, camera: str) -> np.ndarray:
    """The cue's frames of ``camera`` [C, H, W, 3]; ValueError for a rendered demo whose cue was not rendered."""
    image = IMAGE_KEYS[camera]
    if not len(demo.arrays["cue/robot_states"]):
        return np.zeros((0, *demo.arrays[f"obs/{image}"].shape[1:]), np.uint8)
    if f"cue/{image}" not in demo.arrays:
        raise ValueError(f"demo of seed {demo.attrs['seed']} has a cue but no cue/{image}: render it again")
    return demo.arrays[f"cue/{image}"]


def write_cue(out: Path, episode: int, demo: Demo, videos: dict[str, str], state_key: str) -> int:
    """Write ``demo``'s cue as episode ``episode``'s cue files; returns the cue's length.

    ``videos`` maps each exported camera (an :data:`IMAGE_KEYS` key) to its image key in the
    dataset, ``state_key`` is the dataset's name of the robot state (so a cue row reads as a frame row).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    states = cue_states(demo)
    if not len(states):
        return 0
    keys = {"episode_chunk": episode // CHUNKS_SIZE, "episode_index": episode}
    path = out / CUE_PATH.format(**keys)
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.table(
        {
            "frame_index": pa.array(np.arange(len(states)), pa.int64()),
            "timestamp": pa.array(np.arange(len(states), dtype=np.float32) / FPS, pa.float32()),
            state_key: pa.FixedSizeListArray.from_arrays(pa.array(states.reshape(-1)), states.shape[1]),
        }
    )
    pq.write_table(table, path)
    for camera, key in videos.items():
        write_video(out / CUE_VIDEO_PATH.format(video_key=key, **keys), cue_frames(demo, camera))
    return len(states)


def video_writer(path: Path, keyframe_interval: int):
    """An open H.264 (yuv420p) writer at :data:`FPS` for ``path``, a keyframe every ``keyframe_interval`` frames:
    how both exports encode frames (``append_data`` each frame, then ``close``)."""
    import imageio.v2 as imageio

    return imageio.get_writer(
        path,
        fps=FPS,
        codec="libx264",
        pixelformat="yuv420p",
        macro_block_size=1,
        ffmpeg_log_level="error",
        output_params=["-g", str(keyframe_interval)],
    )


def write_video(path: Path, frames: np.ndarray) -> None:
    """``frames`` [N, H, W, 3] uint8 as one mp4 (every frame a keyframe: cue videos are short)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = video_writer(path, 1)
    try:
        for frame in frames:
            writer.append_data(frame)
    finally:
        writer.close()
