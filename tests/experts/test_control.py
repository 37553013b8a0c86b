"""The pose-servo law every skill uses."""

from __future__ import annotations

import numpy as np
import pytest

from memobench.experts.control import DOWN, pose_action, rot_axis, rotation_error


@pytest.mark.parametrize("axis", [(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0), (0.3, -0.2, 0.9)])
@pytest.mark.parametrize("angle", [0.05, 0.6, 2.0, 3.1])
def test_rotation_error_recovers_the_world_axis_angle(axis, angle):
    axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    target = rot_axis(axis, angle) @ DOWN
    np.testing.assert_allclose(rotation_error(DOWN, target), axis * angle, atol=1e-9)


def test_rotation_error_of_identical_poses_is_zero():
    assert not rotation_error(DOWN, DOWN).any()


def test_rotation_error_at_half_turn_is_pi_about_some_axis():
    error = rotation_error(DOWN, rot_axis([0, 0, 1], np.pi) @ DOWN)
    assert np.linalg.norm(error) == pytest.approx(np.pi)


def test_pose_action_is_proportional_then_clipped():
    here = np.zeros(3)
    small = pose_action(here, DOWN, np.array([0.005, 0, 0]), DOWN, -1.0)
    assert small[0] == pytest.approx(2 * 0.005 / 0.05) and small[6] == -1.0
    far = pose_action(here, DOWN, np.array([1.0, -1.0, 0]), None, 1.0, max_speed=0.5)
    np.testing.assert_allclose(far[:3], [0.5, -0.5, 0.0])
    assert not far[3:6].any()


def test_pose_action_turns_toward_the_target_orientation():
    action = pose_action(np.zeros(3), DOWN, np.zeros(3), rot_axis([0, 0, 1], 0.1) @ DOWN, -1.0)
    np.testing.assert_allclose(action[3:6], [0, 0, 0.1 / 0.5], atol=1e-9)
