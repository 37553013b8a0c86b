"""Pose-servo actions: the one law every skill uses to move the hand.

OSC_POSE delta actions: a position action of 1.0 commands a 0.05 m offset,
a rotation action of 1.0 a 0.5 rad offset (world frame). A proportional law
``clip(2 * error / 0.05)`` stops within a few millimetres (measured).
"""

from __future__ import annotations

import numpy as np

POS_SCALE = 0.05  # metres per unit of position action
ROT_SCALE = 0.5  # radians per unit of rotation action
OPEN, CLOSE = -1.0, 1.0

# Grip-site orientations (columns: finger axis, third axis, approach axis).
# DOWN: pointing at the table, fingers closing along world y (the start pose).
DOWN = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0]])


def rotation_error(current: np.ndarray, target: np.ndarray) -> np.ndarray:
    """World-frame axis-angle vector taking ``current`` to ``target``."""
    r = target @ current.T
    cos = np.clip((np.trace(r) - 1.0) / 2.0, -1.0, 1.0)
    angle = np.arccos(cos)
    if angle < 1e-6:
        return np.zeros(3)
    axis = np.array([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]])
    norm = np.linalg.norm(axis)
    if norm < 1e-9:  # angle ~ pi: pick the axis from the symmetric part
        w, v = np.linalg.eigh((r + np.eye(3)) / 2.0)
        axis = v[:, np.argmax(w)]
        norm = 1.0
    return axis / norm * angle


def rot_z(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def rot_axis(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rotation matrix about a (world) unit axis."""
    axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * (k @ k)


def pose_action(
    pos: np.ndarray,
    rot: np.ndarray,
    target_pos: np.ndarray,
    target_rot: np.ndarray | None,
    grip: float,
    *,
    gain: float = 2.0,
    max_speed: float = 1.0,
    rot_gain: float = 1.0,
) -> np.ndarray:
    """A 7-D action servoing the hand toward a pose; ``target_rot=None`` holds no orientation.

    ``rot_gain`` > 1 turns faster (pours)."""
    move = np.clip(gain * (np.asarray(target_pos) - pos) / POS_SCALE, -max_speed, max_speed)
    turn = np.zeros(3)
    if target_rot is not None:
        turn = np.clip(rot_gain * rotation_error(rot, target_rot) / ROT_SCALE, -1.0, 1.0)
    return np.concatenate([move, turn, [grip]])


class Forceful(np.ndarray):
    """An action that presses or drags against a fixture rather than moving the hand freely.

    The slow expert halves every motion command but keeps these whole: what
    they command is a force (a drag by friction on a drawer's handle bar slips
    off at half strength), not a speed."""


def forceful(action: np.ndarray) -> np.ndarray:
    """``action`` marked :class:`Forceful` (a view: same numbers)."""
    return np.asarray(action, dtype=float).view(Forceful)


def hold_action(grip: float = OPEN) -> np.ndarray:
    return np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, grip])
