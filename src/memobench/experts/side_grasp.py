"""Side grasp: hold a tall bottle upright by its body, the hand level, fingers closing horizontally.

Picked from above by its neck, a bottle hangs far under the fingers and
turns and slides in them (T10's wine bottle: 7 cm between the grip and its
centre of mass). From the side, the pads close on the body near the centre
of mass. The hand points along a horizontal direction :func:`approach`
(``yaw`` rad from world +x); a pour is then a roll of the wrist about that
direction, the axis the pads hold firmly (``Pour(..., hand=side_rot(yaw),
axis=approach(yaw))``); about the finger axis the bottle would pivot
between the pads. Turning the hand about the vertical turns the held bottle
about its own axis, so a plan may grasp at one yaw and pour at another.

Straight ahead (+x, yaw 0) is out of reach at table height: the wrist runs
into its joint limits (joint 6 at 3.75, or joint 7 at 2.9). Turned +30 to
+90 degrees toward +y the OSC reaches the grasp, the pour rolls and the
release poses within 1 cm and 0.04 rad (measured on a T10 layout).

The hand comes down level over the bottle, which passes between the open
fingers and 1.5 cm in front of the palm, closes and lifts. The hand is a
20 cm slab and its open fingers reach 6 cm to either side: next to the
bottle it touches whatever stands within reach at its height, so the plan
picks the yaw that keeps it clearest of the neighbours (:func:`clearest_yaw`).
It sets the bottle down upright, letting go over the support
(:func:`side_set_down`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from memobench.experts.control import CLOSE, DOWN, OPEN, rot_axis
from memobench.experts.pouring import CARRY_TILT, hand_rot
from memobench.experts.scene import Scene
from memobench.experts.skills import TABLE_Z, Chain, Grip, MoveTo, Rise, Skill

UP = np.array([0.0, 0.0, 1.0])
# m, the hand lines up this far above its grasp pose, then comes straight down. At 0.12 the hand, turning
# level on its way there, swept its open fingers into the wine bottle's top (15.8 cm tall) from one
# jittered start (T10 episode 15: the bottle pushed 1.6 cm and tilted, every pick after it missed).
HOVER = 0.20
PAD_LEAD = 0.004  # m, grip site past the bottle's axis: the pads' centre is 3.6 mm behind it

# The open hand's collision boxes in the grip-site frame, (finger axis, approach axis, third
# axis) ranges in m, read off the Panda gripper's collision geoms: the hand, the two fingers.
HAND_PARTS = (
    ((-0.104, 0.104), (-0.123, -0.031), (-0.032, 0.032)),
    ((-0.060, -0.034), (-0.045, 0.009), (-0.011, 0.011)),
    ((0.034, 0.060), (-0.045, 0.009), (-0.011, 0.011)),
)


def approach(yaw: float) -> np.ndarray:
    """The horizontal unit vector the hand points along, ``yaw`` rad from world +x toward +y."""
    return np.array([np.cos(yaw), np.sin(yaw), 0.0])


def side_rot(yaw: float) -> np.ndarray:
    """Grip-site orientation pointing along :func:`approach` (``yaw``), level, third axis up.

    The start pose (``DOWN``) pitched up by 90 degrees, then turned ``yaw`` about the vertical."""
    return rot_axis(UP, yaw) @ rot_axis(np.array([0.0, 1.0, 0.0]), -np.pi / 2) @ DOWN


def _boxes(scene: Scene, names: Sequence[str]) -> list[tuple[np.ndarray, np.ndarray]]:
    """World axis-aligned bounds (low, high corners) of the collision boxes of objects ``names``."""
    model, data = scene.env.sim.model, scene.env.sim.data
    corners = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).T.reshape(-1, 3)
    out = []
    for name in names:
        for g in scene.body_geoms(f"{name}_main"):
            if model.geom_contype[g] == 0 and model.geom_conaffinity[g] == 0:
                continue  # visual only
            rot = data.geom_xmat[g].reshape(3, 3)
            points = data.geom_xpos[g] + (corners * model.geom_size[g]) @ rot.T
            out.append((points.min(axis=0), points.max(axis=0)))
    return out


def clearance(grip: np.ndarray, yaw: float, boxes: list[tuple[np.ndarray, np.ndarray]]) -> float:
    """Smallest horizontal gap (m, 0 if touching) between the open hand, level at ``grip``
    pointing along ``yaw``, and ``boxes``.

    Only boxes overlapping a hand part's height range count; the parts are
    sampled every ~1 cm along their outline (:data:`HAND_PARTS`)."""
    rot = side_rot(yaw)
    gap = np.inf
    for f_range, a_range, t_range in HAND_PARTS:
        f, a = (np.linspace(*r, max(2, int(np.ceil((r[1] - r[0]) / 0.01)) + 1)) for r in (f_range, a_range))
        outline = np.concatenate(
            [
                np.stack([f, np.full_like(f, a_range[0])], 1),
                np.stack([f, np.full_like(f, a_range[1])], 1),
                np.stack([np.full_like(a, f_range[0]), a], 1),
                np.stack([np.full_like(a, f_range[1]), a], 1),
            ]
        )
        xy = grip[:2] + outline[:, 0:1] * rot[:2, 0] + outline[:, 1:2] * rot[:2, 2]
        low, high = grip[2] + t_range[0], grip[2] + t_range[1]
        for box_low, box_high in boxes:
            if box_high[2] < low or box_low[2] > high:
                continue
            outside = np.maximum(np.maximum(box_low[:2] - xy, xy - box_high[:2]), 0.0)
            gap = min(gap, float(np.min(np.linalg.norm(outside, axis=1))))
    return gap


def grasp_point(scene: Scene, obj: str, grasp_height: float, yaw: float) -> np.ndarray:
    """Where the grip site closes on ``obj``: ``grasp_height`` over its origin, just past its axis."""
    return scene.pos(obj) + PAD_LEAD * approach(yaw) + np.array([0.0, 0.0, grasp_height])


def clearest_yaw(
    scene: Scene, obj: str, grasp_height: float, avoid: Sequence[str], yaws: Sequence[float], enough: float
) -> float:
    """The first of ``yaws`` (in order of preference) whose grasp pose on ``obj`` keeps ``enough`` m clear of the
    objects ``avoid``; if none does, the one keeping clearest (see :func:`clearance`)."""
    boxes = _boxes(scene, avoid)
    gaps = [clearance(grasp_point(scene, obj, grasp_height, y), y, boxes) for y in yaws]
    for yaw, gap in zip(yaws, gaps, strict=True):
        if gap >= enough:
            return float(yaw)
    return float(yaws[int(np.argmax(gaps))])


def side_pick(obj: str, grasp_height: float, yaw: float, *, lift: float) -> Chain:
    """Grasp ``obj`` from the side, pointing along ``approach(yaw)``, at ``grasp_height`` over its origin; lift.

    ``lift``: the hand's height over the table at the end."""
    rot = side_rot(yaw)

    def at(extra: float) -> Callable[[Scene], np.ndarray]:
        return lambda scene: grasp_point(scene, obj, grasp_height + extra, yaw)

    return Chain(
        [
            MoveTo(at(HOVER), rot, OPEN, tol=0.01, max_steps=120, name="over"),
            MoveTo(at(0.0), rot, OPEN, tol=0.006, max_speed=0.5, name="descend"),
            Grip(CLOSE, steps=12, rot=rot, name="close"),  # the pads settle on the body in ~6 steps
            Rise(TABLE_Z + lift, rot, CLOSE, name="lift"),
        ],
        name=f"side-pick {obj}",
    )


def side_set_down(
    obj: str,
    spot: Callable[[Scene], np.ndarray],
    yaw: float,
    *,
    release_z: Callable[[Scene], float],
    carry_height: float,
    carry_tilt: float = CARRY_TILT,
) -> Chain:
    """Carry the held ``obj`` over ``spot`` at ``carry_tilt``, stand it upright, lower the hand to
    ``release_z``, let go.

    ``spot`` gives the table point under the hand (its z is ignored);
    ``release_z`` the grip site's world height when letting go; the open
    hand then rises.
    """
    rot = side_rot(yaw)

    def over(scene: Scene) -> np.ndarray:
        p = spot(scene)
        return np.array([p[0], p[1], TABLE_Z + carry_height])

    def down(scene: Scene) -> np.ndarray:
        p = spot(scene)
        return np.array([p[0], p[1], release_z(scene)])

    parts: list[Skill] = [
        MoveTo(over, hand_rot(carry_tilt, rot, approach(yaw)), CLOSE, tol=0.012, max_steps=150, name="carry"),
        MoveTo(over, rot, CLOSE, tol=0.012, max_steps=60, name="upright"),
        MoveTo(down, rot, CLOSE, tol=0.006, max_speed=0.5, max_steps=120, name="lower"),
        Grip(OPEN, steps=12, rot=rot, name="release"),
        Rise(TABLE_Z + 0.25, rot, OPEN, name="retreat"),
    ]
    return Chain(parts, name=f"set down {obj}")
