"""The arena's microwave plans (A20-A24) without a simulator: decisions from a fake scene.

The fake scene holds positions, what the hand holds and the door's hinge value; the plans
read nothing else. The plan's "inside" test is checked against the task files' stage
predicate: a pack the plan counts as inside always completes its stage.
"""

from __future__ import annotations

import numpy as np
import pytest
from tests.experts.arena_fakes import NoChoices, query_positions

from memobench.core.expr import parse
from memobench.core.predicates import compile_predicate
from memobench.core.suite import Suite
from memobench.experts.microwave import joint_name
from memobench.experts.plans import arena_microwave, plan_for

TABLE = 0.424
MICROWAVE = {"microwave_1": (-0.02, 0.28, 0.456), "microwave_1_heating_region": (-0.02, 0.29, 0.552)}
IN_THE_BACK, IN_FRONT = (-0.05, 0.30, 0.49), (-0.06, 0.21, 0.49)
SHUT, OPEN = 0.0, -1.52


class FakeScene:
    """Positions by name, the held object, the door's hinge value; ``query`` answers the offsets."""

    def __init__(self, positions, held: str | None = None, door: float = SHUT):
        self.positions = {k: np.array(v, dtype=float) for k, v in {**MICROWAVE, **positions}.items()}
        self.held, self.door = held, door

    def pos(self, name: str) -> np.ndarray:
        return self.positions[name]

    def grasped(self, name: str) -> bool:
        return name == self.held

    def table_top(self) -> float:
        return TABLE

    def joint(self, name: str) -> float:
        assert name == joint_name()
        return self.door

    def query(self, name: str, args: tuple[str, ...]) -> float:
        return query_positions(self.positions, name, args)


def decide(task_id: str, scene: FakeScene, mode: str = "expert", memory=None, rng=None):
    plan = plan_for(task_id)
    plan.reactive = mode == "reactive"
    skill = plan.next_skill(scene, {} if memory is None else memory, rng or NoChoices())
    return None if skill is None else skill.name


# -- A20, A21, A23, A24: two packs into the microwave ---------------------------------------

A20 = "A20-cookies-chocolate-microwave"
ON_TABLE = {"cookies_1": (0.05, -0.05, 0.433), "chocolate_pudding_1": (0.02, -0.18, 0.437)}


@pytest.mark.parametrize("mode", ["expert", "memoryless", "reactive"])
def test_the_door_first_then_the_packs_in_the_instruction_order_then_done(mode):
    assert decide(A20, FakeScene(ON_TABLE), mode) == "open microwave_1 wide"
    assert decide(A20, FakeScene(ON_TABLE, door=OPEN), mode) == "pick cookies_1"
    held = FakeScene({**ON_TABLE, "cookies_1": (0.0, 0.0, 0.6)}, held="cookies_1", door=OPEN)
    assert decide(A20, held, mode) == "put cookies_1 in microwave_1"
    one_in = FakeScene({**ON_TABLE, "cookies_1": IN_THE_BACK}, door=OPEN)
    assert decide(A20, one_in, mode) == "pick chocolate_pudding_1"
    both_in = FakeScene({"cookies_1": IN_THE_BACK, "chocolate_pudding_1": IN_FRONT}, door=OPEN)
    assert decide(A20, both_in, mode) is None


def test_a_pack_in_front_of_the_opening_is_not_inside_yet():
    in_front_on_the_table = FakeScene({**ON_TABLE, "cookies_1": (-0.06, 0.15, 0.433)}, door=OPEN)
    assert not arena_microwave.inside(in_front_on_the_table, "cookies_1")
    assert decide(A20, in_front_on_the_table) == "pick cookies_1"


@pytest.mark.parametrize("task_id", [A20, "A21-butter-chocolate-microwave", "A23-cream-popcorn-microwave"])
def test_a_pack_the_plan_counts_inside_completes_its_stage(task_id):
    task = Suite.load(arena=True).get(task_id)
    stage = task.spec.checkpoints[1]
    item = plan_for(task_id).items[0]
    predicate = compile_predicate(parse(stage.predicate))
    base = np.array(MICROWAVE["microwave_1"])
    inside = 0
    for offset in np.random.default_rng(0).uniform([-0.3, -0.3, -0.05], [0.3, 0.3, 0.25], size=(2000, 3)):
        scene = FakeScene({item: tuple(base + offset)}, door=OPEN)
        if arena_microwave.inside(scene, item):
            inside += 1
            assert predicate.evaluate(scene), offset
    assert inside > 20  # the sample reaches into the cavity


# -- A22: two pours, set aside, cookies into the microwave ----------------------------------

A22 = "A22-pour-tomato-cookies-microwave"
ASIDE = {"coffee_table_set_aside_region": (0.0, -0.2, 0.424)}
COOKIES = {"cookies_1": (0.05, -0.05, 0.433)}
BOTTLE_START = {"tomato_sauce_1": (-0.15, 0.08, 0.462)}
OVER_COOKIES = {"tomato_sauce_1": (0.005, -0.05, 0.60)}  # held at the pour spot, on the cookies' -x side


def pours_then(memory: dict, mode: str = "expert", rng=None):
    scene = FakeScene({**ASIDE, **COOKIES, **OVER_COOKIES}, held="tomato_sauce_1")
    return decide(A22, scene, mode, memory, rng)


def test_a22_picks_the_bottle_pours_twice_and_sets_it_aside():
    memory: dict = {}
    assert decide(A22, FakeScene({**ASIDE, **COOKIES, **BOTTLE_START}), memory=memory) == "pick tomato_sauce_1"
    assert memory == {"pours": 0}
    just_picked = FakeScene({**ASIDE, **COOKIES, "tomato_sauce_1": (-0.15, 0.08, 0.6)}, held="tomato_sauce_1")
    assert decide(A22, just_picked, memory={"pours": 0}) == "pour tomato_sauce_1 over cookies_1"
    assert pours_then({"pours": 1}) == "pour tomato_sauce_1 over cookies_1"
    assert pours_then({"pours": 2}) == "set tomato_sauce_1 aside"


def test_a22_after_the_bottle_is_set_aside_the_cookies_go_into_the_microwave():
    aside = {**ASIDE, "tomato_sauce_1": (0.0, -0.2, 0.462)}
    assert decide(A22, FakeScene({**aside, **COOKIES})) == "open microwave_1 wide"
    assert decide(A22, FakeScene({**aside, **COOKIES}, door=OPEN)) == "pick cookies_1"
    assert decide(A22, FakeScene({**aside, "cookies_1": IN_THE_BACK}, door=OPEN)) is None


def test_a22_without_memory_guesses_pour_or_set_aside_and_the_reactive_expert_pours_again():
    assert pours_then({}, "reactive") == "pour tomato_sauce_1 over cookies_1"
    seen = {pours_then({}, "memoryless", np.random.default_rng(seed)) for seed in range(20)}
    assert seen == {"pour tomato_sauce_1 over cookies_1", "set tomato_sauce_1 aside"}
