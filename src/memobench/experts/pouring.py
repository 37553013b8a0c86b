"""Pouring skills: tilt a held bottle over a target and back, set it down upright.

The bottle is grasped from above with :func:`~memobench.experts.skills.pick`
(hand pointing down, fingers closing along world y). A pour turns the hand
about world x, the axis across the fingers (the pads hold the bottle firmly
against that turn; about y it would pivot between them), so the bottle's top
tips toward -y: the hand waits on the +y side of the target. A bottle held
another way pours with :class:`Pour`'s ``hand`` and ``axis`` (T10's side
grasp, :mod:`~memobench.experts.side_grasp`, rolls about its approach axis).

Every phase is closed on the bottle's own tilt (the angle between its up
axis and world z, as the pour counter measures it), not on the hand's.

Between pours the bottle is held at a small *carry tilt* (``CARRY_TILT``,
~5 degrees, upright to the eye and to ``upright()``) and only stood fully
upright at the set-down spot, away from the target. It was needed while the
pour counter re-based itself on the step a pour completed (drifting ~0.09 rad
per pour, which made a phantom third pour possible); the counter now keeps
its baseline there, and the carry tilt stays as a margin: the bottle never
swings more than ~0.10 rad over the bowl between pours.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from memobench.experts.control import (
    CLOSE,
    DOWN,
    OPEN,
    pose_action,
    rot_axis,
)
from memobench.experts.scene import Scene
from memobench.experts.skills import TABLE_Z, Chain, Grip, MoveTo, Rise, Skill

POUR_TILT = 0.6  # rad, how far the bottle's up axis leaves vertical in a pour
CARRY_TILT = 0.09  # rad, the bottle's tilt while held between pours (see module doc)
TILT_AXIS = np.array([1.0, 0.0, 0.0])  # world axis the hand turns about; +angle tips the top toward -y
POUR_OFFSET = np.array([0.0, 0.045, 0.18])  # hand relative to the target's origin while pouring
ALIGN_TOL = 0.03  # m, hand to pour spot before tipping


def up_axis(scene: Scene, name: str) -> np.ndarray:
    """The object's body axis that points (most nearly) up: its up axis while tilted < 45 degrees."""
    rot = scene.rot(name)
    i = int(np.argmax(np.abs(rot[2])))
    axis = rot[:, i]
    return axis if axis[2] >= 0 else -axis


def tilt(scene: Scene, name: str) -> float:
    """Angle (rad) between the object's up axis and world z."""
    return float(np.arccos(np.clip(up_axis(scene, name)[2], -1.0, 1.0)))


def hand_rot(angle: float, hand: np.ndarray = DOWN, axis: np.ndarray = TILT_AXIS) -> np.ndarray:
    """The grip-site orientation ``hand`` (default: pointing down) turned ``angle`` about the world ``axis``."""
    return rot_axis(axis, angle) @ hand


def servo(
    scene: Scene,
    target_pos: np.ndarray,
    target_rot: np.ndarray,
    grip: float,
    *,
    rot_gain: float = 1.0,
    max_speed: float = 1.0,
) -> np.ndarray:
    """:func:`control.pose_action` from the scene's current hand pose."""
    return pose_action(
        scene.eef_pos(), scene.eef_rot(), target_pos, target_rot, grip, max_speed=max_speed, rot_gain=rot_gain
    )


def pour_spot(target: str, offset: np.ndarray = POUR_OFFSET) -> Callable[[Scene], np.ndarray]:
    """Where the hand waits to pour over ``target`` (followed live)."""
    return lambda scene: scene.pos(target) + offset


class Pour(Skill):
    """With ``obj`` held near ``target``: tilt it ``angle`` rad, hold, and bring it back to the carry tilt.

    Phases: ``align`` (hand within :data:`ALIGN_TOL` of the pour spot,
    bottle near the carry tilt), ``tip`` (turn fast until the bottle's tilt
    reaches ``angle``), ``hold`` (``hold`` steps), ``back`` (turn back until
    the bottle is at or below the carry tilt). Finishes successfully at the
    end of ``back``; fails if the bottle leaves the hand. One pour takes ~17
    steps once aligned, so a pour right after another completes ~19 steps
    after the previous one (inside the 30-step extra-pour window).
    """

    name = "pour"

    def __init__(
        self,
        obj: str,
        target: str,
        *,
        angle: float = POUR_TILT,
        hold: int = 3,
        carry: float = CARRY_TILT,
        max_steps: int = 200,
        offset: np.ndarray = POUR_OFFSET,
        hand: np.ndarray = DOWN,
        axis: np.ndarray = TILT_AXIS,
    ):
        super().__init__()
        self.obj, self.target, self.angle, self.hold, self.carry = obj, target, angle, hold, carry
        self.max_steps = max_steps
        self.offset = np.asarray(offset, dtype=float)  # hand relative to the target (see pour_spot)
        # The hand's untilted orientation and the world axis it turns about to pour: by default
        # picked from above (DOWN) and turned about TILT_AXIS (see the module doc).
        self.hand, self.axis = hand, axis
        self.phase = "align"
        self.held = 0
        self.name = f"pour {obj} over {target}"

    def holding(self, scene: Scene) -> bool:
        """Whether the bottle is still in the hand (here: both finger pads touch it)."""
        return scene.grasped(self.obj)

    def carry_rot(self) -> np.ndarray:
        """The hand's orientation while aligning and turning back: turned by the carry tilt."""
        return hand_rot(self.carry, self.hand, self.axis)

    def step(self, scene: Scene) -> np.ndarray | None:
        if not self.holding(scene):
            return self.finish(False)
        spot = pour_spot(self.target, self.offset)(scene)
        bottle = tilt(scene, self.obj)
        if self.phase == "align":
            # near enough: the servo keeps pulling the hand to the spot while tipping, and a
            # pour right after another starts at once (the extra-pour window is 30 steps)
            if np.linalg.norm(spot - scene.eef_pos()) < ALIGN_TOL and bottle < self.carry + 0.04:
                self.phase = "tip"
            else:
                return servo(scene, spot, self.carry_rot(), CLOSE)
        if self.phase == "tip":
            if bottle >= self.angle - 0.02:
                self.phase = "hold"
            else:
                return servo(scene, spot, hand_rot(self.angle + 0.15, self.hand, self.axis), CLOSE, rot_gain=3.0)
        if self.phase == "hold":
            if self.held >= self.hold:
                self.phase = "back"
            else:
                self.held += 1
                return servo(scene, spot, hand_rot(self.angle, self.hand, self.axis), CLOSE, rot_gain=2.0)
        # back: done once at or below the carry tilt (a pour is counted 0.10 rad from its baseline)
        if bottle < self.carry + 0.01:
            return self.finish(True)
        return servo(scene, spot, self.carry_rot(), CLOSE, rot_gain=3.0)


def rest_height(scene: Scene, name: str) -> float:
    """Height of the object's origin above its base, along its up axis (from its box collision geoms).

    Measured along :func:`up_axis`, so it does not depend on how the object
    is held (the tomato sauce: 0.038 m, half its 7.6 cm).
    """
    model, data = scene.env.sim.model, scene.env.sim.data
    corners = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).T.reshape(-1, 3)
    origin, up = scene.pos(name), up_axis(scene, name)
    low = np.inf
    for g in scene.body_geoms(f"{name}_main"):
        if model.geom_contype[g] == 0 and model.geom_conaffinity[g] == 0:
            continue  # visual only
        rot, size = data.geom_xmat[g].reshape(3, 3), model.geom_size[g]
        points = data.geom_xpos[g] + (corners * size) @ rot.T
        low = min(low, float(np.min((points - origin) @ up)))
    return -low


def steered(obj: str, target: str) -> Callable[[Scene], np.ndarray]:
    """The point under which the hand goes so the held ``obj``'s origin comes over ``target``'s
    origin: steered by the object itself (hand minus object, read live), not by where it sits
    in the hand. A spot for :func:`set_down` (and the side grasp's set-down)."""

    def spot(scene: Scene) -> np.ndarray:
        return scene.pos(target) + (scene.eef_pos() - scene.pos(obj)) * np.array([1.0, 1.0, 0.0])

    return spot


def set_down(
    obj: str,
    spot: Callable[[Scene], np.ndarray],
    *,
    grasp_height: float,
    half_height: float,
    carry_height: float = 0.15,
    surface: Callable[[Scene], float] | None = None,
) -> Chain:
    """Carry the held ``obj`` over ``spot``, stand it upright there, release, rise.

    ``spot`` gives the point under the object's origin (its z is ignored), on the
    table or on ``surface`` (the height of the top it stands on, when not the table's).
    ``grasp_height`` is the grip site's height above the object's
    origin when it was picked, ``half_height`` the origin's height above the
    object's base (:func:`rest_height`): the hand stops with the base ~5 mm
    above the top and lets go. The bottle is carried at the carry tilt and
    only stood fully upright over the spot (see the module doc).
    """

    def over(scene: Scene) -> np.ndarray:
        p = spot(scene)
        return np.array([p[0], p[1], TABLE_Z + carry_height])

    def down(scene: Scene) -> np.ndarray:
        p = spot(scene)
        top = TABLE_Z if surface is None else surface(scene)
        return np.array([p[0], p[1], top + half_height + grasp_height + 0.005])

    parts: list[Skill] = [
        MoveTo(over, hand_rot(CARRY_TILT), CLOSE, tol=0.012, max_steps=150, name="carry"),
        MoveTo(over, DOWN, CLOSE, tol=0.012, max_steps=60, name="upright"),
        MoveTo(down, DOWN, CLOSE, tol=0.006, max_speed=0.5, max_steps=120, name="lower"),
        Grip(OPEN, steps=12, name="release"),
        Rise(TABLE_Z + 0.2, DOWN, OPEN, name="retreat"),
    ]
    return Chain(parts, name=f"set down {obj}")
