"""The arena's drawer plans (A11-A14, A17) deciding from a fake scene: every choice is the scene's."""

from __future__ import annotations

import numpy as np
import pytest
from tests.experts.arena_fakes import NoChoices

from memobench.experts.drawers import CloseDrawer, OpenDrawer
from memobench.experts.plans import plan_for
from memobench.experts.skills import Chain

SITE = {"top": (-0.017, 0.311, 0.627), "middle": (-0.017, 0.311, 0.558), "bottom": (-0.017, 0.311, 0.488)}
TABLE_SPOT = {"cookies_1": (-0.12, -0.10, 0.433), "butter_1": (-0.15, 0.05, 0.433)}


class DrawerScene:
    """Drawer joints, item positions, the held item and the hidden ones."""

    def __init__(self, opened: dict[str, float], items: dict[str, tuple], held=None, hidden=()):
        self.q = {level: opened.get(level, 0.0) for level in SITE}
        self.items = {k: np.array(v, dtype=float) for k, v in items.items()}
        self.held, self.hidden_items = held, set(hidden)

    def joint(self, name: str) -> float:
        return self.q[name.split("_")[-2]]

    def pos(self, name: str) -> np.ndarray:
        if name.endswith("_region"):
            level = name.split("_")[-2]
            return np.array(SITE[level]) + np.array([0.0, self.q[level], 0.0])
        return self.items[name]

    def grasped(self, name: str) -> bool:
        return name == self.held

    def hidden(self, name: str) -> bool:
        return name in self.hidden_items

    def eef_pos(self) -> np.ndarray:
        return np.array([-0.06, 0.0, 0.67])

    def table_top(self) -> float:
        return 0.424


def decide(scene: DrawerScene, reactive: bool = False):
    plan = plan_for("A11-cookies-top-butter-middle")
    plan.reactive = reactive
    return plan.next_skill(scene, {}, NoChoices())


@pytest.mark.parametrize("reactive", [False, True])
def test_a11_walks_its_stages_from_the_scene_alone(reactive):
    start = DrawerScene({}, TABLE_SPOT)
    assert isinstance(decide(start, reactive), OpenDrawer) and decide(start, reactive).level == "top"
    top_open = DrawerScene({"top": -0.152}, TABLE_SPOT)
    assert decide(top_open, reactive).name == "take cookies_1"
    cookies_in = dict(TABLE_SPOT, cookies_1=(-0.05, 0.16, 0.61))
    shut = decide(DrawerScene({"top": -0.152}, cookies_in), reactive)
    assert isinstance(shut, CloseDrawer) and shut.level == "top"  # the stages want the top shut first
    hidden = DrawerScene({}, dict(TABLE_SPOT, cookies_1=(-0.017, 0.31, 0.61)), hidden=["cookies_1"])
    assert isinstance(decide(hidden, reactive), OpenDrawer) and decide(hidden, reactive).level == "middle"
    held = DrawerScene({"middle": -0.152}, dict(TABLE_SPOT, cookies_1=(-0.017, 0.31, 0.61)), held="butter_1")
    assert isinstance(decide(held, reactive), Chain) and decide(held, reactive).name == "butter_1 into middle"
    both = DrawerScene(
        {"middle": -0.152}, {"cookies_1": (-0.017, 0.31, 0.61), "butter_1": (-0.02, 0.15, 0.54)}, hidden=["cookies_1"]
    )
    assert isinstance(decide(both, reactive), CloseDrawer)  # the optional last stage
    done = DrawerScene({}, {"cookies_1": (-0.017, 0.31, 0.61), "butter_1": (-0.02, 0.31, 0.54)}, hidden=TABLE_SPOT)
    assert decide(done, reactive) is None
