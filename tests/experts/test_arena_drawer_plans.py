"""The arena's drawer plans (A04, A05, A11-A14, A17) deciding from a fake scene."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from tests.experts.arena_fakes import CHECK_START, DrawerScene, NoChoices, Picks, cheese_follows

from memobench.experts.drawers import CloseDrawer, OpenDrawer
from memobench.experts.plans import arena_drawers, plan_for
from memobench.experts.skills import Chain

TABLE_SPOT = {"cookies_1": (-0.12, -0.10, 0.433), "butter_1": (-0.15, 0.05, 0.433)}


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


@pytest.mark.parametrize(("task_id", "target"), [("A04-drawer-butter", "top"), ("A05-butter-middle-drawer", "middle")])
def test_the_check_plan_checks_top_middle_bottom_then_reopens_the_target(task_id, target):
    plan, memory = plan_for(task_id), {}
    plan.remember_cue([], None, memory)
    for level in ("top", "middle", "bottom"):
        shut = DrawerScene({}, CHECK_START)
        opening = plan.next_skill(shut, memory, NoChoices())
        assert isinstance(opening, OpenDrawer) and opening.level == level
        opened = {level: -0.152}
        scene = DrawerScene(opened, cheese_follows(opened))
        plan.remember(opening, scene, memory)
        closing = plan.next_skill(scene, memory, NoChoices())
        assert isinstance(closing, CloseDrawer) and closing.level == level
        plan.remember(closing, shut, memory)
    assert memory == {"checked": ["top", "middle", "bottom"], "holding": ["top"]}
    reopening = plan.next_skill(DrawerScene({}, CHECK_START), memory, NoChoices())
    assert isinstance(reopening, OpenDrawer) and reopening.level == target
    opened = {target: -0.152}
    assert plan.next_skill(DrawerScene(opened, cheese_follows(opened)), memory, NoChoices()).name == "take butter_1"
    held = DrawerScene(opened, cheese_follows(opened), held="butter_1")
    assert plan.next_skill(held, memory, NoChoices()).name == f"butter_1 into {target}"
    stored = DrawerScene(opened, dict(cheese_follows(opened), butter_1=(0.05, 0.16, 0.60 if target == "top" else 0.53)))
    assert isinstance(plan.next_skill(stored, memory, NoChoices()), CloseDrawer)  # the optional stage
    hidden = DrawerScene({}, CHECK_START, hidden=["butter_1", "cream_cheese_1"])
    assert plan.next_skill(hidden, memory, NoChoices()) is None


def test_a_drawer_holds_the_cream_cheese_only_when_it_lies_on_that_drawers_floor():
    plan = plan_for("A04-drawer-butter")
    scene = DrawerScene({}, CHECK_START)
    # The stage's window (20 cm over a site) would take the top drawer's cheese to be in the middle one too.
    assert plan.holds_object(scene, "top") and not plan.holds_object(scene, "middle")


@pytest.mark.parametrize(("task_id", "target"), [("A04-drawer-butter", "top"), ("A05-butter-middle-drawer", "middle")])
def test_without_memory_the_check_plan_guesses_and_the_reactive_one_takes_the_first_choice(task_id, target):
    plan = plan_for(task_id)
    start = DrawerScene({}, CHECK_START)
    assert [plan.next_skill(start, {}, Picks(i)).level for i in range(3)] == ["top", "middle", "bottom"]
    opened = {target: -0.152}
    target_open = DrawerScene(opened, cheese_follows(opened))
    assert plan.next_skill(target_open, {}, Picks(0)).name == "take butter_1"
    assert isinstance(plan.next_skill(target_open, {}, Picks(1)), CloseDrawer)
    other = "bottom"
    assert isinstance(plan.next_skill(DrawerScene({other: -0.152}, CHECK_START), {}, NoChoices()), CloseDrawer)
    plan.reactive = True
    assert plan.next_skill(start, {}, NoChoices()).level == "top"
    assert plan.next_skill(target_open, {}, NoChoices()).name == "take butter_1"


def test_a_dropped_item_leaves_the_hand_steering_for_the_slot_not_chasing_the_item():
    """A17 seed 106: the butter fell out during the carry; steered by its live offset, the
    hand's target moved with the hand and drove it into the cabinet. Once the fingers are
    empty the last held offset stands, so the target stays put as the hand moves."""
    scene = DrawerScene({"middle": -0.15}, {"butter_1": (-0.06, 0.0, 0.60)}, held="butter_1")
    scene.eef_pos = lambda: np.array([-0.06, 0.0, 0.62])  # 2 cm over the held item's origin
    steer = arena_drawers.HeldItemSteering(scene, "butter_1", arena_drawers.slot("butter_1", "middle", 0.0))
    held_target = steer.hand(scene, extra=0.08)
    scene.items["butter_1"] = np.array([-0.06, 0.0, 0.59])  # slipped 1 cm down in the fingers
    assert steer.hand(scene, extra=0.08) == pytest.approx(held_target + [0.0, 0.0, 0.01])  # followed live
    scene.held = None
    scene.items["butter_1"] = np.array([-0.08, 0.17, 0.55])  # fell onto the drawer's front
    dropped_target = steer.hand(scene, extra=0.08)
    scene.eef_pos = lambda: np.array([0.10, 0.25, 0.70])  # the hand moves on
    assert steer.hand(scene, extra=0.08) == pytest.approx(dropped_target)
    assert dropped_target == pytest.approx(held_target + [0.0, 0.0, 0.01])  # the slot, by the last held offset


def test_a_deep_copied_put_in_carries_its_own_steering():
    """Experts are deep-copied at every planned step: a copy's offset must not follow the original's."""
    scene = DrawerScene({"middle": -0.15}, {"butter_1": (-0.06, 0.0, 0.60)}, held="butter_1")
    skill = arena_drawers.put_in(scene, "butter_1", "middle")
    carry, lower = skill.parts[1], skill.parts[2]
    twin = copy.deepcopy(skill)
    carry.target(scene)  # the original reads a new offset ...
    scene.items["butter_1"] = np.array([-0.06, 0.0, 0.50])
    carry.target(scene)
    assert twin.parts[1].target.func.__self__ is twin.parts[2].target.func.__self__  # one steering per copy
    assert twin.parts[1].target.func.__self__ is not carry.target.func.__self__
    assert lower.target.func.__self__.offset == pytest.approx([0.0, 0.0, 0.17])
    assert twin.parts[1].target.func.__self__.offset == pytest.approx([0.0, 0.0, 0.07])
