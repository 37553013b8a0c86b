"""The wooden two-layer shelf: slide a held frying pan into its upper compartment.

The shelf (``wooden_two_layer_shelf``, a fixture) is an open box 35 cm wide
and 19 cm deep with a middle board 7.1 cm over the table and a top board
21 cm over it; its open side faces the body frame's -y. The upper
compartment (the fixture's ``top_region``) leaves 13.7 cm between the two
boards: too low for the hand to reach in from above, so the pan goes in
sideways, carried by its handle with the handle trailing out of the open
side and the hand staying in front of the shelf. The pan (19.4 cm across)
is a little deeper than the board (17.8 cm): it rests against the back
wall, overhanging the front edge by ~2 cm. All numbers are from the asset
(wooden_two_layer_shelf.xml) and were checked in simulation.
"""

from __future__ import annotations

import numpy as np

from memobench.experts.control import OPEN, pose_action
from memobench.experts.frypan import PAN, CarryPan
from memobench.experts.scene import Scene
from memobench.experts.skills import TABLE_Z, Chain, Grip, Rise, Skill

SHELF = "wooden_two_layer_shelf_1"
# Shelf body frame: where the pan's origin (its bottom centre) rests on the middle board,
# against the back wall (inner face at y ~ +0.107; pan radius ~0.097).
REST_LOCAL = np.array([0.005, 0.008, 0.0709])
OUT_LOCAL = np.array([0.0, -1.0, 0.0])  # out of the open side
ENTRY = 0.24  # m: the pan lines up this far in front of its resting spot before sliding in
SLIDE_Z = 0.015  # m: the pan's bottom this far over the board while sliding


def rest_spot(scene: Scene, shelf: str = SHELF) -> np.ndarray:
    """World position for the pan's origin resting in the upper compartment."""
    return scene.pos(shelf) + scene.rot(shelf) @ REST_LOCAL


def out_dir(scene: Scene, shelf: str = SHELF) -> np.ndarray:
    """Horizontal world unit vector pointing out of the shelf's open side."""
    v = scene.rot(shelf) @ OUT_LOCAL
    v[2] = 0.0
    return v / np.linalg.norm(v)


class Withdraw(Skill):
    """Move the open hand straight out of the shelf by ``distance``, at its current height."""

    def __init__(self, distance: float = 0.10, shelf: str = SHELF, max_steps: int = 60):
        super().__init__()
        self.distance, self.shelf, self.max_steps = distance, shelf, max_steps
        self.name = "withdraw"
        self.goal: np.ndarray | None = None

    def step(self, scene: Scene) -> np.ndarray | None:
        pos = scene.eef_pos()
        if self.goal is None:
            self.goal = pos + out_dir(scene, self.shelf) * self.distance
        if np.linalg.norm(self.goal - pos) < 0.01:
            return self.finish(True)
        return pose_action(pos, scene.eef_rot(), self.goal, None, OPEN)


def shelve_pan(pan: str = PAN, shelf: str = SHELF, *, retreat_z: float = TABLE_Z + 0.30) -> Chain:
    """Carry the held pan in front of the shelf's upper compartment, slide it in, set it down, let go,
    back out and rise to ``retreat_z``."""

    def slide_height(scene: Scene) -> np.ndarray:
        return rest_spot(scene, shelf) + np.array([0.0, 0.0, SLIDE_Z])

    def entry(scene: Scene) -> np.ndarray:
        return slide_height(scene) + out_dir(scene, shelf) * ENTRY

    def up(scene: Scene) -> np.ndarray:  # first straight up to the sliding height
        return np.array([*scene.pos(pan)[:2], entry(scene)[2]])

    def down(scene: Scene) -> np.ndarray:
        return rest_spot(scene, shelf) + np.array([0.0, 0.0, 0.006])

    return Chain(
        [
            CarryPan(up, pan, tol=0.015, name="raise pan"),
            CarryPan(entry, pan, tol=0.01, name="line up"),
            CarryPan(slide_height, pan, tol=0.008, max_speed=0.5, name="slide in"),
            CarryPan(down, pan, tol=0.006, max_speed=0.3, max_steps=60, name="set down"),
            Grip(OPEN, rot=None, name="release"),
            Withdraw(0.10, shelf),
            Rise(retreat_z, None, OPEN, name="retreat"),
        ],
        name="shelve pan",
        tolerant=True,
    )


def pan_shelved(scene: Scene, shelf: str = SHELF, pan: str = PAN) -> bool:
    """The pan lies in the shelf's upper compartment (LIBERO's In test) and is let go of."""
    return scene.check("in", pan, f"{shelf}_top_region") and not scene.grasped(pan)
