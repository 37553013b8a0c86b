"""A read-only, privileged view of a simulated scene, for experts.

Experts see poses and joint values directly (no perception), but only what
a camera could see decides what they may *know*: an object inside a closed
drawer is hidden (:meth:`Scene.hidden`), and identical objects are not told
apart by anything but their current pose. Plans must honour this; what is
not visible has to come from the expert's memory.
"""

from __future__ import annotations

import numpy as np

from memobench.core.bddl_names import declared_section
from memobench.core.registers import fixture_parts
from memobench.sim.env import GRIP_SITE, SimEnv
from memobench.sim.world import WorldView

# The collision box of the table a scene is built on: "table" (the kitchen table) or
# "coffee_table". Its top is where objects rest (kitchen 0.90, coffee table 0.424: measured
# from the contacts of objects standing on them).
TABLE_GEOM_SUFFIX = "table_collision"


class Scene:
    """Poses and joints of one :class:`SimEnv`, read at the current step."""

    def __init__(self, env: SimEnv):
        self.env = env
        self.world = WorldView(env)
        self._data = env.sim.data
        self._model = env.sim.model

    # -- the hand ----------------------------------------------------------------------
    def eef_pos(self) -> np.ndarray:
        return np.array(self._data.get_site_xpos(GRIP_SITE))

    def eef_rot(self) -> np.ndarray:
        """3x3 rotation of the grip site; column 2 is the approach axis, column 0 the finger axis."""
        return np.array(self._data.get_site_xmat(GRIP_SITE)).reshape(3, 3)

    def at_home(self) -> bool:
        """The hand at its start pose, fingers open (the ``home()`` predicate)."""
        return self.world.at_home()

    def home_pose(self) -> tuple[np.ndarray, np.ndarray]:
        """Where the hand started: grip site position and 3x3 rotation."""
        pos, rot = self.env.home_pose
        return pos.copy(), rot.copy()

    def arm_joints(self) -> np.ndarray:
        """The arm's seven joint angles (radians)."""
        robot = self.env.libero.robots[0]
        return np.array(self._data.qpos[robot._ref_joint_pos_indexes])

    def all_shut(self) -> bool:
        """Every drawer, door and knob of the scene shut (off), as the register rules read them."""
        fixtures = declared_section(self.env.bddl, "fixtures")
        return all(self.check(shut, part) for part, shut in fixture_parts(fixtures))

    def holding(self) -> bool:
        """The gripper holds one of the scene's objects."""
        return any(self.grasped(name) for name in self.env.libero.objects_dict)

    def finger_gap(self) -> float:
        """Distance between the finger joints (about 0.08 open, under 0.01 closed on nothing)."""
        q = self.env.robot_state()[6:8]
        return float(q[0] - q[1])

    # -- objects and fixtures ----------------------------------------------------------------
    def table_top(self) -> float:
        """World z of the top of the table the scene is built on, read from its collision box.

        Plans of scenes other than the kitchen's read it instead of
        :data:`~memobench.experts.skills.TABLE_Z`: the coffee table's top is 0.48 m lower.
        """
        model = self._model
        for geom in range(model.ngeom):
            name = model.geom_id2name(geom) or ""
            if name.endswith(TABLE_GEOM_SUFFIX):
                return float(self._data.geom_xpos[geom][2] + model.geom_size[geom][2])
        raise LookupError(f"no table in this scene (no geom named '*{TABLE_GEOM_SUFFIX}')")

    def pos(self, name: str) -> np.ndarray:
        """Position of an object, fixture or region site (its origin)."""
        return self.world.position(name)

    def rot(self, name: str) -> np.ndarray:
        return self.world._rotation(name)

    def joint(self, name: str) -> float:
        return float(self._data.get_joint_qpos(name))

    def geom_pos(self, geom_id: int) -> np.ndarray:
        return np.array(self._data.geom_xpos[geom_id])

    def body_geoms(self, body: str) -> list[int]:
        bid = self._model.body_name2id(body)
        return [g for g in range(self._model.ngeom) if self._model.geom_bodyid[g] == bid]

    def check(self, predicate: str, *args: str) -> bool:
        """A state predicate of the world view, e.g. ``check("on", "milk_1", "plate_1")``."""
        return bool(self.world.query(predicate, args))

    def grasped(self, name: str) -> bool:
        return self.check("grasped", name)

    def hidden(self, name: str) -> bool:
        """True when ``name`` lies in a closed drawer or microwave: no camera could see it
        (:meth:`~memobench.sim.world.WorldView.hidden`)."""
        return self.world.hidden(name)
