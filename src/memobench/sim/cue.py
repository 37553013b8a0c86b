"""The cue phase of object and procedural tasks: a scripted prompt video.

The scripted cue acts in the episode's own scene through ``env.step`` only
(no state writes); frames are kept; then the simulator is put back exactly
in the state it had before the cue, so the policy starts from the same scene
and only the video carries the cued information.

Two kinds (``CueSpec.kind``):

- ``point``: the hand hovers over each target in turn (:func:`point_cue`).
- ``demo``: a performer - the task's expert, told the episode's binding - does
  the routine itself, objects and all (:func:`demo_cue`). This package does not
  know the experts: the caller passes the performer in.
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
# A demonstration is a whole routine: 230-400 control steps for P01-P05 (every variant,
# measured), ~200 more for a re-grasp. Past the cap the video stops, whatever is left.
DEMO_MAX_STEPS = 1000
# Control steps between recorded frames. Pointing is short (40-50 steps), so every 2nd step.
# A demonstration is 5-10 times longer and each rendered frame costs ~0.1 s per camera, so
# every 4th (5 frames a second at 20 Hz, ~60-100 frames): a grasp or a release holds the
# hand still for 15 steps while the fingers move for ~10, so each shows in 3 frames or
# more, the fingers' closing or opening in 2 or more.
FRAME_EVERY = {"point": 2, "demo": 4}

Performer = Callable[[], np.ndarray | None]
"""A ``demo`` cue's actor: called once per control step, it returns the action to execute
(reading the live env itself), or None once the routine is done."""


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

    Action 1.0 commands 0.05 m; gain 2 stops within a few millimetres (measured).
    """
    move = np.clip(2.0 * (target - current) / 0.05, -1.0, 1.0)
    return np.concatenate([move, np.zeros(3), [gripper]])


def max_cue_frames(kind: str, n_targets: int = 0) -> int:
    """The most frames :func:`run_cue` records for a cue of ``kind`` (default frame spacing).

    Derived from the cue's own limits, not measured: a ``point`` cue moves to each of
    ``n_targets`` targets and back home, each move at most :data:`MAX_REACH_STEPS` steps
    plus :data:`HOLD_STEPS`; a ``demo`` cue stops at :data:`DEMO_MAX_STEPS`. One frame is
    recorded before the first step and one every :data:`FRAME_EVERY` steps. Both bounds are
    reached (a hand that never arrives, a performer that never finishes: tests/sim/test_cue_bound.py).
    """
    if kind not in FRAME_EVERY:
        raise ValueError(f"unknown cue kind {kind!r}; known: {', '.join(sorted(FRAME_EVERY))}")
    steps = DEMO_MAX_STEPS if kind == "demo" else (n_targets + 1) * (MAX_REACH_STEPS + HOLD_STEPS)
    return 1 + steps // FRAME_EVERY[kind]


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


def demo_cue(performer: Performer, rec: _Recorder, max_steps: int = DEMO_MAX_STEPS) -> None:
    """Execute the performer's actions until it is done, or for ``max_steps`` steps."""
    for _ in range(max_steps):
        action = performer()
        if action is None:
            return
        rec.step(action)


def run_cue(
    env: SimEnv,
    world: WorldView,
    kind: str,
    targets: list[str],
    *,
    performer: Performer | None = None,
    frame_every: int | None = None,
    size: int = 256,
) -> CueRecording:
    """Play the cue, record it, and restore the simulator to its pre-cue state exactly.

    ``targets`` are what a ``point`` cue points at (a ``demo`` cue ignores them);
    ``performer`` acts a ``demo`` cue (required for it, ignored otherwise). A frame
    is recorded before the first step and every ``frame_every`` steps (default:
    :data:`FRAME_EVERY` of the kind). Raises ``ValueError`` for an unknown kind or a
    ``demo`` cue without a performer, before anything moves.
    """
    if kind not in FRAME_EVERY:
        raise ValueError(f"unknown cue kind {kind!r}; known: {', '.join(sorted(FRAME_EVERY))}")
    if kind == "demo" and performer is None:
        raise ValueError("a demo cue needs a performer (the caller builds it: this package knows no experts)")
    before = env.snapshot()
    rec = _Recorder(env, frame_every or FRAME_EVERY[kind], size)
    rec.capture()
    if kind == "demo":
        demo_cue(performer, rec)
    else:
        point_cue(env, world, targets, rec)
    env.restore(before)
    return rec.rec
