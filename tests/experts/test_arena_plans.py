"""The arena's expert plans without a simulator: found by id, deciding from a fake scene.

A fake scene holds object positions and what the hand holds; the plans read nothing
else. Their stage tests (is this item where its stage wants it?) are checked against
the task files' own predicates, evaluated on the same positions.
"""

from __future__ import annotations

import numpy as np
import pytest
from tests.experts.arena_fakes import NoChoices, query_positions

from memobench.core.expr import parse
from memobench.core.predicates import compile_predicate
from memobench.core.suite import Suite
from memobench.evaluation.protocol import ROBOMEMARENA_DEFAULTS, Protocol
from memobench.experts.plans import (
    arena_drawers,
    arena_pour,
    basket_sequence,
    cabinet_transfer,
    plan_for,
    plans,
    plate_transfer,
)
from memobench.experts.pouring import Pour

ARENA_PLANS = [task.id for task in Suite.load(arena=True).select("arena")]  # every arena task has an expert
TABLE = 0.424


class FakeScene:
    """Positions by name, the held object; ``query`` answers the predicates' xy distance and offsets."""

    def __init__(self, positions: dict[str, tuple[float, float, float]], held: str | None = None):
        self.positions = {k: np.array(v, dtype=float) for k, v in positions.items()}
        self.held = held

    def pos(self, name: str) -> np.ndarray:
        return self.positions[name]

    def grasped(self, name: str) -> bool:
        return name == self.held

    def table_top(self) -> float:
        return TABLE

    def query(self, name: str, args: tuple[str, ...]) -> float:
        return query_positions(self.positions, name, args)


def decide(task_id: str, scene: FakeScene, mode: str = "expert"):
    plan = plan_for(task_id)
    plan.reactive = mode == "reactive"
    return plan.next_skill(scene, {}, NoChoices())


def test_the_arena_plans_are_found_by_id_and_name_arena_tasks():
    arena = Suite.load(arena=True)
    found = [task_id for task_id in plans() if task_id.startswith("A")]
    assert found == ARENA_PLANS
    for task_id in found:
        assert arena.get(task_id).spec.suite == "arena"
        assert type(plan_for(task_id)).task_id == task_id


# -- A25 / A26: plate to plate ------------------------------------------------------------

PLATES = {"plate_1": (-0.06, 0.17, 0.426), "plate_2": (-0.04, -0.17, 0.427)}


@pytest.mark.parametrize("mode", ["expert", "reactive"])
def test_plate_transfer_takes_the_top_pack_first_then_the_other(mode):
    stacked = FakeScene({**PLATES, "butter_1": (-0.06, 0.17, 0.442), "cream_cheese_1": (-0.06, 0.17, 0.460)})
    assert decide("A25-butter-cream", stacked, mode).name == "pick cream_cheese_1"
    one_moved = FakeScene({**PLATES, "butter_1": (-0.06, 0.17, 0.442), "cream_cheese_1": (-0.04, -0.17, 0.444)})
    assert decide("A25-butter-cream", one_moved, mode).name == "pick butter_1"
    both = FakeScene({**PLATES, "cream_cheese_1": (-0.04, -0.17, 0.444), "butter_1": (-0.04, -0.17, 0.462)})
    assert decide("A25-butter-cream", both, mode) is None


def test_plate_transfer_stacks_the_held_pack_on_the_one_already_moved():
    scene = FakeScene({**PLATES, "cream_cheese_1": (-0.04, -0.17, 0.444), "butter_1": (0.0, 0.0, 0.6)}, "butter_1")
    assert decide("A25-butter-cream", scene).name == "set down butter_1"
    goal = plate_transfer.landing("butter_1", ("butter_1", "cream_cheese_1"))(scene)
    np.testing.assert_allclose(goal[:2], PLATES["plate_2"][:2])
    top_of_cream_cheese = 0.444 + 0.009
    assert goal[2] == pytest.approx(top_of_cream_cheese + plate_transfer.RELEASE_MARGIN + 0.0085)


# -- A01-A03: into the basket ---------------------------------------------------------------

BASKET = {"basket_1": (-0.055, 0.19, 0.419)}


def test_basket_sequence_follows_the_instruction_order_and_stops_when_both_are_in():
    start = FakeScene({**BASKET, "cookies_1": (-0.1, -0.12, 0.433), "tomato_sauce_1": (0.05, -0.2, 0.462)})
    assert decide("A01-cookies-tomato-basket", start).name == "pick cookies_1"
    half = FakeScene({**BASKET, "cookies_1": (-0.05, 0.19, 0.45), "tomato_sauce_1": (0.05, -0.2, 0.462)})
    assert decide("A01-cookies-tomato-basket", half).name == "pick tomato_sauce_1"
    held = FakeScene({**BASKET, "cookies_1": (-0.05, 0.19, 0.45), "tomato_sauce_1": (0, 0, 0.7)}, "tomato_sauce_1")
    assert decide("A01-cookies-tomato-basket", held).name == "set down tomato_sauce_1"
    done = FakeScene({**BASKET, "cookies_1": (-0.05, 0.19, 0.45), "tomato_sauce_1": (-0.06, 0.2, 0.49)})
    assert decide("A01-cookies-tomato-basket", done) is None


# -- A18: cabinet to cabinet ----------------------------------------------------------------

CABINETS = {
    "wooden_cabinet_1": (-0.02, 0.3, 0.441),
    "wooden_cabinet_2": (-0.02, -0.3, 0.441),
    "wooden_cabinet_2_top_side": (-0.017, -0.284, 0.663),
}


def test_cabinet_transfer_gives_each_item_its_own_slot_inside_the_stage_region():
    items = ("chocolate_pudding_1", "butter_1")
    scene = FakeScene({**CABINETS, "chocolate_pudding_1": (0, 0, 0.8), "butter_1": (0, 0, 0.8)})
    slots = [cabinet_transfer.slot(item, items)(scene) for item in items]
    assert abs(slots[0][1] - slots[1][1]) == pytest.approx(cabinet_transfer.SLOT_SPACING)
    for item, goal in zip(items, slots, strict=True):
        scene.positions[item] = goal
        assert cabinet_transfer.on_goal(scene, item)


A19 = "A19-tomato-milk-orange-cabinet"
A19_ITEMS = ("tomato_sauce_1", "milk_1", "orange_juice_1")


def test_a19_stands_the_items_in_a_row_along_x_in_their_order_inside_its_wider_stage_region():
    plan = plan_for(A19)
    scene = FakeScene({**CABINETS, **dict.fromkeys(A19_ITEMS, (0, 0, 0.8))})
    slots = [cabinet_transfer.slot(item, A19_ITEMS, plan.slot_offsets)(scene) for item in A19_ITEMS]
    assert [s[0] for s in slots] == sorted(s[0] for s in slots)  # as they start on cabinet 1: -x first
    assert {s[1] for s in slots} == {CABINETS["wooden_cabinet_2_top_side"][1]}
    # where each comes to rest, let go RELEASE_MARGIN over the top
    resting = [goal - [0, 0, cabinet_transfer.RELEASE_MARGIN] for goal in slots]
    upright_carton_origin_over_base = resting[1][2] - CABINETS["wooden_cabinet_2"][2]
    assert upright_carton_origin_over_base > cabinet_transfer.TASK_18_STAGE.z[1]  # task 18's window misses it
    for item, rest in zip(A19_ITEMS, resting, strict=True):
        scene.positions[item] = rest
        assert cabinet_transfer.on_goal(scene, item, plan.stage)


@pytest.mark.parametrize("mode", ["expert", "reactive"])
def test_a19_moves_what_is_left_on_cabinet_1_and_stops_when_all_three_are_on_cabinet_2(mode):
    on_1 = {
        "tomato_sauce_1": (-0.08, 0.316, 0.703),
        "milk_1": (-0.01, 0.316, 0.734),
        "orange_juice_1": (0.05, 0.316, 0.734),
    }
    on_2 = {
        "tomato_sauce_1": (-0.09, -0.284, 0.703),
        "milk_1": (-0.02, -0.284, 0.734),
        "orange_juice_1": (0.05, -0.28, 0.734),
    }
    assert decide(A19, FakeScene({**CABINETS, **on_1}), mode).name == "pick tomato_sauce_1"
    two_left = FakeScene({**CABINETS, **on_1, "tomato_sauce_1": on_2["tomato_sauce_1"]})
    assert decide(A19, two_left, mode).name == "pick milk_1"
    held = FakeScene({**CABINETS, **on_2, "milk_1": (0, 0, 0.8)}, "milk_1")
    assert decide(A19, held, mode).name == "set down milk_1"
    assert decide(A19, FakeScene({**CABINETS, **on_2}), mode) is None


# -- A06-A10, A15, A16: pour twice ---------------------------------------------------------

A06 = "A06-pour-tomato-sauce-into-bowl-drainer"
A08 = "A08-pick-chocolate-in-frypan-pour-tomato-sauce-twice"
A15 = "A15-butter-milk-frypan"
POUR_SCENE = {
    "bowl_drainer_1": (0.05, 0.25, 0.43),
    "cookies_1": (-0.05, -0.05, 0.433),
    "chefmate_8_frypan_1": (-0.05, -0.25, 0.423),
    "coffee_table_milk_init_region": (-0.12, 0.14, 0.424),
}


class HandScene(FakeScene):
    """A fake scene with a hand position (where a finished set-down parks it, or anywhere)."""

    def __init__(self, positions, held=None, hand=(0.0, 0.0, 0.7)):
        super().__init__(positions, held)
        self.hand = np.array(hand, dtype=float)

    def eef_pos(self) -> np.ndarray:
        return self.hand


def over_target(task_id: str, bottle: str, target: str, held: bool = True) -> HandScene:
    """The bottle held (or standing) at the pour spot over ``target``."""
    plan = plan_for(task_id)
    spot = np.array(POUR_SCENE.get(target, (-0.15, -0.25, 0.44)))
    xy = spot[:2] + plan.pour_xy()
    return HandScene({**POUR_SCENE, target: tuple(spot), bottle: (*xy, 0.58)}, bottle if held else None)


def test_a_pour_plan_counts_its_pours_and_puts_the_bottle_away_after_the_second():
    plan = plan_for(A06)
    scene = over_target(A06, "tomato_sauce_1", "cookies_1")
    memory = {"pours": 0}
    for done in (1, 2):
        assert isinstance(plan.next_skill(scene, memory, NoChoices()), Pour)
        finished = Pour("tomato_sauce_1", "cookies_1")
        finished.finish(True)
        plan.remember(finished, scene, memory)
        assert memory["pours"] == done
    assert plan.next_skill(scene, memory, NoChoices()).name == "put tomato_sauce_1 away"


def test_a_pour_plan_pours_at_once_when_the_held_bottle_is_away_from_the_target():
    scene = over_target(A06, "tomato_sauce_1", "cookies_1")
    scene.positions["tomato_sauce_1"] = np.array([-0.12, 0.12, 0.68])  # just lifted from its start
    assert isinstance(plan_for(A06).next_skill(scene, {}, NoChoices()), Pour)


def test_without_its_count_a_pour_plan_guesses_and_the_reactive_one_pours_again():
    scene = over_target(A06, "tomato_sauce_1", "cookies_1")
    reactive = plan_for(A06)
    reactive.reactive = True
    assert isinstance(reactive.next_skill(scene, {}, NoChoices()), Pour)
    picks = [plan_for(A06).next_skill(scene, {}, np.random.default_rng(seed)) for seed in range(20)]
    pours = sum(isinstance(p, Pour) for p in picks)
    assert 0 < pours < 20  # both "again" and "put it away" drawn
    assert all(p.name == "put tomato_sauce_1 away" for p in picks if not isinstance(p, Pour))


def test_a_pour_plan_puts_the_item_into_the_pan_before_it_picks_the_bottle():
    bottle, item = "tomato_sauce_1", "chocolate_pudding_1"
    start = HandScene({**POUR_SCENE, bottle: (-0.12, 0.14, 0.462), item: (-0.15, -0.02, 0.437)})
    assert plan_for(A08).next_skill(start, {}, NoChoices()).name == f"pick {item}"
    start.held = item
    assert plan_for(A08).next_skill(start, {}, NoChoices()).name == f"set down {item}"
    start.held, start.positions[item] = None, np.array([-0.05, -0.25, 0.45])  # in the pan
    assert plan_for(A08).next_skill(start, {}, NoChoices()).name == f"pick {bottle}"


def test_a_pour_plan_is_done_when_the_bottle_is_put_away():
    in_drainer = HandScene({**POUR_SCENE, "tomato_sauce_1": (0.06, 0.24, 0.62)})
    assert plan_for(A06).next_skill(in_drainer, {}, NoChoices()) is None
    milk, butter_in_pan = (-0.12, 0.14, 0.494), (-0.05, -0.25, 0.44)
    # a parked hand ends the plan before the trip home (Plan.finished): home, it would look like the start
    parked = HandScene({**POUR_SCENE, "milk_1": milk, "butter_1": butter_in_pan}, hand=arena_pour.PARK + [0, 0, TABLE])
    assert plan_for(A15).finished(parked)
    parked.hand = np.array([0.0, 0.0, 0.7])  # the same scene with the hand elsewhere: the start
    assert not plan_for(A15).finished(parked)
    assert plan_for(A15).next_skill(parked, {}, NoChoices()).name == "pick milk_1"


@pytest.mark.parametrize("task_id", [t for t in ARENA_PLANS if isinstance(plan_for(t), arena_pour.ArenaPourPlan)])
def test_a_pour_task_needs_no_memory_while_the_extra_pour_monitor_is_short(task_id):
    """Chance 1 rests on the 30-step extra-pour monitor of both protocols: a memoryless agent whose
    pours each take longer is never seen pouring a third time. A longer monitor re-derives it."""
    assert Suite.load(arena=True).get(task_id).spec.chance_level == 1.0
    assert Protocol().extra_pour_monitor_steps == ROBOMEMARENA_DEFAULTS["extra_pour_monitor_steps"] == 30


# -- the plans' stage tests against the task files' predicates -----------------------------

# (task, the plan's test, the stage's target, the item, the fixed objects, the offsets sampled: a
# box around the stage's region, half again as large)
CASES = [
    ("A25-butter-cream", plate_transfer.on_goal, "plate_2", "butter_1", PLATES, (0.09, -0.02, 0.15)),
    ("A26-chocolate-pudding-cream", plate_transfer.on_goal, "plate_2", "cream_cheese_1", PLATES, (0.09, -0.02, 0.15)),
    ("A02-butter-popcorn-basket", basket_sequence.in_basket, "basket_1", "popcorn_1", BASKET, (0.18, -0.08, 0.3)),
    (
        "A18-chocolate-butter-cabinet",
        cabinet_transfer.on_goal,
        "wooden_cabinet_2",
        "butter_1",
        CABINETS,
        (0.22, 0, 0.35),
    ),
    (
        A19,
        lambda scene, item: cabinet_transfer.on_goal(scene, item, plan_for(A19).stage),
        "wooden_cabinet_2",
        "milk_1",
        CABINETS,
        (0.45, 0, 0.45),
    ),
    (
        "A13-butter-cookies-middle-drawer",
        lambda scene, item: arena_drawers.in_drawer(scene, item, "middle"),
        "wooden_cabinet_1_middle_region",
        "butter_1",
        {"wooden_cabinet_1_middle_region": (-0.017, 0.153, 0.558)},
        (0.22, -0.15, 0.3),
    ),
]


@pytest.mark.parametrize(("task_id", "plan_test", "goal", "item", "fixed", "box"), CASES, ids=[c[0] for c in CASES])
def test_a_plan_thinks_an_item_placed_exactly_when_its_stage_does(task_id, plan_test, goal, item, fixed, box):
    task = Suite.load(arena=True).get(task_id)
    stage = next(c for c in task.spec.checkpoints if item.rsplit("_", 1)[0].replace("_", "-") in c.id)
    predicate = compile_predicate(parse(stage.predicate))
    base = np.array(fixed[goal])
    rng = np.random.default_rng(0)
    agreements = 0
    for offset in rng.uniform([-box[0], -box[0], box[1]], [box[0], box[0], box[2]], size=(400, 3)):
        scene = FakeScene({**fixed, item: tuple(base + offset)})
        assert plan_test(scene, item) == predicate.evaluate(scene), (task_id, offset)
        agreements += plan_test(scene, item)
    assert agreements > 40  # the sample reaches inside the stage's region, not only outside it


def test_a_bottle_whose_finger_pad_parted_for_a_step_is_still_held_and_poured():
    """A07 seed 107: both pads must touch for ``grasped``; taking a one-step slip for a drop
    made the plan pick the bottle again, opening the hand over the table."""
    scene = over_target(A06, "tomato_sauce_1", "cookies_1", held=False)
    scene.hand = scene.positions["tomato_sauce_1"] + [0.0, 0.0, 0.012]  # at the grip site, 16 cm up
    assert arena_pour.in_hand(scene, "tomato_sauce_1")
    assert isinstance(plan_for(A06).next_skill(scene, {"pours": 1}, NoChoices()), Pour)
    standing = HandScene({**POUR_SCENE, "tomato_sauce_1": (-0.12, 0.14, 0.462)}, hand=(-0.12, 0.14, 0.474))
    assert not arena_pour.in_hand(standing, "tomato_sauce_1")  # on the table, the hand around it: not held
    assert plan_for(A06).next_skill(standing, {}, NoChoices()).name == "pick tomato_sauce_1"


def test_a_settled_pour_turns_the_hand_further_when_the_bottle_stops_short_of_the_carry_tilt():
    """A07 seed 108: gripped off the hand's axis, the bottle stood at 0.12 rad with the hand at the
    carry tilt (0.09); turning back never ended. Once the bottle's tilt stops falling, the hand
    turns further by what is left."""
    pour = arena_pour.SettledPour("tomato_sauce_1", "cookies_1", settle=arena_pour.SETTLE)
    before = pour.carry_rot()
    for bottle in (0.60, 0.45, 0.30, 0.18, 0.12):  # turning back, to where it stops
        pour._trim_if_stalled(bottle)
    assert pour.trim == 0.0
    for _ in range(arena_pour.STALL_STEPS - 1):
        pour._trim_if_stalled(0.12)
    assert pour.trim == 0.0  # not yet stalled long enough
    pour._trim_if_stalled(0.12)
    assert pour.trim == pytest.approx(0.12 - pour.carry)
    assert not np.allclose(pour.carry_rot(), before)
    for _ in range(3 * arena_pour.STALL_STEPS):  # a bottle that never comes back: the trim is bounded
        pour._trim_if_stalled(0.3)
    assert pour.trim == arena_pour.MAX_TRIM
