"""Microwave skills: pull the door open by its handle, swing it shut again.

The door turns about a vertical hinge (joint ``<microwave>_microjoint``,
range [-2.094, 0], q < 0 opening). Its handle is a vertical capsule ~3 cm in
front of the door panel, ~0.24 m from the hinge. Both skills grasp that bar
near its top with the hand pointing down (fingers closing along the door,
across the bar) and close the loop on the hinge reading: every step the hand
aims at where the handle *will be* a little further along (the joint value
plus a lead), its wrist turned about the vertical with the door, so it
follows the door's arc instead of a fixed path (measured). At a shut door
facing the robot that grasp pose is the start pose (``control.DOWN``), so the
arm only turns its wrist; a hand pointing horizontally into the door ran
wrist joint 5 into its limit a third of the way open (measured).

Closing while holding the bar stalls a few hundredths of a radian short of
shut, so :class:`CloseMicrowave` lets go at -0.06 rad and presses the door
shut with the closed fingers on the bar, then backs away toward the robot
and up (a hand leaving low along the door dragged it ajar). Geometry is read
live from the model (hinge anchor, handle and panel geoms), so the skills
follow the fixture wherever the layout puts it. Skills act only through
actions; they read the simulator, never write it.
"""

from __future__ import annotations

import numpy as np

from memobench.experts.control import CLOSE, OPEN, pose_action, rot_z, rotation_error
from memobench.experts.scene import Scene
from memobench.experts.skills import Skill

MICROWAVE = "microwave_1"
OPEN_BELOW = -1.3  # LIBERO's "open" test for the microwave (q < -1.3)
CLOSED_ABOVE = -0.005  # LIBERO's "closed" test (q > -0.005)
OPEN_GOAL = -1.40  # pull to here: a margin past OPEN_BELOW, well short of the -2.094 stop
SHUT_GOAL = -0.002  # press until the hinge reads above this (margin over CLOSED_ABOVE)
HANDLE_SIZE = np.array([0.01, 0.065])  # capsule radius, half-length of the handle bar
UP = np.array([0.0, 0.0, 1.0])


def joint_name(microwave: str = MICROWAVE) -> str:
    return f"{microwave}_microjoint"


def door_q(scene: Scene, microwave: str = MICROWAVE) -> float:
    return scene.joint(joint_name(microwave))


def is_open(scene: Scene, microwave: str = MICROWAVE) -> bool:
    return door_q(scene, microwave) < OPEN_BELOW


def is_closed(scene: Scene, microwave: str = MICROWAVE) -> bool:
    return door_q(scene, microwave) > CLOSED_ABOVE


def hinge(scene: Scene, microwave: str = MICROWAVE) -> np.ndarray:
    """A point on the hinge axis (world), at the door's mid-height."""
    sim = scene.env.sim
    return np.array(sim.data.xanchor[sim.model.joint_name2id(joint_name(microwave))], dtype=float)


def _door_geoms(scene: Scene, microwave: str) -> tuple[int, int]:
    """(handle bar capsule, door panel box): the collision geoms of the door body."""
    model = scene.env.sim.model
    handle = panel = None
    for g in scene.body_geoms(f"{microwave}_microdoorroot"):
        if not model.geom_conaffinity[g]:
            continue  # visual twin
        size = model.geom_size[g]
        if model.geom_type[g] == 3 and np.allclose(size[:2], HANDLE_SIZE, atol=0.003):
            handle = g
        elif model.geom_type[g] == 6 and np.max(size) > 0.1:
            panel = g
    if handle is None or panel is None:
        raise KeyError(f"no handle bar or door panel geom on {microwave}_microdoorroot")
    return handle, panel


def handle_pos(scene: Scene, microwave: str = MICROWAVE) -> np.ndarray:
    """World position of the middle of the handle bar."""
    return scene.geom_pos(_door_geoms(scene, microwave)[0])


def door_normal(scene: Scene, microwave: str = MICROWAVE) -> np.ndarray:
    """Horizontal unit normal of the door panel, pointing out of the door (to the handle side)."""
    handle, panel = _door_geoms(scene, microwave)
    model, data = scene.env.sim.model, scene.env.sim.data
    rot = data.geom_xmat[panel].reshape(3, 3)
    normal = np.array(rot[:, int(np.argmin(model.geom_size[panel]))], dtype=float)  # the thin axis
    normal[2] = 0.0
    normal /= np.linalg.norm(normal)
    return normal if np.dot(data.geom_xpos[handle] - data.geom_xpos[panel], normal) > 0 else -normal


def handle_at(scene: Scene, q: float, microwave: str = MICROWAVE) -> np.ndarray:
    """Where the handle bar would be with the door at hinge value ``q`` (rotating it about the hinge)."""
    pivot = hinge(scene, microwave)
    return pivot + rot_z(q - door_q(scene, microwave)) @ (handle_pos(scene, microwave) - pivot)


def hand_rot(normal: np.ndarray) -> np.ndarray:
    """Grip-site orientation over a door with outward ``normal``: pointing down, fingers closing
    along the door (across the vertical bar). At a shut door facing -x this is ``control.DOWN``,
    the start pose, so following the door is a turn of the wrist about the vertical only."""
    finger = np.cross(UP, -np.asarray(normal, dtype=float))
    finger /= np.linalg.norm(finger)
    approach = -UP
    return np.column_stack([finger, np.cross(approach, finger), approach])


def hand_rot_at(scene: Scene, q: float, microwave: str = MICROWAVE) -> np.ndarray:
    """:func:`hand_rot` for the door turned to hinge value ``q``."""
    return hand_rot(rot_z(q - door_q(scene, microwave)) @ door_normal(scene, microwave))


class _DoorSkill(Skill):
    """A phase machine on the door: phases are methods ``_<phase>`` returning an action or None
    (None: the phase changed or the skill finished; dispatch again within the same step)."""

    GRASP_Z = 0.045  # grip site this far above the bar's middle when holding it (its top is +0.075)
    HOVER = 0.09  # line up this far above the grasp point, then come straight down

    def __init__(self, microwave: str = MICROWAVE):
        super().__init__()
        self.microwave = microwave
        self.phase, self.phase_steps = "line_up", 0
        self.anchor: np.ndarray | None = None
        self.tries = 0

    def _goto(self, phase: str) -> None:
        self.phase, self.phase_steps, self.anchor = phase, 0, None

    def step(self, scene: Scene) -> np.ndarray | None:
        for _ in range(6):
            phase = self.phase
            self.phase_steps += 1
            action = getattr(self, f"_{phase}")(scene)
            if action is not None or self.finished:
                return action
            if self.phase == phase:
                break
        return self.finish(False)

    # -- shared phases -------------------------------------------------------------------
    def _q(self, scene: Scene) -> float:
        return door_q(scene, self.microwave)

    def _servo(self, scene: Scene, target: np.ndarray, rot: np.ndarray, grip: float, speed: float = 1.0) -> np.ndarray:
        return pose_action(scene.eef_pos(), scene.eef_rot(), target, rot, grip, max_speed=speed)

    def _grasp_point(self, scene: Scene) -> np.ndarray:
        return handle_pos(scene, self.microwave) + UP * self.GRASP_Z

    def _line_up(self, scene: Scene) -> np.ndarray | None:
        target, rot = self._grasp_point(scene) + UP * self.HOVER, hand_rot(door_normal(scene, self.microwave))
        aligned = np.linalg.norm(rotation_error(scene.eef_rot(), rot)) < 0.08
        if (np.linalg.norm(target - scene.eef_pos()) < 0.012 and aligned) or self.phase_steps > 150:
            self._goto("reach")
            return None
        return self._servo(scene, target, rot, OPEN)

    def _reach(self, scene: Scene) -> np.ndarray | None:
        target = self._grasp_point(scene)
        if np.linalg.norm(target - scene.eef_pos()) < 0.006 or self.phase_steps > 60:
            self._goto("grip")
            return None
        return self._servo(scene, target, hand_rot(door_normal(scene, self.microwave)), OPEN, speed=0.5)

    def _grip(self, scene: Scene) -> np.ndarray | None:
        if self.anchor is None:
            self.anchor = scene.eef_pos()
        if self.phase_steps > 15:
            self._goto(self.after_grip)
            return None
        return self._servo(scene, self.anchor, hand_rot(door_normal(scene, self.microwave)), CLOSE)

    def _slipped(self, scene: Scene) -> bool:
        return bool(np.linalg.norm(self._grasp_point(scene) - scene.eef_pos()) > 0.03)

    after_grip = "turn"  # the phase that follows the grasp

    def _back_off(self, scene: Scene, grip: float) -> np.ndarray | None:
        """Straight up, ``HOVER`` from where the hand is; None when there."""
        if self.anchor is None:
            self.anchor = scene.eef_pos() + UP * self.HOVER
        if np.linalg.norm(self.anchor - scene.eef_pos()) < 0.015 or self.phase_steps > 50:
            return None
        return self._servo(scene, self.anchor, hand_rot(door_normal(scene, self.microwave)), grip)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.phase})"


class OpenMicrowave(_DoorSkill):
    """Grasp the handle bar and pull the door open along its arc until the hinge reads ``goal``;
    let go and back away. Regrasps (up to twice) if the bar slips out of the hand."""

    name = "open microwave"
    max_steps = 450
    LEAD = 0.15  # rad the hand aims ahead of the door
    SPEED = 0.6

    def __init__(self, microwave: str = MICROWAVE, goal: float = OPEN_GOAL):
        super().__init__(microwave)
        self.goal = goal

    def _turn(self, scene: Scene) -> np.ndarray | None:
        q = self._q(scene)
        if q < self.goal:
            self._goto("release")
            return None
        if self._slipped(scene) or self.phase_steps > 250:
            self.tries += 1
            self._goto("release" if self.tries > 2 else "regrasp")
            return None
        aim = max(q - self.LEAD, -2.0)
        return self._servo(
            scene,
            handle_at(scene, aim, self.microwave) + UP * self.GRASP_Z,
            hand_rot_at(scene, aim, self.microwave),
            CLOSE,
            speed=self.SPEED,
        )

    def _regrasp(self, scene: Scene) -> np.ndarray | None:
        action = self._back_off(scene, OPEN)
        if action is None:
            self._goto("line_up")
        return action

    def _release(self, scene: Scene) -> np.ndarray | None:
        if self.anchor is None:
            self.anchor = scene.eef_pos()
        if self.phase_steps > 12:
            self._goto("leave")
            return None
        return self._servo(scene, self.anchor, hand_rot(door_normal(scene, self.microwave)), OPEN)

    def _leave(self, scene: Scene) -> np.ndarray | None:
        action = self._back_off(scene, OPEN)
        if action is None:
            return self.finish(is_open(scene, self.microwave))
        return action


class CloseMicrowave(_DoorSkill):
    """Grasp the handle bar and swing the door back until it stalls near shut, let go, then press
    the door shut with the closed fingertips on the bar; press again if it springs back."""

    name = "close microwave"
    max_steps = 600
    LEAD = 0.15
    SPEED = 0.6
    NEAR_SHUT = -0.06  # rad: let go of the bar here (closing while holding stalls at ~-0.01..-0.05)
    PRESS = 0.03  # m: aim the pressing fingers this far into the door past the shut bar
    FRONT = 0.05  # m: come down this far in front of the shut bar before pressing
    RETREAT = 0.10  # m: finally back away this far from the door and up

    def _turn(self, scene: Scene) -> np.ndarray | None:
        q = self._q(scene)
        if q > self.NEAR_SHUT or self.phase_steps > 250:
            self._goto("release")
            return None
        if self._slipped(scene):
            self._goto("release")  # the press finishes the swing from wherever the door is
            return None
        aim = min(q + self.LEAD, 0.0)
        return self._servo(
            scene,
            handle_at(scene, aim, self.microwave) + UP * self.GRASP_Z,
            hand_rot_at(scene, aim, self.microwave),
            CLOSE,
            speed=self.SPEED,
        )

    def _release(self, scene: Scene) -> np.ndarray | None:
        if self.anchor is None:
            self.anchor = scene.eef_pos()
        if self.phase_steps > 12:
            self._goto("rise")
            return None
        return self._servo(scene, self.anchor, hand_rot_at(scene, 0.0, self.microwave), OPEN)

    def _rise(self, scene: Scene) -> np.ndarray | None:
        action = self._back_off(scene, CLOSE)
        if action is None:
            self._goto("clear")
        return action

    def _shut_normal(self, scene: Scene) -> np.ndarray:
        return rot_z(-self._q(scene)) @ door_normal(scene, self.microwave)

    def _before_bar(self, scene: Scene, height: float) -> np.ndarray:
        """``FRONT`` in front of where the bar is when the door is shut, ``height`` above its middle."""
        return handle_at(scene, 0.0, self.microwave) + self._shut_normal(scene) * self.FRONT + UP * height

    def _clear(self, scene: Scene) -> np.ndarray | None:
        """Over a point in front of the shut bar's place, fingers closed."""
        target = self._before_bar(scene, self.GRASP_Z + self.HOVER)
        if np.linalg.norm(target - scene.eef_pos()) < 0.012 or self.phase_steps > 80:
            self._goto("descend")
            return None
        return self._servo(scene, target, hand_rot_at(scene, 0.0, self.microwave), CLOSE)

    def _descend(self, scene: Scene) -> np.ndarray | None:
        target = self._before_bar(scene, self.GRASP_Z)
        if np.linalg.norm(target - scene.eef_pos()) < 0.008 or self.phase_steps > 60:
            self._goto("press")
            return None
        return self._servo(scene, target, hand_rot_at(scene, 0.0, self.microwave), CLOSE, speed=0.6)

    def _press(self, scene: Scene) -> np.ndarray | None:
        q = self._q(scene)
        if q > SHUT_GOAL:
            self._goto("settle")
            return None
        if self.phase_steps > 80:
            self.tries += 1
            self._goto("settle" if self.tries > 2 else "rise")
            return None
        target = self._before_bar(scene, self.GRASP_Z) - self._shut_normal(scene) * (self.FRONT + self.PRESS)
        return self._servo(scene, target, hand_rot_at(scene, 0.0, self.microwave), CLOSE, speed=0.6)

    def _settle(self, scene: Scene) -> np.ndarray | None:
        if self.anchor is None:
            self.anchor = scene.eef_pos()
        if self.phase_steps > 6:
            self._goto("leave")
            return None
        return self._servo(scene, self.anchor, hand_rot_at(scene, 0.0, self.microwave), CLOSE)

    def _leave(self, scene: Scene) -> np.ndarray | None:
        if self._q(scene) <= SHUT_GOAL and self.tries < 3 and self.steps < self.max_steps - 120:
            self.tries += 1
            self._goto("rise")  # sprang open while backing away: press again
            return None
        # back out toward the robot and up, clear of the bar: the next skill's path is then
        # free of it (a hand going straight for the table from here caught the bar's top)
        if self.anchor is None:
            self.anchor = scene.eef_pos() + self._shut_normal(scene) * self.RETREAT + UP * self.RETREAT
        if np.linalg.norm(self.anchor - scene.eef_pos()) < 0.015 or self.phase_steps > 50:
            return self.finish(is_closed(scene, self.microwave))
        return self._servo(scene, self.anchor, hand_rot_at(scene, 0.0, self.microwave), CLOSE)
