"""Drawer skills for the wooden cabinet: drag a drawer open by its handle, push it shut.

Both skills close the loop on the drawer's own joint reading (measured):
every step the hand aims at where the handle is *now*, so it follows the
drawer instead of a fixed path. The handle is an unnamed box geom on the
drawer body; :func:`handle_pos` finds it by shape.

No grasp: the Panda hand is a 20 cm slab along its finger axis, so pinching a
horizontal bar (fingers closing vertically) puts the slab into the table for
the bottom drawer (handle 4.6 cm above it) or into the drawer above when
tilted. Instead the hand, pitched 30 degrees down with its fingers closed and
side by side along the bar, presses on top of the bar and drags the drawer
out by friction (the drawer slide is damped, with no friction loss), and
pushes the bar's front to close it. Skills act only through actions; they
read the simulator, never write it.
"""

from __future__ import annotations

import numpy as np

from memobench.experts.control import CLOSE, forceful, pose_action, rotation_error
from memobench.experts.scene import Scene
from memobench.experts.skills import Skill
from memobench.sim.fixture_bands import BANDS

CABINET = "wooden_cabinet_1"
LEVELS = ("top", "middle", "bottom")

OPEN_BELOW = -0.14  # LIBERO's "open" test for the wooden cabinet (q < -0.14)
OPEN_GOAL = -0.152  # pull to here: a margin past the threshold, short of the -0.16 stop
CLOSED_ABOVE = -BANDS["WoodenCabinet"].shut  # MEMOBench's "closed": within the shut band (q > -0.005)
SHUT_GOAL = -0.0025  # push until the joint reads above this (margin over CLOSED_ABOVE)
SHUT_AIM = 0.008  # aim the pushing hand this far past q = 0 (the drawer stops at the back wall)

HANDLE_SIZE = np.array([0.008, 0.008, 0.044])  # half-sizes of the handle bar (sorted)


def joint_name(level: str, cabinet: str = CABINET) -> str:
    return f"{cabinet}_{level}_level"


def region_name(level: str, cabinet: str = CABINET) -> str:
    return f"{cabinet}_{level}_region"


def drawer_q(scene: Scene, level: str, cabinet: str = CABINET) -> float:
    return scene.joint(joint_name(level, cabinet))


def is_open(scene: Scene, level: str, cabinet: str = CABINET) -> bool:
    return drawer_q(scene, level, cabinet) < OPEN_BELOW


def is_closed(scene: Scene, level: str, cabinet: str = CABINET) -> bool:
    return drawer_q(scene, level, cabinet) > CLOSED_ABOVE


def _handle_geom(scene: Scene, level: str, cabinet: str) -> int:
    model = scene.env.sim.model
    for g in scene.body_geoms(f"{cabinet}_cabinet_{level}"):
        # the collision box of the bar (a visual twin has contype 0)
        if model.geom_contype[g] and np.allclose(np.sort(model.geom_size[g]), HANDLE_SIZE, atol=0.002):
            return g
    raise KeyError(f"no handle geom on {cabinet}_cabinet_{level}")


def handle_pos(scene: Scene, level: str, cabinet: str = CABINET) -> np.ndarray:
    """World position of the centre of the drawer's handle bar."""
    return scene.geom_pos(_handle_geom(scene, level, cabinet))


def pull_axis(scene: Scene, level: str, cabinet: str = CABINET) -> np.ndarray:
    """Unit world vector the handle moves along as the drawer opens (q decreasing)."""
    sim = scene.env.sim
    jid = sim.model.joint_name2id(joint_name(level, cabinet))
    return -np.array(sim.data.xaxis[jid], dtype=float)


UP = np.array([0.0, 0.0, 1.0])
PITCH = np.radians(30.0)  # hand tilt below horizontal while working a handle


def hand_rot(scene: Scene, level: str, cabinet: str = CABINET) -> np.ndarray:
    """Grip-site orientation for working a handle: pointing into the cabinet, tilted PITCH down,
    fingers (closed) side by side along the bar.

    The Panda hand is a 20 cm slab along its finger axis, so it cannot pinch the bottom
    handle (4.6 cm above the table) with the fingers closing vertically; with the finger
    axis along the bar the slab lies nearly flat and clears the table and the handle above.
    """
    inward = -pull_axis(scene, level, cabinet)
    inward[2] = 0.0
    inward /= np.linalg.norm(inward)
    approach = np.cos(PITCH) * inward + np.sin(PITCH) * np.array([0.0, 0.0, -1.0])
    finger = np.cross(np.array([0.0, 0.0, 1.0]), inward)
    return np.column_stack([finger, np.cross(approach, finger), approach])


def drawer_centre(scene: Scene, level: str, cabinet: str = CABINET) -> np.ndarray:
    """Middle of the drawer's floor area (its region site), where dropped items rest safely."""
    return scene.pos(region_name(level, cabinet))


class _DrawerSkill(Skill):
    """Common state for the handle skills: a phase machine with per-phase step counters.

    Subclasses set ``FRONT`` and ``ABOVE`` (the approach pose relative to the handle).
    """

    FRONT = 0.06
    ABOVE = 0.05

    def __init__(self, level: str, cabinet: str = CABINET):
        super().__init__()
        self.level, self.cabinet = level, cabinet
        self.phase = "pre"
        self.phase_steps = 0
        self.anchor: np.ndarray | None = None

    def _goto(self, phase: str) -> None:
        self.phase, self.phase_steps, self.anchor = phase, 0, None

    def step(self, scene: Scene) -> np.ndarray | None:
        for _ in range(6):  # a few phase changes within one control step
            phase = self.phase
            self.phase_steps += 1
            action = self.phase_step(scene)
            if action is not None or self.finished:
                return action
            if self.phase == phase:  # no handler for this phase
                break
        return self.finish(False)

    def phase_step(self, scene: Scene) -> np.ndarray | None:
        raise NotImplementedError

    def _approach(self, scene: Scene, then: str) -> np.ndarray | None:
        """Phase "pre": line up ``FRONT`` in front of and ``ABOVE`` the handle in the working
        orientation; on arrival (or after 120 steps) switch to phase ``then`` and return None."""
        target = self._handle(scene) + pull_axis(scene, self.level, self.cabinet) * self.FRONT + UP * self.ABOVE
        aligned = np.linalg.norm(rotation_error(scene.eef_rot(), hand_rot(scene, self.level, self.cabinet))) < 0.08
        if (np.linalg.norm(target - scene.eef_pos()) < 0.015 and aligned) or self.phase_steps > 120:
            self._goto(then)
            return None
        return self._servo(scene, target, CLOSE)

    def _handle(self, scene: Scene) -> np.ndarray:
        return handle_pos(scene, self.level, self.cabinet)

    def _q(self, scene: Scene) -> float:
        return drawer_q(scene, self.level, self.cabinet)

    def _servo(self, scene: Scene, target: np.ndarray, grip: float, speed: float = 1.0) -> np.ndarray:
        return pose_action(
            scene.eef_pos(), scene.eef_rot(), target, hand_rot(scene, self.level, self.cabinet), grip, max_speed=speed
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.level}:{self.phase})"


class OpenDrawer(_DrawerSkill):
    """Press the closed fingertips on top of the handle bar and drag the drawer out by friction.

    The drawer slides on a damped joint with no friction loss, so a firm press (full
    downward action; half on the bottom bar, see ``PRESS``) drags it along until the
    joint reads past ``goal``. Then the hand lifts off. No grasp: see :func:`hand_rot`.
    """

    name = "open drawer"
    max_steps = 300

    FRONT = 0.06  # line up this far in front of the handle ...
    ABOVE = 0.05  # ... and this far above it, then move over it and press down
    OVER = 0.005  # grip site this far in front of the bar's centre when pressing
    LIFT = 0.06
    REST = 0.024  # grip site at most this high over the bar's centre: the fingertips rest on it
    # Downward action while dragging: full, except on the bottom bar. Pressed fully there,
    # the arm folds abruptly once the drawer is ~2/3 out (wrist joints swinging ~1 rad in
    # 0.3 s), slams the drawer into its stop at ~0.3 m/s and throws an item inside up to
    # 7 cm toward the back, where the hand cannot reach it under the drawer above (11 of
    # S08's 61 demo attempts, measured). At half press it drags at a steady ~0.14 m/s.
    # (Half press on the top bar changes the arm's pose for what follows: S06 seed 1,000,002
    # then stalls picking its second item.)
    PRESS = {"bottom": 0.5}

    def __init__(self, level: str, cabinet: str = CABINET, goal: float = OPEN_GOAL):
        super().__init__(level, cabinet)
        self.goal = goal
        self.tries = 0

    def phase_step(self, scene: Scene) -> np.ndarray | None:
        axis = pull_axis(scene, self.level, self.cabinet)
        handle = self._handle(scene)
        pos, q = scene.eef_pos(), self._q(scene)
        if self.phase == "pre" and (action := self._approach(scene, "over")) is not None:
            return action
        if self.phase == "over":
            target = handle + axis * self.OVER + UP * self.ABOVE
            err = target - pos
            # line up precisely over the bar: pressing on its front edge slips off
            if (np.linalg.norm(err[:2]) < 0.003 and abs(err[2]) < 0.01) or self.phase_steps > 60:
                self._goto("press")
            else:
                return self._servo(scene, target, CLOSE, speed=0.6)
        if self.phase == "press":
            target = handle + axis * self.OVER
            # the fingers rest on the bar when the hand stops going down
            if self.phase_steps > 6 and (pos[2] - handle[2] < self.REST or self.phase_steps > 40):
                self._goto("drag")
            else:
                return self._servo(scene, target, CLOSE, speed=0.4)
        if self.phase == "drag":
            if q < self.goal:
                self._goto("lift")
            elif (
                self.phase_steps > 100 or pos[2] - handle[2] > self.REST + 0.015 or np.dot(pos - handle, axis) > 0.035
            ):  # slipped off the bar: try again
                self.tries += 1
                self._goto("lift" if self.tries > 2 else "retry")
            else:
                action = self._servo(scene, pos, CLOSE)
                action[:3] = axis  # full pull: a weaker one stalls the top drawer near q = -0.13
                action[2] = -self.PRESS.get(self.level, 1.0)  # friction on the bar does the pulling
                return forceful(action)
        if self.phase == "retry":
            target = handle + axis * self.FRONT + UP * self.ABOVE
            if np.linalg.norm(target - pos) < 0.015 or self.phase_steps > 60:
                self._goto("over")
            else:
                return self._servo(scene, target, CLOSE)
        if self.phase == "lift":
            if self.anchor is None:
                self.anchor = pos + UP * self.LIFT + axis * 0.02
            if np.linalg.norm(self.anchor - pos) < 0.015 or self.phase_steps > 40:
                return self.finish(self._q(scene) < OPEN_BELOW)
            return self._servo(scene, self.anchor, CLOSE)
        return None  # the phase changed: dispatch again


class CloseDrawer(_DrawerSkill):
    """Push the drawer shut by the front of its handle; push again if it bounces back."""

    name = "close drawer"
    max_steps = 400

    FRONT = 0.06  # come down this far in front of the handle
    ABOVE = 0.03
    STANDOFF = 0.021  # grip site this far in front of the bar's centre: the fingertips touch it
    BACK = 0.06

    def __init__(self, level: str, cabinet: str = CABINET, speed: float = 1.0):
        """``speed`` < 1 pushes gently, so that an item inside does not slide to the back."""
        super().__init__(level, cabinet)
        self.speed = speed

    def phase_step(self, scene: Scene) -> np.ndarray | None:
        axis = pull_axis(scene, self.level, self.cabinet)
        handle = self._handle(scene)
        pos, q = scene.eef_pos(), self._q(scene)
        if self.phase == "pre" and (action := self._approach(scene, "align")) is not None:
            return action
        if self.phase == "align":
            target = handle + axis * self.FRONT
            if np.linalg.norm(target - pos) < 0.01 or self.phase_steps > 40:
                self._goto("push")
            else:
                return self._servo(scene, target, CLOSE, speed=0.6)
        if self.phase == "push":
            # where the handle is when the drawer is shut, and a little past it
            target = handle + axis * (q - SHUT_AIM + self.STANDOFF)
            if q > SHUT_GOAL:
                self._goto("settle")
            elif self.phase_steps > 100 / self.speed:
                self._goto("back")
            else:
                return self._servo(scene, target, CLOSE, speed=self.speed)
        if self.phase == "settle":
            if self.anchor is None:
                self.anchor = pos
            if self.phase_steps > 6:
                self._goto("back")
            else:
                return self._servo(scene, self.anchor, CLOSE)
        if self.phase == "back":
            if self.anchor is None:
                self.anchor = pos + axis * self.BACK
            if q <= SHUT_GOAL and self.steps < self.max_steps - 100:
                self._goto("align")  # bounced open while backing away: push again
                return self._servo(scene, handle + axis * self.FRONT, CLOSE)
            if np.linalg.norm(self.anchor - pos) < 0.02 or self.phase_steps > 40:
                return self.finish(q > CLOSED_ABOVE)
            return self._servo(scene, self.anchor, CLOSE)
        return None  # the phase changed: dispatch again


# The Panda hand (palm) spans about [-0.100, +0.104] m along its finger axis (convex hull,
# measured), [-0.097, 0.097] at its lower ~1.5 cm: pointing down with the fingers across
# the drawer, it dips between the side walls (inner width ~0.205 m) only near one y.
PALM_SPAN = (-0.099, 0.101)


def side_walls(scene: Scene, level: str, cabinet: str = CABINET) -> tuple[float, float]:
    """Inner faces of the drawer's two side walls, along the finger axis of DOWN (world y here)."""
    model = scene.env.sim.model
    data = scene.env.sim.data
    walls = []
    for g in scene.body_geoms(f"{cabinet}_cabinet_{level}"):
        size = np.sort(model.geom_size[g])
        if model.geom_contype[g] and size[0] < 0.004 and 0.07 < size[2] < 0.09 and size[1] < 0.04:
            half = np.abs(data.geom_xmat[g].reshape(3, 3)) @ model.geom_size[g]  # world half-extents
            walls.append((float(data.geom_xpos[g][1]), float(half[1])))
    if len(walls) != 2:
        raise KeyError(f"expected two side walls on {cabinet}_cabinet_{level}, found {len(walls)}")
    (y0, h0), (y1, h1) = sorted(walls)
    return y0 + h0, y1 - h1


def palm_y_in(scene: Scene, level: str, cabinet: str = CABINET) -> float:
    """The grip-site y that centres the palm between the drawer's side walls."""
    lo, hi = side_walls(scene, level, cabinet)
    return 0.5 * ((lo - PALM_SPAN[0]) + (hi - PALM_SPAN[1]))
