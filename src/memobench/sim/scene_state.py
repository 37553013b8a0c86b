"""The scene as numbers, showing only what a camera could see: the ``state`` observation.

One function for everything a policy receives as state: the Gymnasium API's ``state`` mode and
its cue frames (:mod:`memobench.gym.observation`) and the training and evaluation state vector
(:mod:`memobench.data.state_features`, which flattens this). It holds the robot's state, every
movable object's pose and every articulated fixture's joints, with two masks:

- an object no camera could see (in a shut drawer or microwave,
  :meth:`memobench.sim.world.WorldView.hidden`) has its pose zeroed and ``object_visible`` 0;
- a fixture joint whose part is within its shut band reads exactly 0.0, its closed value
  (:meth:`memobench.sim.world.WorldView.observed_joint`): a drawer pushed back to +0.0017 m or
  a knob turned off to -0.0047 rad looks like the untouched one, as it does on camera.

Where an object went, and whether a fixture was ever opened, must be remembered.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memobench.sim.env import SimEnv
from memobench.sim.world import WorldView


@dataclass(frozen=True)
class SceneLayout:
    """The order of objects and fixture joints in a ``state`` observation (the same for every
    binding of a task: bindings change which object plays which role, not the scene's objects)."""

    objects: tuple[str, ...]
    fixture_joints: tuple[str, ...]

    @classmethod
    def of(cls, env: SimEnv) -> SceneLayout:
        """Objects in sorted name order; fixture joints by sorted fixture name, each fixture's in its own order."""
        lib = env.libero
        joints = [joint for fixture in sorted(lib.fixtures_dict) for joint in lib.get_object(fixture).joints]
        return cls(tuple(sorted(lib.objects_dict)), tuple(joints))


def state_observation(env: SimEnv, world: WorldView, layout: SceneLayout) -> dict[str, np.ndarray]:
    """The ``state`` observation of the scene ``env`` holds now: ``robot_state`` float32[8],
    ``object_poses`` float32[n, 7] (xyz + quaternion w, x, y, z), ``object_visible`` int8[n] and,
    when the scene has any, ``fixture_joints`` float32[m] (the masks of the module docstring)."""
    n = len(layout.objects)
    poses = np.zeros((n, 7), np.float32)
    visible = np.zeros(n, np.int8)
    states = env.libero.object_states_dict
    for i, name in enumerate(layout.objects):
        if world.hidden(name):
            continue
        geom = states[name].get_geom_state()
        poses[i, :3], poses[i, 3:] = geom["pos"], geom["quat"]
        visible[i] = 1
    obs = {"robot_state": env.robot_state(), "object_poses": poses, "object_visible": visible}
    if layout.fixture_joints:
        obs["fixture_joints"] = np.array([world.observed_joint(j) for j in layout.fixture_joints], np.float32)
    return obs
