"""Register rules (docs/protocol.md, "Registers"): what each task gets besides its own rules.

No simulator: rules are derived from parsed predicates and BDDL text, and driven through the
tracker with scripted per-step facts.
"""

from __future__ import annotations

from memobench.core import registers
from memobench.core.expr import parse
from memobench.core.predicates import PourCounter, compile_predicate
from memobench.core.spec import MemoryOp
from memobench.core.suite import Suite
from memobench.core.tracker import POUR_OUTSIDE_ZONE, CheckpointTracker, CountingMonitor, TrackedCheckpoint
from memobench.evaluation.protocol import Protocol
from memobench.evaluation.tracking import LEFT_BEFORE_HOME, build_tracker

S, U = MemoryOp.STORAGE, MemoryOp.UPDATE
SUITE = Suite.load()


class FactsView:
    """A StateView over {(predicate, *args): value}; bools default False, numbers 0."""

    def __init__(self) -> None:
        self.facts: dict = {}

    def query(self, name: str, args: tuple[str, ...]) -> bool | float:
        default = 1.0 if name == "distance" else (0.0 if name in NUMBERS else False)
        return self.facts.get((name, *args), default)


NUMBERS = {
    *("tilt", "height", "distance", "opening", "displacement", "displacement_in", "rotation"),
    *("shift_x", "shift_y", "shift_z"),
}


def run(tracker: CheckpointTracker, frames: list[dict]) -> CheckpointTracker:
    view = FactsView()
    view.facts = frames[0]
    tracker.reset(view)
    for step, facts in enumerate(frames):
        view.facts = facts
        tracker.update(view, step)
    return tracker


def test_subjects_are_first_arguments_and_list_elements() -> None:
    tree = parse("on(a, plate) and not any_on([b, c], plate) and pour_count(bottle, bowl) >= 1 and closed(d_region)")
    assert registers.subjects(tree) == {"a", "b", "c", "bottle", "d_region"}


def test_objects_no_checkpoint_is_about_get_disturbed_later_ones_moved_early() -> None:
    predicates = [parse("open(drawer)"), parse("closed_after_open(drawer)"), parse("on(bowl, plate)")]
    moves = registers.first_moves(predicates, ["bowl", "plate", "mug"])
    assert moves == {"bowl": 2}  # the plate receives, the mug is never named
    rules = registers.still_rules(["bowl", "plate", "mug"], moves, predecessor=[None, 0, 1])
    assert [(name, until) for name, _, until in rules] == [
        ("moved-early:bowl", 1),  # stays put until the check is done (checkpoint 1 completes)
        ("disturbed:mug", None),
        ("disturbed:plate", None),
    ]
    assert rules[1][1] == "displacement(mug) > 0.03 or rotation(mug) > 0.35"


def test_an_object_moved_from_the_start_gets_no_rule() -> None:
    moves = registers.first_moves([parse("on(butter, plate)")], ["butter", "plate"])
    rules = registers.still_rules(["butter", "plate"], moves, predecessor=[None])
    assert [name for name, _, _ in rules] == ["disturbed:plate"]


def test_an_object_that_starts_in_a_drawer_is_measured_against_the_drawer() -> None:
    """A04: the cream cheese starts in the top drawer; opening it to look carries the cheese
    10+ cm (measured against the world, that was `disturbed:cream_cheese_1` at step 46)."""
    region = "wooden_cabinet_1_top_region"
    rule = next(
        v
        for v in build_tracker(Suite.load(arena=True).get("A04"), {}, Protocol()).violations
        if v.name == "disturbed:cream_cheese_1"
    )
    assert rule.predicate == parse(
        f"displacement_in(cream_cheese_1, {region}) > 0.03 or rotation(cream_cheese_1) > 0.35"
    )

    def tracker():
        return CheckpointTracker([TrackedCheckpoint(parse("open(x)"), S)], violations=[rule])

    carried = {("displacement", "cream_cheese_1"): 0.12, ("displacement_in", "cream_cheese_1", region): 0.004}
    assert run(tracker(), [{}, carried, carried]).violation is None
    nudged = {**carried, ("displacement_in", "cream_cheese_1", region): 0.04}
    assert run(tracker(), [{}, carried, nudged]).violation == "disturbed:cream_cheese_1"


def test_fixture_parts_and_their_shut_test() -> None:
    parts = registers.fixture_parts({"wooden_cabinet_1": "wooden_cabinet", "flat_stove_1": "flat_stove", "t": "table"})
    assert parts == [
        ("flat_stove_1", "turned_off"),
        ("wooden_cabinet_1_top_region", "closed"),
        ("wooden_cabinet_1_middle_region", "closed"),
        ("wooden_cabinet_1_bottom_region", "closed"),
    ]
    assert registers.ajar_rules(parts[:1]) == [("ajar:flat_stove_1", "held(ajar(flat_stove_1), 30)")]


def test_t02_tracker_under_each_protocol() -> None:
    task = SUITE.get("T02")
    strict = build_tracker(task, {}, Protocol())
    names = {v.name for v in strict.violations}
    assert {"middle-reopened", "bowl-taken-off", "moved-early:akita_black_bowl_1", "disturbed:plate_1"} <= names
    assert {"ajar:wooden_cabinet_1_top_region", "ajar:wooden_cabinet_1_bottom_region"} <= names
    # the gate sits after the check; the bowl may move once the gate (the arm home) passed
    gates = [i for i, c in enumerate(strict.checkpoints) if c.gate]
    assert gates == [2]
    early = next(v for v in strict.violations if v.name == "moved-early:akita_black_bowl_1")
    assert early.until == 2
    arena = build_tracker(task, {}, Protocol(name="robomemarena"))
    assert {v.name for v in arena.violations} == {"middle-reopened", "bowl-taken-off"}  # the task's own
    assert [c.gate for c in arena.checkpoints] == [False, False, True, False]  # gates are the task's


def test_a_gate_blocks_the_next_checkpoint_and_keeps_its_rule() -> None:
    # S01-like: stored, hidden, [home gate, keep: drawer shut], retrieved
    checkpoints = [
        TrackedCheckpoint(parse("in(item, d)"), S),
        TrackedCheckpoint(parse("closed(d) and in(item, d)"), S),
        TrackedCheckpoint(parse("home()"), None, gate=True),
        TrackedCheckpoint(parse("on(item, plate)"), U),
    ]
    from memobench.core.tracker import TrackedViolation

    keep = TrackedViolation(LEFT_BEFORE_HOME, parse("not closed(d)"), after=1, until=2)
    stored = {("in", "item", "d"): True}
    hidden = {**stored, ("closed", "d"): True}
    plated = {("on", "item", "plate"): True, ("closed", "d"): True}
    # straight from the drawer to the plate, never home: the retrieval cannot count
    never_home = run(CheckpointTracker(checkpoints, violations=[keep]), [stored, hidden, plated, plated])
    assert never_home.completed_steps == [0, 1, None] and not never_home.required_done
    assert never_home.gate_steps() == [None] and never_home.violation is None
    # home, then the plate: complete; results and scores leave the gate out
    home = {**hidden, ("home",): True}
    done = run(CheckpointTracker(checkpoints, violations=[keep]), [stored, hidden, home, plated])
    assert done.completed_steps == [0, 1, 3] and done.gate_steps() == [2] and done.required_done
    assert [r.index for r in done.results()] == [0, 1, 2] and done.stage_score == 1.0
    # the drawer opened again before the arm was home: the keep rule fails the episode
    opened = {("in", "item", "d"): True}
    broke = run(CheckpointTracker(checkpoints, violations=[keep]), [stored, hidden, opened])
    assert broke.violation == LEFT_BEFORE_HOME and broke.violation_step == 2


def test_t09_gates_want_the_bottle_back_in_its_place_with_the_arm_home() -> None:
    tracker = build_tracker(SUITE.get("T09"), {}, Protocol())
    assert [i for i, c in enumerate(tracker.checkpoints) if c.gate] == [1, 3]
    gate = compile_predicate(tracker.checkpoints[1].predicate)
    place = ("distance", "tomato_sauce_1", "kitchen_table_tomato_sauce_init_region")
    view = FactsView()
    view.facts = {("home",): True, place: 0.05, ("upright", "tomato_sauce_1"): True}
    assert not gate.evaluate(view)  # home, the bottle 5 cm from its place: not yet
    view.facts[place] = 0.02
    assert gate.evaluate(view)
    view.facts[("home",)] = False
    assert not gate.evaluate(view)
    keeps = [v for v in tracker.violations if v.name == LEFT_BEFORE_HOME]
    assert [(v.after, v.until) for v in keeps] == [(0, 1), (2, 3)]


def pour_trace(start: float, end: float) -> list[dict]:
    """A bottle lifted near the bowl, one pour that starts at ``start`` m and ends at ``end`` m."""
    rest = {("distance", "bottle", "bowl"): start}
    tilted = {("distance", "bottle", "bowl"): start, ("tilt", "bottle"): 0.6}
    ending = {("distance", "bottle", "bowl"): end, ("tilt", "bottle"): 0.6}
    back = {("distance", "bottle", "bowl"): end}
    return [rest, rest, tilted, ending, back, back]


def pour_tracker(zone: float | None) -> CheckpointTracker:
    return CheckpointTracker(
        [TrackedCheckpoint(parse("pour_count(bottle, bowl) >= 1"), S)],
        counting=CountingMonitor("bottle", "bowl", 1, zone=zone),
    )


def test_a_pour_must_start_and_end_in_the_zone() -> None:
    assert run(pour_tracker(0.12), pour_trace(0.04, 0.05)).violation is None
    started_out = run(pour_tracker(0.12), pour_trace(0.13, 0.05))  # near (0.15) but outside the zone
    assert started_out.pour_counts() == {"bottle->bowl": 1} and started_out.violation == POUR_OUTSIDE_ZONE
    assert run(pour_tracker(0.12), pour_trace(0.04, 0.14)).violation == POUR_OUTSIDE_ZONE
    assert run(pour_tracker(None), pour_trace(0.13, 0.14)).violation is None  # the arena: no zone


def test_pour_counter_keeps_where_each_pour_started_and_ended() -> None:
    counter = PourCounter("bottle", "bowl")
    for tilt, distance in [(0.0, 0.05), (0.6, 0.04), (0.6, 0.08), (0.0, 0.09)]:
        counter.update(tilt, distance)
    assert counter.places == [(0.04, 0.09)]


def test_every_spec_hash_covers_the_register_rules(monkeypatch) -> None:
    task = SUITE.get("S01")
    before = task.spec_hash
    monkeypatch.setattr(registers, "DISTURB_DISTANCE", 0.05)
    assert Suite.load().get("S01").spec_hash != before
