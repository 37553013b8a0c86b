"""Bindings: enumeration order, seeded draws, template rendering, labels. No simulator."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from memobench.core.bindings import (
    BindingError,
    all_bindings,
    binding_label,
    draw_binding,
    lookup,
    render_template,
)
from memobench.core.spec import TaskSpec
from memobench.core.suite import Suite

CHECKPOINT = {
    "id": "c",
    "op": "storage",
    "predicate": "on(a_1, b_1)",
    "text": {"coarse": "x", "intermediate": "x", "fine": "x"},
}


def make_spec(bindings: dict) -> TaskSpec:
    return TaskSpec.model_validate(
        {
            "id": "S99-test",
            "family": "spatial",
            "instruction": "test",
            "bindings": bindings,
            "checkpoints": [CHECKPOINT],
        }
    )


def test_all_bindings_order_and_size() -> None:
    spec = make_spec({"zeta": ["z1", "z2"], "alpha": ["a1", "a2", "a3"]})
    variants = all_bindings(spec)
    assert len(variants) == spec.n_variants == 6
    # Names in sorted order, the last name varying fastest (itertools.product).
    assert variants == [
        {"alpha": "a1", "zeta": "z1"},
        {"alpha": "a1", "zeta": "z2"},
        {"alpha": "a2", "zeta": "z1"},
        {"alpha": "a2", "zeta": "z2"},
        {"alpha": "a3", "zeta": "z1"},
        {"alpha": "a3", "zeta": "z2"},
    ]
    assert all_bindings(spec) == variants  # fixed order: the variant index is stable


def test_unbound_task_has_one_empty_binding() -> None:
    spec = Suite.load().get("T03").spec
    assert all_bindings(spec) == [{}]
    assert spec.n_variants == 1
    assert spec.chance == pytest.approx(1 / 256, abs=1e-3)  # declared in task.yaml (four blind picks in a row)
    assert spec.model_copy(update={"chance_level": None}).chance == 0.0  # undeclared, unbound


def test_pilot_variant_counts() -> None:
    suite = Suite.load()
    assert len(all_bindings(suite.get("P04").spec)) == 6
    assert [binding_label(b)["drawer"] for b in all_bindings(suite.get("S01").spec)] == [
        "top",
        "middle",
        "bottom",
    ]
    assert suite.get("O01").spec.chance == pytest.approx(0.5)


def test_draw_binding_is_deterministic_per_seed() -> None:
    spec = Suite.load().get("P04").spec

    def draws(seed: int) -> list[int]:
        rng = np.random.default_rng(seed)
        return [draw_binding(spec, rng)[0] for _ in range(50)]

    assert draws(7) == draws(7)
    assert draws(7) != draws(8)


def test_draw_binding_returns_the_indexed_variant() -> None:
    spec = Suite.load().get("P04").spec
    variants = all_bindings(spec)
    rng = np.random.default_rng(0)
    for _ in range(20):
        index, binding = draw_binding(spec, rng)
        assert binding == variants[index]


def test_draw_binding_covers_every_variant_evenly() -> None:
    spec = Suite.load().get("P04").spec
    rng = np.random.default_rng(123)
    counts = Counter(draw_binding(spec, rng)[0] for _ in range(1200))
    assert sorted(counts) == list(range(6))
    # Expected 200 each; 120 is > 6 standard deviations away.
    assert min(counts.values()) > 120


def test_draw_binding_does_not_touch_the_global_rng() -> None:
    spec = Suite.load().get("O01").spec
    np.random.seed(5)
    before = np.random.random()
    np.random.seed(5)
    draw_binding(spec, np.random.default_rng(1))
    assert np.random.random() == before


BINDING = {
    "drawer": {"name": "top", "region": "wooden_cabinet_1_top_region"},
    "item": "butter_1",
    "others": ["milk_1", "milk_2"],
}


def test_render_template_fills_names_and_keys() -> None:
    text = "(Open {{drawer.region}}) (On {{ item }} plate_1) {{item}}"
    assert render_template(text, BINDING) == ("(Open wooden_cabinet_1_top_region) (On butter_1 plate_1) butter_1")
    assert render_template("no placeholders here", {}) == "no placeholders here"


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("{{drawr.region}}", ["unknown binding 'drawr'", "drawer, item, others"]),
        ("{{drawer.regoin}}", ["binding 'drawer' has no key 'regoin'", "name, region"]),
        ("{{item.name}}", ["binding 'item' has no key 'name'", "not a mapping"]),
        ("{{others}}", ["{{others}} needs a string", "milk_1"]),
        ("{{drawer}}", ["{{drawer}} needs a string"]),
    ],
)
def test_render_template_errors(text: str, fragments: list[str]) -> None:
    with pytest.raises(BindingError) as err:
        render_template(text, BINDING)
    for fragment in fragments:
        assert fragment in str(err.value)


def test_render_template_without_bindings_names_none() -> None:
    with pytest.raises(BindingError, match=r"declared: none"):
        render_template("{{drawer.region}}", {})


def test_lookup() -> None:
    assert lookup(BINDING, "drawer", "name") == "top"
    assert lookup(BINDING, "others", None) == ["milk_1", "milk_2"]


def test_binding_label() -> None:
    assert binding_label(BINDING) == {
        "drawer": "top",
        "item": "butter_1",
        "others": ["milk_1", "milk_2"],
    }
    assert list(binding_label({"b": "x", "a": "y"})) == ["a", "b"]  # sorted keys
    unnamed = {"target": "milk_1"}
    assert binding_label({"cued": unnamed}) == {"cued": unnamed}
    assert binding_label({}) == {}
