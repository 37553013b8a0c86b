"""The drawer-opening skill on the real simulator: the bottom drawer must not slam.

Pressed on its handle at full force, the bottom drawer was yanked into its stop at
~0.3 m/s once ~2/3 out (the arm folding), which threw an item inside out of the hand's
reach (S08). The skill now drags it at a steady pace; this checks the pace. Camera-free.
"""

from __future__ import annotations

import numpy as np
import pytest

from memobench.experts.drawers import OPEN_BELOW, OpenDrawer, drawer_q
from memobench.experts.scene import Scene
from memobench.sim.env import SimEnv

pytestmark = pytest.mark.sim

STEADY = 0.010  # m per control step (0.2 m/s): the steady drag is ~0.007, the slam reached 0.017


def open_and_trace(env: SimEnv, level: str) -> tuple[OpenDrawer, list[float]]:
    """Run :class:`OpenDrawer` on ``level`` to its end; the drawer's joint after every step."""
    scene, skill, trace = Scene(env), OpenDrawer(level), []
    for _ in range(skill.max_steps + 1):
        action = skill.act(scene)
        if action is None:
            break
        env.step(action)
        trace.append(drawer_q(scene, level))
    return skill, trace


def test_the_bottom_drawer_opens_at_a_steady_pace(suite):
    env = SimEnv(suite.get("T03-check-all-drawers").bddl({}))
    try:
        env.reset(layout_seed=0)
        skill, trace = open_and_trace(env, "bottom")
    finally:
        env.close()
    assert skill.succeeded and trace[-1] < OPEN_BELOW
    speeds = -np.diff(trace)
    assert speeds.max() < STEADY, f"the drawer moved {speeds.max():.4f} m in one step"
