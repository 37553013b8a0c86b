"""BDDL text is checked before LIBERO parses it: crafted problems are refused, the suite's pass."""

from __future__ import annotations

import builtins
from pathlib import Path

import pytest

from memobench.core.bddl_check import BddlError, Vocabulary, check_problem
from memobench.core.bindings import all_bindings
from memobench.core.suite import Suite
from memobench.sim.registry import known_vocabulary

SUITE = Suite.load()
VOCABULARY = known_vocabulary()
# One of the suite's problems (T03: no bindings), the base every crafted problem edits.
T03 = SUITE.get("T03-check-all-drawers").bddl({})
BOWL_YAW = "(:yaw_rotation ((0.0 0.0)))"


def crafted(old: str, new: str) -> str:
    assert old in T03
    return T03.replace(old, new, 1)


def line_of(text: str, fragment: str) -> int:
    return text[: text.index(fragment)].count("\n") + 1


def test_every_suite_problem_passes():
    for task in SUITE:
        for binding in all_bindings(task.spec):
            check_problem(task.bddl(binding), VOCABULARY)


@pytest.mark.parametrize(
    "payload",
    [
        "(__import__('os').system('touch /tmp/memobench-bddl-x'))",  # a call: LIBERO splits it into tokens
        "__import__",  # what LIBERO's eval() then runs on
        "9**9**9**9",  # no parentheses: LIBERO's eval() would never return
        "1e999",  # float() gives inf
        "nan",
        "0x10",
        "pi",
    ],
)
def test_eval_payloads_in_a_yaw_rotation_are_refused_never_evaluated(payload, monkeypatch):
    def no_eval(*args, **kwargs):
        raise AssertionError("eval called")

    monkeypatch.setattr(builtins, "eval", no_eval)
    text = crafted(BOWL_YAW, f"(:yaw_rotation (({payload} 0.0)))")
    with pytest.raises(
        BddlError,
        match=rf"line {line_of(text, payload)}: region .* :yaw_rotation value .* is not a"
        " number",
    ):
        check_problem(text, VOCABULARY)
    assert not Path("/tmp/memobench-bddl-x").exists()


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("(:ranges ((-0.15 0.1 -0.1 0.15)))", "(:ranges ((-0.15 0.1 -0.1 2**3)))", "value '2\\*\\*3' is not a number"),
        ("(:ranges ((-0.15 0.1 -0.1 0.15)))", "(:ranges ((-0.15 0.1 -0.1)))", "needs groups of 4 numbers"),
        (BOWL_YAW, "(:yaw_rotation ((0.0 0.0 0.0)))", "needs groups of 2 numbers"),
        (BOWL_YAW, "(:rgba (1 0 0 inf))", "value 'inf' is not a number"),
        (BOWL_YAW, "(:colour red)", "unknown attribute ':colour'"),
    ],
)
def test_numbers_only_where_libero_reads_numbers(old, new, message):
    with pytest.raises(BddlError, match=message):
        check_problem(crafted(old, new), VOCABULARY)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("(:goal", "((:goal", r"line 1: '\(' is never closed"),
        ("plate_1 - plate\n  )", "plate_1 - plate\n  ))", r"line \d+: '\)' closes no '\('"),
        ("plate_1 - plate", "plate_1 - dinner_plate", "object 'plate_1' has unknown class 'dinner_plate'"),
        ("wooden_cabinet_1 - wooden_cabinet", "wooden_cabinet_1 - kitchen_cabinet", "unknown class 'kitchen_cabinet'"),
        ("(problem LIBERO_Kitchen_Tabletop_Manipulation)", "(problem LIBERO_Kitchen)", "unknown problem class"),
        (
            "(On plate_1 kitchen_table_plate_init_region)",
            "(On plate_2 kitchen_table_plate_init_region)",
            r"\(:init ...\) \(on ...\): 'plate_2' is not declared",
        ),
        (
            "(Close wooden_cabinet_1_top_region)",
            "(Close wooden_cabinet_2_top_region)",
            r"\(:goal ...\) \(close ...\): 'wooden_cabinet_2_top_region' is not declared",
        ),
        (
            "(top_region (:target wooden_cabinet_1))",
            "(top_region (:target wooden_cabinet_9))",
            "'wooden_cabinet_9' is not declared",
        ),
        ("    wooden_cabinet_1\n  )", "    fridge_1\n  )", r"\(:obj_of_interest ...\): 'fridge_1' is not declared"),
        ("(:init", "(:initial", "unknown section ':initial'"),
        ("plate_1 - plate", "plate_1 - plate\n    bowl_2", "bowl_2 lack a '- class'"),
        ("plate_1 - plate", "plate-1 - plate", "'plate-1' is not a name"),
    ],
)
def test_structure_classes_and_declarations(old, new, message):
    with pytest.raises(BddlError, match=message):
        check_problem(crafted(old, new), VOCABULARY)


def test_classes_are_checked_only_with_a_vocabulary():
    text = crafted("plate_1 - plate", "plate_1 - dinner_plate")
    check_problem(text)  # task loading: structure only, no LIBERO import
    with pytest.raises(BddlError, match="unknown class"):
        check_problem(
            text,
            Vocabulary(
                problems={"libero_kitchen_tabletop_manipulation": "kitchen_table"}, object_classes=frozenset({"plate"})
            ),
        )


@pytest.mark.sim
def test_the_copied_vocabulary_is_libero_s():
    from memobench.sim.registry import libero_vocabulary

    assert libero_vocabulary() == known_vocabulary()


@pytest.mark.sim
def test_env_build_refuses_a_crafted_problem_before_libero_parses_it(tmp_path):
    from memobench.sim.env import EnvBuildError, SimEnv

    marker = tmp_path / "pwned"
    text = crafted(BOWL_YAW, f"(:yaw_rotation ((__import__('os').system('touch\t{marker}') 0.0)))")
    with pytest.raises(EnvBuildError, match="refusing the BDDL problem: line .* is not a number"):
        SimEnv(text)
    assert not marker.exists()
