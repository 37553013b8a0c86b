"""Microwave skill geometry that needs no simulator: the hand's orientation at the door."""

from __future__ import annotations

import numpy as np
import pytest

from memobench.experts.control import DOWN, rot_z
from memobench.experts.microwave import hand_rot


def test_at_a_shut_door_facing_the_robot_the_hand_is_in_its_start_pose():
    np.testing.assert_allclose(hand_rot(np.array([-1.0, 0.0, 0.0])), DOWN, atol=1e-12)


@pytest.mark.parametrize("q", [0.0, -0.4, -1.3, -2.0])
def test_the_hand_turns_with_the_door_about_the_vertical(q):
    normal = rot_z(q) @ np.array([-1.0, 0.0, 0.0])
    rot = hand_rot(normal)
    np.testing.assert_allclose(rot, rot_z(q) @ DOWN, atol=1e-12)
    np.testing.assert_allclose(rot.T @ rot, np.eye(3), atol=1e-12)
    assert np.linalg.det(rot) == pytest.approx(1.0)
    assert abs(rot[:, 0] @ normal) < 1e-12  # fingers close along the door, across the bar
