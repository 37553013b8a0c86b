"""The simulator-backed :class:`~memobench.core.predicates.StateView`.

Answers state predicates on the current step of a :class:`SimEnv`. Spatial
relations (on, in, open, turned on) reuse LIBERO's own object-state checks, so
a MEMOBench checkpoint means what the same BDDL goal means in LIBERO. Closed,
off, ajar and how far a fixture is open follow the fixture bands
(:mod:`memobench.sim.fixture_bands`), the one rule that also decides what is
hidden and what a ``state`` observation shows. Quantities LIBERO has no notion
of (grasped, lifted, tilt) are measured here against the pose each object had
when tracking started.
"""

from __future__ import annotations

import numpy as np

from memobench.sim.env import GRIP_SITE, SimEnv
from memobench.sim.fixture_bands import BANDS, Band, band_of

LIFT_HEIGHT = 0.05  # metres above the start height that count as "lifted"
UPRIGHT_TILT = 0.2  # radians: an object tilted less than this stands upright
NEAR_DISTANCE = 0.10  # metres, xy, for near(a, b)
# home(): the hand back at its start pose. Within 3 cm and 0.35 rad (20 degrees) of where the
# tracking started, fingers open: a pose the arm can reach again after any skill, and far too
# coarse to tell a drawer or a count by (docs/protocol.md, "Registers").
HOME_DISTANCE = 0.03
HOME_TURN = 0.35
FINGERS_OPEN = 0.07  # metres between the finger joints (0.077 at the start, under 0.01 closed on nothing)


class WorldView:
    """Reads predicates off a live env; call :meth:`set_reference` when tracking starts."""

    def __init__(self, env: SimEnv):
        self._env = env
        self._ref_pos: dict[str, np.ndarray] = {}
        self._ref_up: dict[str, np.ndarray] = {}
        self._ref_rot: dict[str, np.ndarray] = {}
        self._joint_bands: dict[str, Band] | None = None  # fixture joint -> its band, on first use

    # -- helpers -----------------------------------------------------------------
    @property
    def _lib(self):
        return self._env.libero

    def _state(self, name: str):
        try:
            return self._lib.object_states_dict[name]
        except KeyError:
            known = ", ".join(sorted(self._lib.object_states_dict))
            raise KeyError(f"no object, fixture or region {name!r} in this scene (known: {known})") from None

    def position(self, name: str) -> np.ndarray:
        return np.array(self._state(name).get_geom_state()["pos"], dtype=float)

    def _rotation(self, name: str) -> np.ndarray:
        from robosuite.utils.transform_utils import quat2mat

        quat_wxyz = self._state(name).get_geom_state()["quat"]
        return quat2mat(np.roll(quat_wxyz, -1))  # robosuite expects xyzw

    def hand_pose(self) -> tuple[np.ndarray, np.ndarray]:
        """The grip site's world position (m) and 3x3 rotation now."""
        data = self._env.sim.data
        return np.array(data.get_site_xpos(GRIP_SITE)), np.array(data.get_site_xmat(GRIP_SITE)).reshape(3, 3)

    def set_reference(self) -> None:
        """Record every object's current pose as its rest pose (start height, up axis, rotation)."""
        self._ref_pos.clear()
        self._ref_up.clear()
        self._ref_rot.clear()
        for name in self._lib.objects_dict:
            self._ref_pos[name] = self.position(name)
            self._ref_rot[name] = self._rotation(name)
            # The body-frame axis that points up at rest; tilt is measured from it.
            self._ref_up[name] = self._ref_rot[name].T @ np.array([0.0, 0.0, 1.0])
        # Fixtures and region sites move too (a drawer's region slides out with it): the
        # arena's stages measure such moves from here (shift_x/y/z).
        for name in (*self._lib.fixtures_dict, *self._lib.object_sites_dict):
            if name in self._lib.object_states_dict:
                self._ref_pos[name] = self.position(name)

    def tilt(self, name: str) -> float:
        up_now = self._rotation(name) @ self._ref_up[name]
        return float(np.arccos(np.clip(up_now[2], -1.0, 1.0)))

    def hidden(self, name: str) -> bool:
        """True when object ``name`` lies in a region of a fixture part that encloses it (a
        cabinet drawer, the microwave: :attr:`Band.encloses`) and that part is shut: no camera
        could see it. The one visibility rule: the experts' memory and the ``state``
        observations both follow it, and it turns with the same band as ``closed()``."""
        lib = self._lib
        for site, part in lib.object_sites_dict.items():
            owner = getattr(part, "parent_name", None)
            if not site.endswith("_region") or owner not in lib.fixtures_dict:
                continue
            band = BANDS.get(type(lib.get_object(owner)).__name__)
            if band is not None and band.encloses and self._q_closed(site) and self._q_in(name, site):
                return True
        return False

    def observed_joint(self, joint: str) -> float:
        """What a camera shows of fixture joint ``joint``: exactly 0.0 (its closed value) while
        its part is within the shut band, else the joint's value (:meth:`Band.observed`)."""
        if self._joint_bands is None:
            lib = self._lib
            fixtures = [lib.get_object(f) for f in lib.fixtures_dict]
            self._joint_bands = {j: band_of(type(f).__name__) for f in fixtures for j in f.joints}
        try:
            band = self._joint_bands[joint]
        except KeyError:
            known = ", ".join(sorted(self._joint_bands))
            raise KeyError(f"{joint!r} is not a fixture joint of this scene (known: {known})") from None
        return band.observed(float(self._env.sim.data.get_joint_qpos(joint)))

    # -- StateView ---------------------------------------------------------------
    def query(self, name: str, args: tuple[str, ...]) -> bool | float:
        handler = getattr(self, f"_q_{name}", None)
        if handler is None:
            raise KeyError(f"the simulator view cannot answer {name}()")
        return handler(*args)

    def _q_on(self, a: str, b: str) -> bool:
        return bool(self._state(b).check_ontop(self._state(a)))

    def _q_in(self, a: str, b: str) -> bool:
        container, item = self._state(b), self._state(a)
        return bool(container.check_contact(item) and container.check_contain(item))

    def _q_open(self, f: str) -> bool:
        return bool(self._state(f).is_open())

    def _q_closed(self, f: str) -> bool:
        return all(band.shut_at(q) for band, q, _ in self._parts(f))

    def _q_turned_off(self, f: str) -> bool:
        return self._q_closed(f)  # the knob's shut band is its off band

    def _q_ajar(self, f: str) -> bool:
        return any(band.ajar_at(q, speed) for band, q, speed in self._parts(f))

    def _q_opening(self, f: str) -> float:
        return max(band.opening(q) for band, q, _ in self._parts(f))

    def _parts(self, f: str) -> list[tuple[Band, float, float]]:
        """(band, joint value, joint speed) of every joint of fixture ``f``, or of the fixture part
        region site ``f`` belongs to: the site's own joints (a drawer's region), or the whole
        fixture's when the site lists none (the microwave's heating region, behind its one door)."""
        state = self._state(f)  # an unknown name fails here, listing the known ones
        lib = self._lib
        owner = getattr(state, "parent_name", f)  # a region site belongs to its fixture
        sites = lib.object_sites_dict
        joints = (sites[f].joints if f in sites else None) or lib.get_object(owner).joints
        if not joints:
            raise KeyError(f"{f} has no joint (not a drawer, door or knob)")
        band = band_of(type(lib.get_object(owner)).__name__)
        data = self._env.sim.data
        return [(band, float(data.get_joint_qpos(j)), float(data.get_joint_qvel(j))) for j in joints]

    def _q_turned_on(self, f: str) -> bool:
        return bool(self._state(f).turn_on())

    def _q_grasped(self, o: str) -> bool:
        lib = self._lib
        return bool(lib._check_grasp(gripper=lib.robots[0].gripper, object_geoms=lib.get_object(o)))

    def _q_lifted(self, o: str) -> bool:
        return self._q_height(o) > LIFT_HEIGHT

    def _q_upright(self, o: str) -> bool:
        return self.tilt(o) < UPRIGHT_TILT

    def _q_near(self, a: str, b: str) -> bool:
        return self._q_distance(a, b) <= NEAR_DISTANCE

    def _q_tilt(self, o: str) -> float:
        return self.tilt(o)

    def _q_height(self, o: str) -> float:
        return float(self.position(o)[2] - self._ref_pos[o][2])

    def _q_distance(self, a: str, b: str) -> float:
        return float(np.linalg.norm(self.position(a)[:2] - self.position(b)[:2]))

    def _reference(self, table: dict[str, np.ndarray], a: str) -> np.ndarray:
        if a not in table:
            self._state(a)  # an unknown name fails here, listing the known ones
            raise KeyError(f"{a} has no start pose (set_reference was not called after the scene was built)")
        return table[a]

    def _shift(self, a: str, axis: int) -> float:
        return float(self.position(a)[axis] - self._reference(self._ref_pos, a)[axis])

    def _q_shift_x(self, a: str) -> float:
        return self._shift(a, 0)

    def _q_shift_y(self, a: str) -> float:
        return self._shift(a, 1)

    def _q_shift_z(self, a: str) -> float:
        return self._shift(a, 2)

    def _q_displacement(self, o: str) -> float:
        return float(np.linalg.norm(self.position(o) - self._reference(self._ref_pos, o)))

    def _q_displacement_in(self, o: str, r: str) -> float:
        own = self.position(o) - self._reference(self._ref_pos, o)
        carried = self.position(r) - self._reference(self._ref_pos, r)
        return float(np.linalg.norm(own - carried))

    def _q_rotation(self, o: str) -> float:
        return _angle(self._rotation(o) @ self._reference(self._ref_rot, o).T)

    def at_home(self) -> bool:
        """The hand back at the pose it had at reset (:attr:`SimEnv.home_pose`, the same in every
        episode of a scene), within :data:`HOME_DISTANCE` and :data:`HOME_TURN`, fingers open."""
        if self._env.home_pose is None:
            raise RuntimeError("home() before the env was reset")
        pos, rot = self.hand_pose()
        home_pos, home_rot = self._env.home_pose
        fingers = self._env.robot_state()[6:8]
        return bool(
            np.linalg.norm(pos - home_pos) <= HOME_DISTANCE
            and _angle(rot @ home_rot.T) <= HOME_TURN
            and float(fingers[0] - fingers[1]) >= FINGERS_OPEN
        )

    def _q_home(self) -> bool:
        return self.at_home()

    def _q_offset_x(self, a: str, b: str) -> float:
        return float(self.position(a)[0] - self.position(b)[0])

    def _q_offset_y(self, a: str, b: str) -> float:
        return float(self.position(a)[1] - self.position(b)[1])

    def _q_offset_z(self, a: str, b: str) -> float:
        return float(self.position(a)[2] - self.position(b)[2])


def _angle(rotation: np.ndarray) -> float:
    """The angle (rad) of a 3x3 rotation matrix, about whatever axis."""
    return float(np.arccos(np.clip((np.trace(rotation) - 1.0) / 2.0, -1.0, 1.0)))
