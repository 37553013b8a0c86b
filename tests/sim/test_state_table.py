"""adversary-state's table in the simulator: the expert's decisions, and a start that tells nothing."""

from __future__ import annotations

import numpy as np
import pytest

from memobench.experts.plans import plan_for
from memobench.experts.state_table import build_table

pytestmark = pytest.mark.sim


def test_t04_decisions_and_the_hand_back_home_reads_as_a_start(suite):
    """T04 (open the microwave, close it): the expert decides at the start, with the door open and
    back home after closing it. Home again, the state differs from the start only by the arm's
    few millimetres, which the jittered start hides among episodes; the fingers read as at a
    start (fully open), no longer as a clock of the time since they opened."""
    table = build_table(suite.get("T04"), plan_for, episodes=2)
    entries = table.entries()
    memories = [m for _, m in entries]
    assert memories[:3] == [{"checked": False}, {"checked": False, "opened": True}, {"checked": True, "opened": True}]
    start, back = entries[0][0], entries[2][0]
    np.testing.assert_allclose(back[-2:], start[-2:], atol=3e-4)  # robot_state's fingers: last two numbers
    assert np.linalg.norm(back[-8:-5] - start[-8:-5]) < 0.01  # the hand within 1 cm of its start
    other_start = entries[3][0]  # the second episode's start: another layout, another arm pose
    assert memories[3] == {"checked": False}
    assert np.linalg.norm(other_start[-8:-5] - start[-8:-5]) > 0.005
