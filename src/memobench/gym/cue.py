"""The cue in ``info`` at reset: padded to the task's longest cue, with its true length.

A cue's length differs from episode to episode (a point cue stops when the hand arrives, a
demonstration when the expert is done), and a vector env stacks each ``info`` array of its
envs into one array of the first env's shape: cues of 21 and 22 frames cannot be stacked.
So ``info["cue"]`` is padded with zero frames at the end to :func:`cue_bound` frames, a
length fixed per task, and ``info["cue_length"]`` says how many frames are the cue.

Why padding rather than keeping the cue out of the stacked info (an object per env):
the cue is the one ``info`` entry a policy is meant to read, and a fixed shape is what a
batched policy (and a LeRobot-style evaluation loop over a vector env) consumes as it is,
with ``cue_length`` as the mask; the same contract holds for a single env, so code written
for one works for many. The cost is memory at reset: camera-free, a few hundred kB; in
``rgb`` mode a demonstration cue (about 90 frames played, 251 allowed) at 224 px is ~75 MB
per env instead of ~27 MB.

The bound is derived from the cue's own limits (:func:`memobench.sim.cue.max_cue_frames`:
the reach and hold steps of a point cue, the step cap of a demonstration), not measured,
so no seed can exceed it.
"""

from __future__ import annotations

import numpy as np

from memobench.core.suite import Task
from memobench.sim.cue import max_cue_frames


def cue_bound(task: Task) -> int:
    """The most frames the harness's cue of ``task`` can have (0 for a task without a cue).

    The harness plays the cue at the default frame spacing
    (:func:`memobench.evaluation.episode.play_cue`), one object name per target.
    """
    cue = task.spec.cue
    return 0 if cue is None else max_cue_frames(cue.kind, len(cue.targets))


def pad_cue(cue: dict[str, np.ndarray], length: int) -> dict[str, np.ndarray]:
    """Each of ``cue``'s [T, ...] stacks followed by zeros to ``length`` frames.

    Raises ``ValueError`` for a cue longer than ``length`` (a bound that no longer holds).
    """
    padded = {}
    for key, frames in cue.items():
        if len(frames) > length:
            raise ValueError(f"a cue of {len(frames)} frames, longer than its bound {length} ({key})")
        padded[key] = np.concatenate([frames, np.zeros((length - len(frames), *frames.shape[1:]), frames.dtype)])
    return padded
