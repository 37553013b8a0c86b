"""Suite counts on tiny inline tasks and on the packaged pilots. No simulator."""

from __future__ import annotations

from pathlib import Path

import pytest

from memobench.core.bddl_names import BddlDeclarationError
from memobench.core.spec import TaskSpec
from memobench.core.suite import Suite, Task
from memobench.core.suite_counts import (
    COUNT_KEYS,
    declared_classes,
    format_domain_sizes,
    suite_stats,
    task_classes,
)


def checkpoint(cid: str, op: str) -> dict:
    text = {"coarse": cid, "intermediate": cid, "fine": cid}
    return {"id": cid, "op": op, "predicate": "on(a_1, b_1)", "text": text}


def make_task(task_id: str, family: str, ops: list[str], bddl: str, bindings=None) -> Task:
    raw = {
        "id": task_id,
        "family": family,
        "instruction": "test",
        "bindings": bindings or {},
        "checkpoints": [checkpoint(f"c{i}", op) for i, op in enumerate(ops)],
    }
    if family in ("object", "procedural"):
        raw["cue"] = {"targets": ["a_1"]}
    return Task(TaskSpec.model_validate(raw), bddl, Path("/nowhere") / family / task_id)


BDDL_TABLE = """
  (:fixtures kitchen_table - kitchen_table)
  (:objects a_1 a_2 - bowl b_1 - plate)
"""
BDDL_CABINET = """
  (:fixtures kitchen_table - kitchen_table wooden_cabinet_1 - wooden_cabinet)
  (:objects {{item.obj}} - {{item.cat}} b_1 - plate)
"""
ITEMS = {
    "item": [
        {"name": "butter", "obj": "butter_1", "cat": "butter"},
        {"name": "milk", "obj": "milk_1", "cat": "milk"},
    ]
}


def test_declared_classes_separates_objects_and_fixtures() -> None:
    objects, fixtures = declared_classes(BDDL_TABLE)
    assert objects == {"bowl", "plate"}
    assert fixtures == {"kitchen_table"}


def test_declared_classes_rejects_duplicate_category_lines() -> None:
    with pytest.raises(BddlDeclarationError, match="'bowl' declared twice"):
        declared_classes("(:objects a_1 - bowl\n a_2 - bowl)")


def test_task_classes_are_the_union_over_variants() -> None:
    task = make_task("S98-swap", "spatial", ["storage"], BDDL_CABINET, ITEMS)
    objects, fixtures = task_classes(task)
    assert objects == {"butter", "milk", "plate"}  # butter in one variant, milk in the other
    assert fixtures == {"kitchen_table", "wooden_cabinet"}


def test_suite_stats_counts_and_unions() -> None:
    tasks = [
        make_task("T98-a", "temporal", ["storage", "update", "compression"], BDDL_TABLE),
        make_task("T99-b", "temporal", ["storage", "update"], BDDL_TABLE),
        make_task("S98-c", "spatial", ["storage", "compression", "update"], BDDL_CABINET, ITEMS),
    ]
    stats = suite_stats(tasks)
    assert stats.total.counts() == {
        "tasks": 3,
        "checkpoints": 8,
        "storage": 3,
        "update": 3,
        "compression": 2,
        "object_classes": 4,  # bowl, plate, butter, milk: plate counted once
        "fixture_classes": 2,
    }
    assert list(stats.families) == ["temporal", "spatial"]  # taxonomy order, present only
    assert stats.families["temporal"].counts()["checkpoints"] == 5
    assert stats.families["temporal"].object_class_names == ("bowl", "plate")
    assert stats.families["spatial"].binding_domain_sizes == (2,)
    assert stats.families["temporal"].binding_domain_sizes == ()


def test_suite_stats_jsonable_keys() -> None:
    tasks = [make_task("O98-a", "object", ["storage"], BDDL_TABLE)]
    doc = suite_stats(tasks).to_jsonable()
    assert set(doc) == {*COUNT_KEYS, "families", "object_class_names", "fixture_class_names"}
    assert set(doc["families"]) == {"object"}
    assert set(doc["families"]["object"]) == set(COUNT_KEYS)
    assert doc["object_class_names"] == ["bowl", "plate"]
    assert doc["fixture_class_names"] == ["kitchen_table"]


def test_empty_selection() -> None:
    stats = suite_stats([])
    assert stats.total.counts() == dict.fromkeys(COUNT_KEYS, 0)
    assert stats.families == {}


def test_pilot_stats() -> None:
    stats = suite_stats(Suite.load().select("pilot"))
    assert stats.total.counts() == {
        "tasks": 5,
        "checkpoints": 12,
        "storage": 5,
        "update": 4,
        "compression": 3,
        "object_classes": 7,
        "fixture_classes": 2,
    }
    assert stats.total.fixture_class_names == ("kitchen_table", "wooden_cabinet")
    assert "milk" in stats.total.object_class_names
    assert "kitchen_table" not in stats.total.object_class_names
    families = stats.families
    assert sum(g.tasks for g in families.values()) == stats.total.tasks
    for key in ("checkpoints", "storage", "update", "compression"):
        assert sum(g.counts()[key] for g in families.values()) == stats.total.counts()[key]
    assert families["procedural"].binding_domain_sizes == (6,)


@pytest.mark.parametrize(
    ("sizes", "text"),
    [([], "-"), ([3], "3"), ([3, 2, 3, 6, 3], "2, 3 x3, 6")],
)
def test_format_domain_sizes(sizes: list[int], text: str) -> None:
    assert format_domain_sizes(sizes) == text
