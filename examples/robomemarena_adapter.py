"""A minimal RoboMemArena-style adapter: how to plug your own policy into MEMOBench.

Run it with::

    memobench eval --adapter-spec examples/robomemarena_adapter.py:build_adapter \\
        --adapter-kwargs '{"offset": [0.0, 0.0, 0.05]}' --tasks T03-check-all-drawers

MEMOBench imports this file, calls ``build_adapter(**adapter_kwargs)`` once, and
then drives the returned object (see docs/protocol.md, "The adapter contract"):

- ``reset()`` before every episode: a memory policy clears its memory here;
- ``infer_actions(obs, prompt, resize_size)`` whenever the executed part of the
  previous chunk is used up (every ``--replan-steps`` control steps); it returns
  an action chunk, float array ``[horizon, 7]`` (this example: ``[50, 7]``);
- ``close()`` once at the end of the run (optional).

``obs`` holds numpy values only:

- ``"observation/state"``: float32[8], end-effector position in metres (3, world
  frame), orientation as axis-angle in radians (3), gripper finger joint positions (2);
- ``"observation/image"`` / ``"observation/wrist_image"``: uint8
  ``[resize_size, resize_size, 3]`` agent-view and wrist RGB, upright. They are
  present when the harness renders: an adapter without ``needs_images = False``
  (like this one) always gets them;
- ``"prompt"``: the task instruction (the same string as the ``prompt`` argument);
- ``"prompt_video"``: on the first query of an episode of a cue task only, the
  cue frames, uint8 ``[T, H, W, 3]``;
- ``"episode"``, ``"step"``: ints, for logging.

Each action row is a 7-D OSC_POSE command: a position delta (xyz) and an
axis-angle rotation delta, each in [-1, 1] (the controller scales them), then the
gripper, -1 open and +1 closed. A chunk with NaN/inf, the wrong shape or no rows
is recorded as the episode's ``adapter_error``; it is never clipped for you.

The "policy" here is deliberately trivial: on an episode's first query it fixes a
target ``offset`` metres away from the start position of the end effector, then
moves towards it in small steps with the gripper open. It reads the images only
to show where they are (it keeps the mean pixel value of the last agent-view
frame) and works without them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

CHUNK = 50  # actions per chunk, as in the MEMOBench paper
ACTION_DIM = 7  # xyz delta, axis-angle delta, gripper
GRIPPER_OPEN = -1.0


class OffsetReachAdapter:
    """Moves the end effector towards a fixed offset from where the episode started.

    Args:
        offset: target displacement from the start position, metres, world xyz.
        gain: action units per metre of remaining distance (then clipped to ``max_step``).
        max_step: largest absolute xyz action component, in [0, 1].
        chunk: rows per returned action chunk.
    """

    def __init__(
        self,
        offset: Sequence[float] = (0.0, 0.0, 0.05),
        gain: float = 5.0,
        max_step: float = 0.2,
        chunk: int = CHUNK,
    ):
        self.offset = np.asarray(offset, dtype=np.float64).reshape(3)
        self.gain = float(gain)
        self.max_step = float(max_step)
        self.chunk = int(chunk)
        self.target: np.ndarray | None = None  # set on an episode's first query
        self.queries = 0
        self.last_image_mean: float | None = None  # mean agent-view pixel, None without images
        self.saw_cue_video = False

    def reset(self) -> None:
        """Forget the previous episode (this policy's whole "memory" is its target)."""
        self.target = None
        self.queries = 0
        self.last_image_mean = None
        self.saw_cue_video = False

    def infer_actions(self, obs: dict[str, Any], prompt: str, resize_size: int) -> np.ndarray:
        """A float64 ``[chunk, 7]`` chunk stepping towards the target, gripper open."""
        state = np.asarray(obs["observation/state"], dtype=np.float64)
        position = state[:3]
        if self.target is None:
            self.target = position + self.offset
        image = obs.get("observation/image")
        if image is not None:  # uint8 [resize_size, resize_size, 3]
            self.last_image_mean = float(np.mean(image))
        if obs.get("prompt_video") is not None:  # uint8 [T, H, W, 3], first query of cue tasks
            self.saw_cue_video = True
        self.queries += 1

        step = np.clip(self.gain * (self.target - position), -self.max_step, self.max_step)
        actions = np.zeros((self.chunk, ACTION_DIM))
        actions[:, :3] = step  # the harness re-queries after --replan-steps rows
        actions[:, 6] = GRIPPER_OPEN
        return actions

    def close(self) -> None:
        """Release resources (a real policy would free its model or connection here)."""


def build_adapter(**kwargs: Any) -> OffsetReachAdapter:
    """The factory named in ``--adapter-spec``; ``--adapter-kwargs`` arrive as keyword arguments."""
    return OffsetReachAdapter(**kwargs)
