"""The cue phase of object and procedural tasks: a scripted prompt video.

The scripted cue acts in the episode's own scene through ``env.step`` only
(no state writes); frames are kept; then the simulator is put back exactly
in the state it had before the cue, so the policy starts from the same scene
and only the video carries the cued information.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from memobench.sim.env import SimEnv
from memobench.sim.world import WorldView

HOVER_HEIGHT = 0.12  # metres above a target's origin while pointing at it
REACH_TOLERANCE = 0.015  # metres
MAX_REACH_STEPS = 90
HOLD_STEPS = 8


@dataclass
class CueRecording:
    """What the cue produced: frames (empty when camera-free) and the robot state at each."""

    frames: list[np.ndarray] = field(default_factory=list)
    wrist_frames: list[np.ndarray] = field(default_factory=list)
    states: list[np.ndarray] = field(default_factory=list)
    physics: list[np.ndarray] = field(default_factory=list)  # full MuJoCo state at each frame (re-rendering)
    steps: int = 0

    def video(self) -> np.ndarray | None:
        """uint8 [T, H, W, 3], or None when no frames were rendered."""
        return np.stack(self.frames) if self.frames else None


def reach_action(current: np.ndarray, target: np.ndarray, gripper: float = -1.0) -> np.ndarray:
    """A proportional OSC_POSE delta action moving the hand toward ``target`` (no rotation).

    Action 1.0 commands 0.05 m; gain 2 stops within a few millimetres (SIM-NOTES.md).
    """
    move = np.clip(2.0 * (target - current) / 0.05, -1.0, 1.0)
    return np.concatenate([move, np.zeros(3), [gripper]])


class _Recorder:
    def __init__(self, env: SimEnv, frame_every: int, size: int):
        self.env, self.frame_every, self.size = env, frame_every, size
        self.rec = CueRecording()

    def step(self, action: np.ndarray) -> None:
        self.env.step(action)
        self.rec.steps += 1
        if self.rec.steps % self.frame_every == 0:
            self.capture()

    def capture(self) -> None:
        self.rec.states.append(self.env.robot_state())
        self.rec.physics.append(self.env.physics_state())
        if self.env.renders:
            self.rec.frames.append(self.env.render("agentview", self.size))
            self.rec.wrist_frames.append(self.env.render("wrist", self.size))


def _move_to(rec: _Recorder, target: np.ndarray) -> None:
    for _ in range(MAX_REACH_STEPS):
        here = rec.env.robot_state()[:3]
        if np.linalg.norm(target - here) < REACH_TOLERANCE:
            break
        rec.step(reach_action(here, target))
    for _ in range(HOLD_STEPS):
        rec.step(reach_action(rec.env.robot_state()[:3], target))


def point_cue(env: SimEnv, world: WorldView, targets: list[str], rec: _Recorder) -> None:
    """Hover over each target in turn, then return to where the hand started."""
    home = env.robot_state()[:3].copy()
    for name in targets:
        _move_to(rec, world.position(name) + np.array([0.0, 0.0, HOVER_HEIGHT]))
    _move_to(rec, home)


CUE_SCRIPTS: dict[str, Callable[[SimEnv, WorldView, list[str], _Recorder], None]] = {
    "point": point_cue,
}


def run_cue(
    env: SimEnv,
    world: WorldView,
    kind: str,
    targets: list[str],
    *,
    frame_every: int = 2,
    size: int = 256,
) -> CueRecording:
    """Play the cue, record it, and restore the simulator to its pre-cue state exactly."""
    before = env.snapshot()
    rec = _Recorder(env, frame_every, size)
    rec.capture()
    CUE_SCRIPTS[kind](env, world, targets, rec)
    env.restore(before)
    return rec.rec
