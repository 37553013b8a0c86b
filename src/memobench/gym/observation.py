"""What the Gymnasium API's observations hold, and nothing a camera could not see.

``state`` mode: the robot's state, every movable object's pose and every articulated
fixture's joints (drawers, doors, knobs), masked as a camera would see them
(:mod:`memobench.sim.scene_state`): an object inside a shut drawer or microwave has its
pose zeroed and its ``object_visible`` flag 0, and a fixture joint within its shut band
(:mod:`memobench.sim.fixture_bands`) reads exactly 0.0. Where an object went, and whether
a fixture was opened, must be remembered.

``rgb`` mode: the two camera images a policy gets in the harness (agent view and
wrist, rendered at the protocol's camera size and padded to ``size``), and the robot's
state.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from memobench.evaluation.episode import policy_images
from memobench.evaluation.protocol import Protocol
from memobench.sim.cue import CueRecording
from memobench.sim.env import SimEnv
from memobench.sim.scene_state import SceneLayout, state_observation
from memobench.sim.world import WorldView

__all__ = ["OBS_MODES", "SceneLayout", "cue_observations", "observation_space", "rgb_observation", "state_observation"]

OBS_MODES = ("state", "rgb")
# Bounds that hold by construction: positions (metres) stay within the 10 m around the scene's
# origin (the floor and the walls of the arena stop everything), axis-angles within pi, quaternions
# within 1, fixture joints (slides in metres, hinges in radians) within 2 pi.
REACH = 10.0
ROBOT_STATE = spaces.Box(-REACH, REACH, (8,), np.float32)


def observation_space(mode: str, layout: SceneLayout, size: int) -> spaces.Dict:
    """The observation space of ``mode`` for a scene of ``layout``, images ``size`` x ``size``."""
    if mode == "rgb":
        image = spaces.Box(0, 255, (size, size, 3), np.uint8)
        return spaces.Dict({"agentview": image, "wrist": image, "robot_state": ROBOT_STATE})
    n = len(layout.objects)
    fields: dict[str, spaces.Space] = {
        "robot_state": ROBOT_STATE,
        "object_poses": spaces.Box(
            np.tile([-REACH] * 3 + [-1.0] * 4, (n, 1)).astype(np.float32),
            np.tile([REACH] * 3 + [1.0] * 4, (n, 1)).astype(np.float32),
        ),
        "object_visible": spaces.MultiBinary(n),
    }
    if layout.fixture_joints:  # a zero-length Box breaks shared-memory vector envs; omit it instead
        fields["fixture_joints"] = spaces.Box(-2 * np.pi, 2 * np.pi, (len(layout.fixture_joints),), np.float32)
    return spaces.Dict(fields)


def rgb_observation(env: SimEnv, protocol: Protocol) -> dict[str, np.ndarray]:
    """The ``rgb`` observation: the images the harness shows a policy, and the robot's state."""
    agentview, wrist = policy_images(env, protocol)
    return {"agentview": agentview, "wrist": wrist, "robot_state": env.robot_state()}


def cue_observations(
    mode: str, env: SimEnv, world: WorldView, layout: SceneLayout, cue: CueRecording, size: int
) -> dict[str, np.ndarray]:
    """The cue as a stack of observations of ``mode``, one per recorded cue frame ([T, ...]; T = 0 without a cue).

    ``rgb``: the cue's frames (already at ``size``) and robot states. ``state``: each frame's
    scene is reconstructed from the recorded physics state, the same visibility rule applied;
    ``env`` is put back exactly as it was (:meth:`SimEnv.snapshot` / :meth:`SimEnv.restore`).
    """
    states = np.array(cue.states, np.float32).reshape(-1, 8)
    if mode == "rgb":
        frames = np.array(cue.frames, np.uint8).reshape(-1, size, size, 3)
        wrist = np.array(cue.wrist_frames, np.uint8).reshape(-1, size, size, 3)
        return {"agentview": frames, "wrist": wrist, "robot_state": states}
    import mujoco

    model, data = env.sim.model._model, env.sim.data._data
    before = env.snapshot()
    frames = []
    try:
        for physics, robot in zip(cue.physics, states, strict=True):
            env.set_physics_state(physics)
            mujoco.mj_forward(model, data)
            frame = state_observation(env, world, layout)
            frame["robot_state"] = robot  # as recorded (robosuite's sampled observation, not recomputed)
            frames.append(frame)
    finally:
        env.restore(before)
    if not frames:
        now = state_observation(env, world, layout)
        return {key: np.zeros((0, *value.shape), value.dtype) for key, value in now.items()}
    return {key: np.stack([frame[key] for frame in frames]) for key in frames[0]}
