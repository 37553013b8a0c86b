"""The frying pan (``chefmate_8_frypan``): pick it up by its handle, set it down flat somewhere.

The pan is light (50 g), about 18 cm across and 4.5 cm deep, with a nearly
horizontal handle reaching from 13 to 26 cm off its centre (in the pan's
body frame along +x, about 4.5 cm above its origin, which sits at the
bottom). The hand points down with the fingers closing across the handle.
Carrying closes the loop on the *pan's* position, not the hand's: each
step the hand moves by the pan's remaining error, so a pan that shifted in
the grasp still lands where it should. Skills act only through actions.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from memobench.experts.control import CLOSE, DOWN, OPEN, rot_z
from memobench.experts.scene import Scene
from memobench.experts.skills import TABLE_Z, Chain, Grip, MoveTo, Rise

PAN = "chefmate_8_frypan_1"
HANDLE_GRASP = np.array([0.20, 0.0, 0.045])  # pan body frame: on the handle's centre line
APPROACH = 0.10  # come down onto the handle from this high above it
LIFT_Z = TABLE_Z + 0.15  # hand height after picking the pan up


def handle_point(scene: Scene, pan: str = PAN) -> np.ndarray:
    """World position of the grasp point on the pan's handle."""
    return scene.pos(pan) + scene.rot(pan) @ HANDLE_GRASP


def grasp_rot(scene: Scene, pan: str = PAN) -> np.ndarray:
    """Hand pointing down, fingers across the handle; of the two such yaws, the one nearer DOWN."""
    along = scene.rot(pan) @ np.array([1.0, 0.0, 0.0])
    yaw = float(np.arctan2(along[1], along[0]))  # the handle's direction; DOWN's fingers close along y
    yaw = (yaw + np.pi / 2) % np.pi - np.pi / 2  # the gripper is symmetric: wrap to [-pi/2, pi/2)
    return rot_z(yaw) @ DOWN


class _LatchedGraspRot:
    """The grasp orientation, read once (when the gripper starts closing) and then held.

    Re-reading it from the pan while lifting feeds back: a pan that yaws a little in the
    grasp turns the hand, which turns the pan further (seen: the pan swung ~40 degrees)."""

    def __init__(self, pan: str):
        self.pan = pan
        self.rot: np.ndarray | None = None

    def __call__(self, scene: Scene) -> np.ndarray:
        if self.rot is None:
            self.rot = grasp_rot(scene, self.pan)
        return self.rot


def pick_pan(pan: str = PAN) -> Chain:
    """Grasp the pan's handle from above and lift it to ``LIFT_Z``."""

    def over(scene: Scene) -> np.ndarray:
        return handle_point(scene, pan) + np.array([0.0, 0.0, APPROACH])

    def at(scene: Scene) -> np.ndarray:
        return handle_point(scene, pan)

    def rot(scene: Scene) -> np.ndarray:
        return grasp_rot(scene, pan)

    held = _LatchedGraspRot(pan)
    return Chain(
        [
            MoveTo(over, rot, OPEN, tol=0.01, name="over handle"),
            MoveTo(at, rot, OPEN, tol=0.006, max_speed=0.5, name="descend"),
            Grip(CLOSE, rot=held, name="close"),
            Rise(LIFT_Z, held, CLOSE, name="lift"),
        ],
        name=f"pick {pan}",
    )


class CarryPan(MoveTo):
    """Move the held pan so that its origin reaches ``goal`` (followed live), keeping the hand's yaw."""

    def __init__(
        self,
        goal: Callable[[Scene], np.ndarray],
        pan: str = PAN,
        *,
        tol: float = 0.01,
        max_speed: float = 1.0,
        max_steps: int = 200,
        name: str = "carry pan",
    ):
        self.goal, self.pan = goal, pan
        self.hold: np.ndarray | None = None
        super().__init__(
            self._hand_target, self._rot, CLOSE, tol=tol, max_steps=max_steps, max_speed=max_speed, name=name
        )

    def _hand_target(self, scene: Scene) -> np.ndarray:
        return scene.eef_pos() + (self.goal(scene) - scene.pos(self.pan))

    def _rot(self, scene: Scene) -> np.ndarray:
        if self.hold is None:
            self.hold = scene.eef_rot()
        return self.hold


def place_pan(
    spot: Callable[[Scene], np.ndarray],
    pan: str = PAN,
    *,
    clearance: float = 0.10,
    drop: float = 0.012,
    retreat_z: float = TABLE_Z + 0.25,
) -> Chain:
    """Carry the held pan over ``spot`` (where its origin, i.e. its bottom, should rest), lower it
    to ``drop`` above it, let go and rise to ``retreat_z``. ``clearance``: carry height over the spot."""

    def high(scene: Scene) -> np.ndarray:
        return spot(scene) + np.array([0.0, 0.0, clearance])

    def low(scene: Scene) -> np.ndarray:
        return spot(scene) + np.array([0.0, 0.0, drop])

    def up(scene: Scene) -> np.ndarray:  # straight up first: clear whatever stands near the spot
        return np.array([*scene.pos(pan)[:2], max(high(scene)[2], scene.pos(pan)[2])])

    return Chain(
        [
            CarryPan(up, pan, tol=0.015, name="raise pan"),
            CarryPan(high, pan, tol=0.015, name="carry pan"),
            CarryPan(low, pan, tol=0.006, max_speed=0.5, max_steps=120, name="lower pan"),
            Grip(OPEN, rot=None, name="release"),
            Rise(retreat_z, None, OPEN, name="retreat"),
        ],
        name="place pan",
        tolerant=True,
    )


def pan_rests_on(scene: Scene, region: str, pan: str = PAN) -> bool:
    """The pan lies on ``region`` (LIBERO's On test) and is let go of."""
    return scene.check("on", pan, region) and not scene.grasped(pan)
