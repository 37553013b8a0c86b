"""adversary-state's decision table, without a simulator: vectors in, memories out."""

from __future__ import annotations

import copy

import numpy as np

from memobench.experts.expert import Memory
from memobench.experts.state_table import DecisionTable, Shared
from memobench.sim.scene_state import SceneLayout

LAYOUT = SceneLayout(objects=("bowl",), fixture_joints=())


def test_the_nearest_decision_gives_its_memory_each_number_scaled_by_its_spread() -> None:
    table = DecisionTable(LAYOUT)
    # number 0 spreads over metres, number 1 over millimetres: a millimetre in number 1 weighs
    # as much as a metre in number 0
    table.add(np.array([0.0, 0.000]), Memory(pours=0))
    table.add(np.array([2.0, 0.002]), Memory(pours=1))
    assert table.nearest(np.array([0.4, 0.0019])) == {"pours": 1}
    assert table.nearest(np.array([1.6, 0.0001])) == {"pours": 0}


def test_numbers_that_never_vary_are_left_out_and_the_first_wins_a_tie() -> None:
    table = DecisionTable(LAYOUT)
    table.add(np.array([1.0, 5.0]), Memory(k="first"))
    table.add(np.array([3.0, 5.0]), Memory(k="second"))
    assert table.nearest(np.array([2.0, 500.0])) == {"k": "first"}  # equidistant; number 1 ignored


def test_memories_are_copies_and_an_empty_table_gives_an_empty_memory() -> None:
    table = DecisionTable(LAYOUT)
    assert table.nearest(np.zeros(2)) == {}
    kept = Memory(seen=["top"])
    table.add(np.zeros(2), kept)
    kept["seen"].append("middle")  # the expert's memory changes after the decision
    got = table.nearest(np.zeros(2))
    assert got == {"seen": ["top"]}
    got["seen"].clear()  # the adversary's plan changes its copy
    assert table.nearest(np.zeros(2)) == {"seen": ["top"]}


def test_a_shared_table_survives_the_experts_deep_copies() -> None:
    shared = Shared(DecisionTable(LAYOUT))
    assert copy.deepcopy({"table": shared})["table"] is shared
