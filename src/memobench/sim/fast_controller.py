"""The arm controller's state update with the same numbers from fewer calls.

robosuite's controllers refresh their view of the arm (end-effector pose and velocity, joint
positions and velocities, Jacobians, mass matrix) in ``Controller.update``, once per physics
substep: 25 times per control step. The version the simulator package installs for modern
MuJoCo looks the end-effector site up by name twice and computes its Jacobian four times (the
position and rotation Jacobians, then each again inside the velocity getters, which multiply
it by ``qvel``). :func:`install` replaces it, for every controller, by one that looks the site
up once per controller, computes both Jacobians in one ``mj_jacSite`` call and multiplies
those by ``qvel``: the same operations on the same inputs, so the same bits (a test drives the
arm through contacts both ways and compares every state). ``benchmarks/sim_costs.py`` prints
the step-time ratio.

``ENABLED`` switches the replacement off (tests and benchmarks compare both); the update
then runs the one installed before.
"""

from __future__ import annotations

from typing import Any

import numpy as np

ENABLED = True
_original: Any = None
_mujoco: Any = None  # bound by install(): importing this module must not load the simulator


def install() -> None:
    """Replace ``Controller.update`` once per process (later calls do nothing)."""
    global _original, _mujoco
    import mujoco
    from robosuite.controllers.base_controller import Controller

    if _original is not None:
        return
    _mujoco, _original = mujoco, Controller.update
    Controller.update = _update


def _update(self, force: bool = False) -> None:
    """``Controller.update`` (the attributes it sets and the ``new_update`` protocol), fewer calls."""
    if not ENABLED:
        _original(self, force)
        return
    if not (self.new_update or force):
        return
    sim = self.sim
    sim.forward()
    model, data = sim.model._model, sim.data._data
    site = self.__dict__.get("_memobench_site")
    if site is None:  # a controller is built per reset, for that reset's model
        site = self._memobench_site = sim.model.site_name2id(self.eef_name)
    self.ee_pos = np.array(data.site_xpos[site])
    self.ee_ori_mat = np.array(data.site_xmat[site].reshape([3, 3]))
    jacp, jacr = np.zeros((3, model.nv)), np.zeros((3, model.nv))
    _mujoco.mj_jacSite(model, data, jacp, jacr, site)
    self.ee_pos_vel = np.dot(jacp, data.qvel)
    self.ee_ori_vel = np.dot(jacr, data.qvel)
    self.joint_pos = np.array(data.qpos[self.qpos_index])
    self.joint_vel = np.array(data.qvel[self.qvel_index])
    self.J_pos = np.array(jacp[:, self.qvel_index])
    self.J_ori = np.array(jacr[:, self.qvel_index])
    self.J_full = np.array(np.vstack([self.J_pos, self.J_ori]))
    mass_matrix = np.ndarray(shape=(model.nv, model.nv), dtype=np.float64, order="C")
    _mujoco.mj_fullM(model, data, mass_matrix)
    self.mass_matrix = mass_matrix[self.qvel_index, :][:, self.qvel_index]
    self.new_update = False
