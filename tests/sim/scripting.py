"""Test-only helpers that drive simulator state directly (never used by experts or demos).

The pilot-task tests need checkpoints to complete in a known order without a
real controller, so they write joint positions and object poses. A
:class:`StateScript` adapter returns no-op actions and, from ``observe`` (called
after every control step), applies the scheduled state edits; the episode's
tracker therefore sees an edit made at step t at step t + 1.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from memobench.sim.env import SimEnv

Edit = Callable[[SimEnv, int], None]


def _forward(env: SimEnv) -> None:
    env.sim.forward()


def set_joint(env: SimEnv, joint: str, q: float) -> None:
    """Set a hinge/slide joint position and zero its velocity."""
    env.sim.data.set_joint_qpos(joint, q)
    env.sim.data.set_joint_qvel(joint, 0.0)
    _forward(env)


def place(env: SimEnv, obj: str, pos, quat_wxyz=None) -> None:
    """Put a free object at ``pos``, at rest; orientation ``quat_wxyz`` or unchanged."""
    joint = env.libero.get_object(obj).joints[-1]
    if quat_wxyz is None:
        quat_wxyz = env.sim.data.get_joint_qpos(joint)[3:]
    env.sim.data.set_joint_qpos(joint, np.concatenate([pos, quat_wxyz]))
    env.sim.data.set_joint_qvel(joint, np.zeros(6))
    _forward(env)


def place_on(env: SimEnv, obj: str, support: str, clearance: float = 0.03) -> None:
    """Drop ``obj`` upright over ``support``: its xy, the object's own height + clearance."""
    here = body_pos(env, obj)
    place(env, obj, np.r_[body_pos(env, support)[:2], here[2] + clearance])


def body_pos(env: SimEnv, name: str) -> np.ndarray:
    """Position of an object (body) or a region (site)."""
    return np.array(env.libero.object_states_dict[name].get_geom_state()["pos"], dtype=float)


def tilted(quat_wxyz, angle: float) -> np.ndarray:
    """``quat_wxyz`` rotated further by ``angle`` about world x."""
    rot = np.array([np.cos(angle / 2), np.sin(angle / 2), 0.0, 0.0])
    # Imported here: this module is imported when the simulator-free tests are collected.
    import mujoco

    out = np.empty(4)
    mujoco.mju_mulQuat(out, rot, np.asarray(quat_wxyz, dtype=float))
    return out


class StateScript:
    """A camera-free adapter: no-op actions; ``edits[step]`` applied after that step."""

    needs_images = False

    def __init__(self, env: SimEnv, edits: dict[int, Edit] | None = None, every_step: Edit | None = None):
        self.env, self.edits, self.every_step = env, edits or {}, every_step
        self.observed = 0

    def reset(self) -> None:
        self.observed = 0

    def infer_actions(self, obs, prompt, resize_size):
        actions = np.zeros((50, 7))
        actions[:, 6] = -1.0
        return actions

    def observe(self, obs) -> None:
        if obs.get("cue"):  # cue frames
            return
        # the step just executed: a policy is not told it, it counts the rollout's observe calls
        step, self.observed = self.observed, self.observed + 1
        if self.every_step is not None:
            self.every_step(self.env, step)
        if step in self.edits:
            self.edits[step](self.env, step)
