"""Names declared by BDDL problems, read from the pilot templates and tiny inline problems."""

from __future__ import annotations

import re

import pytest

from memobench.core.bddl_names import (
    BddlDeclarationError,
    declared_instances,
    declared_names,
    declared_regions,
)
from memobench.core.bindings import all_bindings
from memobench.core.suite import Suite

SUITE = Suite.load()
VARIANTS = [
    pytest.param(task, binding, id=f"{task.id}-{i}")
    for task in SUITE
    for i, binding in enumerate(all_bindings(task.spec))
]


def test_s01_declarations() -> None:
    bddl = SUITE.get("S01").bddl(all_bindings(SUITE.get("S01").spec)[0])
    assert declared_instances(bddl) == {
        "kitchen_table": "kitchen_table",
        "wooden_cabinet_1": "wooden_cabinet",
        "butter_1": "butter",
        "plate_1": "plate",
    }
    assert declared_regions(bddl) == {
        "kitchen_table_wooden_cabinet_init_region",
        "kitchen_table_butter_init_region",
        "kitchen_table_plate_init_region",
        "wooden_cabinet_1_top_region",
        "wooden_cabinet_1_middle_region",
        "wooden_cabinet_1_bottom_region",
    }


def test_o01_identical_instances_share_a_category() -> None:
    bddl = SUITE.get("O01").bddl(all_bindings(SUITE.get("O01").spec)[0])
    instances = declared_instances(bddl)
    assert instances["milk_1"] == instances["milk_2"] == "milk"
    assert set(instances) == {"kitchen_table", "milk_1", "milk_2", "plate_1"}


def test_p04_three_bowl_categories() -> None:
    bddl = SUITE.get("P04").bddl(all_bindings(SUITE.get("P04").spec)[0])
    categories = set(declared_instances(bddl).values())
    assert categories == {"kitchen_table", "akita_black_bowl", "red_akita_black_bowl", "white_bowl"}


# An atom like "(On milk_1 kitchen_table_milk_left_region)"; "(And (" does not match.
_ATOM = re.compile(r"\(([A-Z][A-Za-z]*)((?:\s+[a-z0-9_]+)+)\s*\)")


@pytest.mark.parametrize(("task", "binding"), VARIANTS)
def test_init_and_goal_use_only_declared_names(task, binding) -> None:
    bddl = task.bddl(binding)
    names = declared_names(bddl)
    tail = bddl[bddl.index("(:init") :]
    atoms = _ATOM.findall(tail)
    assert atoms, "no (:init/:goal atoms found"
    for predicate, args in atoms:
        for arg in args.split():
            assert arg in names, f"{task.id}: {arg} in ({predicate} ...) is not declared"


@pytest.mark.parametrize(("task", "binding"), VARIANTS)
def test_obj_of_interest_is_declared(task, binding) -> None:
    bddl = task.bddl(binding)
    body = re.search(r"\(:obj_of_interest(.*?)\)", bddl, re.S)
    assert body is not None
    assert set(body.group(1).split()) <= set(declared_instances(bddl))


def test_inline_problem() -> None:
    bddl = """
    (:regions (top_region (:target cabinet_1)) (r1 (:target table) (:ranges ((0 0 1 1)))))
    (:fixtures table - table cabinet_1 - wooden_cabinet)
    (:objects bowl_1 bowl_2 - bowl plate_1 - plate)
    """
    assert declared_instances(bddl) == {
        "table": "table",
        "cabinet_1": "wooden_cabinet",
        "bowl_1": "bowl",
        "bowl_2": "bowl",
        "plate_1": "plate",
    }
    assert declared_regions(bddl) == {"cabinet_1_top_region", "table_r1"}
    assert "bowl_2" in declared_names(bddl) and "table_r1" in declared_names(bddl)


def test_no_sections_declares_nothing() -> None:
    assert declared_instances("(define (problem x))") == {}
    assert declared_names("") == set()


@pytest.mark.parametrize(
    ("bddl", "fragment"),
    [
        ("(:objects bowl_1 - bowl\n bowl_2 - bowl)", "category 'bowl' declared twice"),
        ("(:fixtures t - table\n u - table)", "(:fixtures ...): category 'table' declared twice"),
        ("(:objects bowl_1 bowl_2)", "bowl_1 bowl_2 lack a '- category'"),
        ("(:objects - bowl)", "category 'bowl' has no instances"),
    ],
)
def test_malformed_declarations(bddl: str, fragment: str) -> None:
    with pytest.raises(BddlDeclarationError) as err:
        declared_instances(bddl)
    assert fragment in str(err.value)


def test_same_category_in_objects_and_fixtures_is_allowed() -> None:
    # The duplicate check is per section: LIBERO keys each section separately.
    bddl = "(:fixtures t - table) (:objects b - table)"
    assert declared_instances(bddl) == {"t": "table", "b": "table"}
