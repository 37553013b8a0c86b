"""Predicate catalogue, compiled predicates with history, and pour counting.

Driven by a fake StateView backed by dicts: no simulator.
"""

from __future__ import annotations

import pytest

from memobench.core.expr import ExprError, parse
from memobench.core.predicates import (
    CATALOGUE,
    Arg,
    Kind,
    PourCounter,
    PourCounters,
    check,
    compile_predicate,
    expand_sugar,
)

NUMBER_DEFAULTS = {"tilt": 0.0, "height": 0.0, "distance": 1.0}


class FakeView:
    """A StateView over a dict {(predicate, *args): value}; bools default False."""

    def __init__(self, facts: dict | None = None) -> None:
        self.facts = dict(facts or {})
        self.queries: list[tuple[str, tuple[str, ...]]] = []

    def query(self, name: str, args: tuple[str, ...]) -> bool | float:
        self.queries.append((name, args))
        return self.facts.get((name, *args), NUMBER_DEFAULTS.get(name, False))


def run(text: str, frames: list[dict]) -> list[bool]:
    """Evaluate a predicate once per frame (frames: fact dicts); its value per step."""
    pred = compile_predicate(parse(text))
    view = FakeView()
    out = []
    for frame in frames:
        view.facts = frame
        out.append(pred.evaluate(view))
    return out


def seq(name: str, values: str) -> list[dict]:
    """Frames where fact ``name`` (a tuple) follows a string like '0110' (1 = true)."""
    return [{name: ch == "1"} for ch in values]


def merge(*frame_lists: list[dict]) -> list[dict]:
    return [dict(kv for f in frames for kv in f.items()) for frames in zip(*frame_lists, strict=True)]


def bits(values: list[bool]) -> str:
    return "".join("1" if v else "0" for v in values)


# ----------------------------------------------------------------- catalogue

BOOL_STATE = {"on": 2, "in": 2, "open": 1, "closed": 1, "ajar": 1, "turned_on": 1, "turned_off": 1,
              "grasped": 1, "lifted": 1, "upright": 1, "near": 2}  # fmt: skip


def test_catalogue_shape() -> None:
    for name, n in BOOL_STATE.items():
        assert CATALOGUE[name].params == (Arg.NAME,) * n
        assert CATALOGUE[name].returns == "bool"
        assert CATALOGUE[f"any_{name}"].params == (Arg.LIST,) + (Arg.NAME,) * (n - 1)
        assert CATALOGUE[f"all_{name}"].kind is Kind.QUANTIFIED
    for name, n in {"tilt": 1, "height": 1, "distance": 2}.items():
        assert CATALOGUE[name].returns == "number"
        assert len(CATALOGUE[name].params) == n
        assert f"any_{name}" not in CATALOGUE
    assert CATALOGUE["held"].params == (Arg.BOOL, Arg.COUNT)
    assert CATALOGUE["pour_count"].kind is Kind.COUNTER
    assert CATALOGUE["closed_after_open"].expansion == ("then", ("open", "closed"))
    with pytest.raises(TypeError):
        CATALOGUE["x"] = CATALOGUE["on"]  # read-only


# ------------------------------------------------------------ state queries


@pytest.mark.parametrize(("name", "arity"), sorted(BOOL_STATE.items()))
def test_bool_state_predicate_asks_the_view(name: str, arity: int) -> None:
    args = ("obj_a", "obj_b")[:arity]
    pred = compile_predicate(parse(f"{name}({', '.join(args)})"))
    view = FakeView()
    assert pred.evaluate(view) is False
    view.facts[(name, *args)] = True
    assert pred.evaluate(view) is True
    assert view.queries == [(name, args), (name, args)]
    assert not pred.stateful


@pytest.mark.parametrize(
    ("text", "facts", "expected"),
    [
        ("tilt(bottle) > 0.5", {("tilt", "bottle"): 0.6}, True),
        ("tilt(bottle) > 0.5", {("tilt", "bottle"): 0.4}, False),
        ("height(bowl) >= 0.05", {("height", "bowl"): 0.05}, True),
        ("distance(a, b) < 0.1", {("distance", "a", "b"): 0.12}, False),
        ("distance(a, b) < 0.1", {("distance", "a", "b"): 0.08}, True),
        ("height(a) == height(b)", {("height", "a"): 0.2, ("height", "b"): 0.2}, True),
        ("tilt(a) != 0", {}, False),
    ],
)
def test_number_state_predicates(text: str, facts: dict, expected: bool) -> None:
    assert compile_predicate(parse(text)).evaluate(FakeView(facts)) is expected


def test_any_and_all_query_each_element() -> None:
    facts = {("on", "milk_3", "plate_1"): True}
    view = FakeView(facts)
    assert compile_predicate(parse("any_on([milk_2, milk_3], plate_1)")).evaluate(view) is True
    assert view.queries == [("on", ("milk_2", "plate_1")), ("on", ("milk_3", "plate_1"))]
    assert compile_predicate(parse("all_on([milk_2, milk_3], plate_1)")).evaluate(view) is False
    view.facts[("on", "milk_2", "plate_1")] = True
    assert compile_predicate(parse("all_on([milk_2, milk_3], plate_1)")).evaluate(view) is True
    assert compile_predicate(parse("any_open([d1, d2])")).evaluate(FakeView({("open", "d2"): True}))
    assert not compile_predicate(parse("all_closed([d1, d2])")).evaluate(FakeView({("closed", "d2"): True}))
    # Empty lists: any is false, all is vacuously true.
    assert compile_predicate(parse("any_in([], basket)")).evaluate(FakeView()) is False
    assert compile_predicate(parse("all_in([], basket)")).evaluate(FakeView()) is True


def test_object_task_predicate() -> None:
    pred = compile_predicate(parse("on(milk_1, plate_1) and not any_on([milk_2, milk_3], plate_1)"))
    assert pred.evaluate(FakeView({("on", "milk_1", "plate_1"): True})) is True
    both = {("on", "milk_1", "plate_1"): True, ("on", "milk_3", "plate_1"): True}
    assert pred.evaluate(FakeView(both)) is False
    assert pred.evaluate(FakeView({("on", "milk_2", "plate_1"): True})) is False


# ---------------------------------------------------------------- history


def test_ever_latches_from_first_true_step() -> None:
    assert bits(run("ever(open(d))", seq(("open", "d"), "00100"))) == "00111"


@pytest.mark.parametrize(
    ("sugar", "state"),
    [("was_open", "open"), ("was_closed", "closed"), ("was_turned_on", "turned_on"),
     ("was_turned_off", "turned_off"), ("was_grasped", "grasped")],
)  # fmt: skip
def test_was_sugar(sugar: str, state: str) -> None:
    assert bits(run(f"{sugar}(f)", seq((state, "f"), "000101"))) == "000111"
    assert expand_sugar(parse(f"{sugar}(f)")) == parse(f"ever({state}(f))")


def test_then_needs_y_strictly_after_x() -> None:
    # closed at step 0 precedes any open: does not count; closed at step 3 does.
    frames = merge(seq(("open", "d"), "01100"), seq(("closed", "d"), "10010"))
    assert bits(run("then(open(d), closed(d))", frames)) == "00011"
    # x and y at the same step (step 1) is not "after"; y at step 2 is.
    frames = merge(seq(("open", "d"), "010"), seq(("closed", "d"), "011"))
    assert bits(run("then(open(d), closed(d))", frames)) == "001"


@pytest.mark.parametrize(
    ("sugar", "first", "second"),
    [("closed_after_open", "open", "closed"), ("turned_off_after_on", "turned_on", "turned_off")],
)
def test_then_sugar(sugar: str, first: str, second: str) -> None:
    frames = merge(seq((first, "f"), "0011000"), seq((second, "f"), "1100010"))
    assert bits(run(f"{sugar}(f)", frames)) == "0000011"
    assert expand_sugar(parse(f"{sugar}(f)")) == parse(f"then({first}(f), {second}(f))")


def test_held_counts_consecutive_steps() -> None:
    frames = seq(("grasped", "o"), "1101110")
    # Steps 3, 4, 5 are the first run of 3; latched from then on.
    assert bits(run("held(grasped(o), 3)", frames)) == "0000011"
    assert bits(run("held(grasped(o), 2)", frames)) == "0111111"
    assert bits(run("held(grasped(o), 1)", frames)) == bits(run("ever(grasped(o))", frames))
    assert bits(run("held(grasped(o), 4)", frames)) == "0000000"


def test_history_inside_short_circuit_still_advances() -> None:
    # At step 1 open(x) is false, so `and` is decided, but ever(grasped) must still see step 1.
    frames = merge(seq(("open", "x"), "001"), seq(("grasped", "o"), "010"))
    assert bits(run("open(x) and ever(grasped(o))", frames)) == "001"
    assert bits(run("not open(x) or then(grasped(o), open(x))", frames)) == "111"
    assert bits(run("was_grasped(o) and not was_open(x)", frames)) == "010"


def test_nested_history_and_reset() -> None:
    # "the drawer was opened and then, later, the bowl was held for 2 steps"
    frames = merge(seq(("open", "d"), "0100000"), seq(("grasped", "b"), "1001100"))
    text = "then(was_open(d), held(grasped(b), 2))"
    # was_open from step 1; grasped held 2 steps first at step 4 (steps 3-4).
    assert bits(run(text, frames)) == "0000111"
    pred = compile_predicate(parse("was_open(d)"))
    assert pred.stateful
    assert pred.evaluate(FakeView({("open", "d"): True})) is True
    assert pred.evaluate(FakeView()) is True
    pred.reset()
    assert pred.evaluate(FakeView()) is False


# ------------------------------------------------------------------ check


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("opne(d)", "unknown predicate 'opne' in opne(d); did you mean 'open'?"),
        ("was_opn(d) and closed(d)", "did you mean 'was_open'?"),
        ("zzzzzz(d)", "see CATALOGUE"),
        ("on(a)", "on() takes 2 argument(s) (name, name), got 1 in on(a)"),
        ("ever(open(a), open(b))", "ever() takes 1 argument(s)"),
        ("open(3)", "open() argument 1 must be a name, got 3 (a number)"),
        ("on([a, b], c)", "on() argument 1 must be a name, got [a, b] (a list)"),
        ("any_on(a, c)", "any_on() argument 1 must be a list, got a (a name)"),
        ("any_on([a, 2], c)", "list items must be names, got 2"),
        ("ever(a)", "ever() argument 1 must be a bool, got a (a name)"),
        ("held(open(a), 0)", "held() argument 2 must be a positive integer, got 0"),
        ("held(open(a), 1.5)", "must be a positive integer, got 1.5"),
        ("open(a) == closed(a)", "cannot compare open(a) (a bool)"),
        ("tilt(a) < b", "cannot compare b (a name)"),
        ("open(a) and tilt(a)", "tilt(a) is a number, but 'and'/'or'/'not' need conditions"),
        ("tilt(a)", "predicate tilt(a) is a number, not a condition"),
        ("plate_1", "predicate plate_1 is a name, not a condition"),
        ("pour_count(a, b)", "is a number, not a condition"),
    ],
)
def test_check_errors(text: str, fragment: str) -> None:
    with pytest.raises(ExprError) as info:
        check(parse(text))
    assert fragment in str(info.value)


@pytest.mark.parametrize(
    "text",
    [
        "and(was_open($drawer), closed($drawer))",
        "on($target, plate_1) and not any_on($others, plate_1)",
        "pour_count($obj, $target) >= $n",
        "held(grasped($o), $steps)",
        "in($pair.first, $drawer.region)",
        "any_on([$a, b], c)",
    ],
)
def test_check_accepts_templates_with_refs(text: str) -> None:
    check(parse(text))


def test_compile_rejects_leftover_refs_and_bad_predicates() -> None:
    with pytest.raises(ExprError, match=r"unsubstituted reference\(s\) \$drawer"):
        compile_predicate(parse("open($drawer)"))
    with pytest.raises(ExprError, match="did you mean 'closed'"):
        compile_predicate(parse("clsed(d)"))


def test_pour_count_reads_counters_and_reports_pairs() -> None:
    pred = compile_predicate(parse("pour_count(sauce, bowl) >= 2 and pour_count(wine, mug) == 0"))
    assert pred.pour_pairs() == {("sauce", "bowl"), ("wine", "mug")}
    counters = PourCounters([("sauce", "bowl"), ("wine", "mug")])
    assert pred.evaluate(FakeView(), counters) is False
    counters._counters[("sauce", "bowl")].count = 2
    assert pred.evaluate(FakeView(), counters) is True
    with pytest.raises(RuntimeError, match="needs PourCounters"):
        pred.evaluate(FakeView())
    with pytest.raises(KeyError, match="no pour counter for x->y"):
        PourCounters([("sauce", "bowl")]).count("x", "y")


# ------------------------------------------------------------ pour counter

TWO_POURS = [0.0, 0.0, 0.3, 0.6, 0.3, 0.05, 0.0, 0.3, 0.6, 0.6, 0.05, 0.0]


def feed(counter: PourCounter, tilts: list[float], dists: float | list[float] = 0.05) -> list[int]:
    """Feed a tilt sequence; returns the indices of the steps where a pour completed."""
    dists = [dists] * len(tilts) if isinstance(dists, float) else dists
    return [i for i, (t, d) in enumerate(zip(tilts, dists, strict=True)) if counter.update(t, d)]


def test_two_pours_counted_exactly() -> None:
    counter = PourCounter("sauce", "bowl")
    assert feed(counter, TWO_POURS) == [5, 10]
    assert counter.count == 2
    assert counter.baseline == 0.0


def test_each_counted_pour_keeps_its_peak_tilt() -> None:
    # A full pour, a wobble far from the bowl (not counted, no peak), a small tilt that crossed `away`.
    tilts = [0.0, 0.3, 0.6, 0.05, 0.0, 0.4, 0.0, 0.16, 0.21, 0.1]
    dists = [0.05] * 5 + [0.5, 0.5] + [0.05] * 3
    counter = PourCounter("sauce", "bowl")
    assert feed(counter, tilts, dists) == [3, 9]
    assert counter.peaks == [0.6, 0.21]
    counters = PourCounters([("sauce", "bowl")])
    assert counters.peaks() == {"sauce->bowl": []}
    counter.reset()
    assert counter.peaks == []


def test_tilt_far_from_target_is_not_counted() -> None:
    counter = PourCounter("sauce", "bowl")
    assert feed(counter, TWO_POURS, 0.5) == []
    assert counter.count == 0
    # Crossing `away` while far, then carried over the bowl still tilted: not a pour.
    dists = [0.5, 0.5, 0.5, 0.05, 0.05, 0.05]
    assert feed(PourCounter("s", "b"), [0.0, 0.0, 0.6, 0.6, 0.6, 0.0], dists) == []
    # near_radius is inclusive; a custom radius is honoured.
    assert feed(PourCounter("s", "b", near_radius=0.6), TWO_POURS, 0.5) == [5, 10]
    assert feed(PourCounter("s", "b"), TWO_POURS, 0.15) == [5, 10]


def test_tilt_that_never_comes_back_is_not_counted() -> None:
    counter = PourCounter("sauce", "bowl")
    assert feed(counter, [0.0, 0.3, 0.6, 0.6, 0.6, 0.6]) == []
    assert counter.in_progress
    # Coming back to 0.12 rad is not within `back` (0.10) of the baseline.
    assert feed(PourCounter("s", "b"), [0.0, 0.6, 0.12, 0.12, 0.11]) == []


def test_thresholds_are_inclusive_and_small_wobbles_ignored() -> None:
    assert feed(PourCounter("s", "b"), [0.0, 0.15, 0.10]) == [2]
    assert feed(PourCounter("s", "b"), [0.0, 0.14, 0.0, 0.14, 0.0]) == []


def test_first_tilt_is_the_baseline() -> None:
    counter = PourCounter("s", "b")
    assert feed(counter, [0.3, 0.9, 0.35]) == [2]
    assert counter.baseline == 0.3


def test_rebaseline_moves_the_reference() -> None:
    # The bottle ends a stage leaning at 0.2 rad away from the bowl, then pours and returns to 0.22.
    tilts, dists = [0.0, 0.2, 0.8, 0.22], [0.5, 0.5, 0.05, 0.05]
    without = PourCounter("s", "b")
    assert feed(without, tilts, dists) == []
    with_rebase = PourCounter("s", "b")
    feed(with_rebase, tilts[:2], dists[:2])
    with_rebase.rebaseline(0.2)
    assert with_rebase.baseline == 0.2
    assert feed(with_rebase, tilts[2:], dists[2:]) == [1]
    assert with_rebase.count == 1


def test_rebaseline_ignored_on_the_step_a_pour_completes() -> None:
    # Two pours, each completing 0.09 rad short of upright, each starting a stage (a
    # rebaseline request on the completion step). Were it honoured, the baseline would
    # drift 0.09 rad per pour and an upright bottle would soon read as a new excursion.
    counter = PourCounter("s", "b")
    for _ in range(2):
        completed = feed(counter, [0.0, 0.6, 0.09])
        counter.rebaseline(0.09)
        assert completed == [2] and counter.baseline == 0.0
    feed(counter, [0.0, 0.09, 0.0, 0.08])
    assert counter.count == 2
    # On a later step (no pour completing), a stage start does move the baseline.
    counter.rebaseline(0.08)
    assert counter.baseline == 0.08


def test_rebaseline_ignored_during_pour_and_reset() -> None:
    counter = PourCounter("s", "b")
    feed(counter, [0.0, 0.6])
    counter.rebaseline(0.6)
    assert counter.baseline == 0.0
    assert feed(counter, [0.0]) == [0]
    counter.reset(0.4)
    assert (counter.count, counter.baseline, counter.in_progress) == (0, 0.4, False)
    with pytest.raises(ValueError, match="back < away"):
        PourCounter("s", "b", away=0.1, back=0.1)
    with pytest.raises(ValueError, match="not finite"):
        counter.update(float("nan"), 0.0)


def test_pour_counters_query_the_view() -> None:
    counters = PourCounters([("sauce", "bowl"), ("sauce", "mug")], away=0.2)
    view = FakeView()
    poured_at = []
    for step, tilt in enumerate(TWO_POURS):
        view.facts = {("tilt", "sauce"): tilt, ("distance", "sauce", "bowl"): 0.05,
                      ("distance", "sauce", "mug"): 0.4}  # fmt: skip
        view.queries.clear()
        if done := counters.update(view):
            poured_at.append((step, done))
    assert poured_at == [(5, [("sauce", "bowl")]), (10, [("sauce", "bowl")])]
    # tilt asked once per object, distance once per pair.
    assert sorted(view.queries) == [
        ("distance", ("sauce", "bowl")), ("distance", ("sauce", "mug")), ("tilt", ("sauce",))
    ]  # fmt: skip
    assert counters.counts() == {"sauce->bowl": 2, "sauce->mug": 0}
    assert counters.count("sauce", "bowl") == 2
    counters.reset(FakeView({("tilt", "sauce"): 0.3}))
    assert counters.counts() == {"sauce->bowl": 0, "sauce->mug": 0}
    assert counters._counters[("sauce", "bowl")].baseline == 0.3
    with pytest.raises(ValueError, match="unknown pour parameter"):
        PourCounters([("a", "b")], awy=0.2)
