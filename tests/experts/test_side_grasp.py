"""The side grasp's geometry (T10's bottle grasp): orientations, the pour roll, the hand's clearance."""

from __future__ import annotations

import numpy as np
import pytest

from memobench.experts.plans import t10
from memobench.experts.pouring import POUR_TILT, hand_rot
from memobench.experts.side_grasp import approach, clearance, side_rot

YAWS = np.radians([0.0, 45.0, 60.0, 75.0, 90.0])


@pytest.mark.parametrize("yaw", YAWS)
def test_side_rot_points_level_along_the_approach_with_fingers_horizontal(yaw):
    rot = side_rot(yaw)
    np.testing.assert_allclose(rot.T @ rot, np.eye(3), atol=1e-12)
    assert np.linalg.det(rot) == pytest.approx(1.0)
    np.testing.assert_allclose(rot[:, 2], approach(yaw), atol=1e-12)  # approach axis
    assert abs(rot[2, 0]) < 1e-12  # fingers close horizontally
    np.testing.assert_allclose(rot[:, 1], [0.0, 0.0, 1.0], atol=1e-12)  # third axis up


@pytest.mark.parametrize("yaw", YAWS)
def test_the_pour_rolls_about_the_approach_axis_and_tips_the_top_across_it(yaw):
    # The pads hold the bottle firmly about the approach axis, not about the finger axis.
    rolled = hand_rot(POUR_TILT, side_rot(yaw), approach(yaw))
    np.testing.assert_allclose(rolled[:, 2], approach(yaw), atol=1e-12)
    up = rolled[:, 1]  # the held bottle's axis
    assert np.arccos(up[2]) == pytest.approx(POUR_TILT)
    tip = np.cross(approach(yaw), [0.0, 0.0, 1.0])
    assert up[:2] @ tip[:2] == pytest.approx(np.sin(POUR_TILT))


def test_t10_pours_with_the_mouth_over_the_cup():
    tip = np.cross(approach(t10.POUR_YAW), [0.0, 0.0, 1.0])
    mouth = t10.POUR_AT + t10.MOUTH * np.sin(POUR_TILT) * tip
    np.testing.assert_allclose(mouth[:2], t10.CUP, atol=1e-12)


def _box(centre, half):
    centre, half = np.asarray(centre, dtype=float), np.asarray(half, dtype=float)
    return centre - half, centre + half


def test_clearance_sees_a_wall_beside_the_open_finger():
    grip, yaw = np.array([0.0, 0.0, 0.05]), np.radians(45.0)
    # The open finger on +y reaches 4.9 cm to +y at 45 degrees (see t10.GRASP_YAWS).
    touching = _box([0.0, 0.049 + 0.003, 0.03], [0.2, 0.003, 0.03])
    assert clearance(grip, yaw, [touching]) == 0.0
    away = _box([0.0, 0.07 + 0.003, 0.03], [0.2, 0.003, 0.03])
    assert clearance(grip, yaw, [away]) == pytest.approx(0.07 - 0.049, abs=0.003)


def test_clearance_ignores_what_is_below_the_hand():
    grip, yaw = np.array([0.0, 0.0, 0.15]), np.radians(45.0)
    under = _box([0.0, 0.0, 0.04], [0.2, 0.2, 0.04])  # top 8 cm, hand's bottom ~11.8 cm
    assert clearance(grip, yaw, [under]) == np.inf


def test_turning_the_hand_toward_plus_y_pulls_the_finger_back_from_a_wall_on_plus_y():
    grip = np.array([0.0, 0.0, 0.05])
    wall = _box([0.0, 0.045, 0.03], [0.3, 0.003, 0.03])
    gaps = [clearance(grip, y, [wall]) for y in np.radians([45.0, 60.0, 75.0])]
    assert gaps[0] < gaps[1] < gaps[2]
