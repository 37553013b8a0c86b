"""The arena's rules on synthetic state traces: its pour rule, its counting monitor, its
microwave tasks without a close stage, and the per-axis predicates its stages use.

No simulator runs: the real arena task files drive the episode's tracker over a dict-backed StateView.
"""

from __future__ import annotations

import pytest

from memobench.core.expr import parse
from memobench.core.predicates import CATALOGUE, PourCounter, check, compile_predicate
from memobench.core.suite import Suite
from memobench.core.tracker import EXTRA_POUR
from memobench.evaluation.episode import build_tracker
from memobench.evaluation.protocol import Protocol

ARENA = Suite.load(arena=True)
COUNTING_POUR_TASKS = [6, 7, 8, 9, 10, 15, 16, 22]
MICROWAVE_TASKS = [20, 21, 22, 23, 24]


class TraceView:
    """A StateView over one frame of facts {(predicate, *args): value}; numbers default to 0."""

    def __init__(self) -> None:
        self.frame: dict = {}

    def query(self, name: str, args: tuple[str, ...]) -> bool | float:
        return self.frame.get((name, *args), False if CATALOGUE[name].returns == "bool" else 0.0)


def arena_task(number: int):
    return ARENA.get(f"A{number:02d}")


def feed(counter: PourCounter, tilts: list[float], dists: float | list[float] = 0.05) -> list[int]:
    dists = dists if isinstance(dists, list) else [dists] * len(tilts)
    return [i for i, (t, d) in enumerate(zip(tilts, dists, strict=True)) if counter.update(t, d)]


# ------------------------------------------------------------------ pour rule


def test_median_baseline_of_the_first_five_tilts() -> None:
    counter = PourCounter("s", "b", baseline_samples=5)
    # A spike inside the first five samples neither starts a pour nor sets the baseline.
    assert feed(counter, [0.02, 0.9, 0.04, 0.03, 0.05]) == []
    assert counter.baseline == pytest.approx(0.04)
    assert feed(counter, [0.3, 0.1]) == [1]  # 0.26 away from 0.04, back within 0.10
    # With one sample (MEMOBench's rule) the first tilt is the baseline and the spike counts.
    assert feed(PourCounter("s", "b"), [0.02, 0.9, 0.04]) == [2]


def test_near_at_any_step_of_the_excursion() -> None:
    tilts = [0.0, 0.5, 0.6, 0.6, 0.0]
    dists = [0.5, 0.5, 0.18, 0.5, 0.5]  # tilted far away, carried over the target, carried off
    assert feed(PourCounter("s", "b", near_radius=0.20, near_during=True), tilts, dists) == [4]
    assert feed(PourCounter("s", "b", near_radius=0.20), tilts, dists) == []  # near only at the start counts
    assert feed(PourCounter("s", "b", near_radius=0.20, near_during=True), tilts, [0.5] * 5) == []


def test_next_window_starts_on_the_step_a_pour_completes() -> None:
    # Arena: the second pour's window starts where the first completed, its baseline the
    # median of that step's tilt and the next four.
    counter = PourCounter("s", "b", baseline_samples=5)
    feed(counter, [0.0] * 5)
    assert feed(counter, [0.6, 0.08]) == [1]
    counter.rebaseline(0.08)
    assert counter.baseline is None
    feed(counter, [0.02, 0.0, 0.0, 0.0])
    assert counter.baseline == 0.0
    assert feed(counter, [0.5, 0.05]) == [1]
    assert counter.count == 2


# ------------------------------------------------------------- per-axis predicates


def test_per_axis_predicates_are_numbers_of_names() -> None:
    for axis in "xyz":
        check(parse(f"shift_{axis}(drawer) > 0.10"))
        check(parse(f"offset_{axis}(a, b) < 0.20"))
    drawer_open = compile_predicate(parse("shift_y(d) > 0.10 or shift_y(d) < -0.10"))
    view = TraceView()
    values = []
    for y in (0.0, -0.05, -0.11, 0.02, 0.12):
        view.frame = {("shift_y", "d"): y}
        values.append(drawer_open.evaluate(view))
    assert values == [False, False, True, False, True]


# ------------------------------------------------------------- the task files


def test_the_arena_lists_26_tasks_and_stays_out_of_all() -> None:
    assert [t.id[:3] for t in ARENA.select("arena")] == sorted(f"A{n:02d}" for n in range(1, 27))
    assert len(ARENA.select("all")) == len(Suite.load()) == 30
    assert [t.id[:3] for t in ARENA.select("counting")] == ["T09", "T10"]  # MEMOBench's tag wins
    assert {t.spec.family.value for t in ARENA.select("arena")} == {"sequence", "occlusion", "counting", "transfer"}
    assert all(t.spec.suite == "arena" and t.spec.horizon == 3000 for t in ARENA.select("arena"))


def test_counting_pour_tasks_use_the_arena_pour_rule() -> None:
    counting = sorted(int(t.id[1:3]) for t in ARENA.select("arena") if t.spec.counting is not None)
    assert counting == COUNTING_POUR_TASKS
    for n in COUNTING_POUR_TASKS:
        c = arena_task(n).spec.counting
        assert (c.required, c.near_radius, c.baseline_samples, c.near_during) == (2, 0.20, 5, True)
        assert arena_task(n).spec.monitor_steps == 0  # the extra-pour monitor ends the episode
    assert {arena_task(n).spec.monitor_steps for n in range(1, 27) if n not in COUNTING_POUR_TASKS} == {200}


def test_microwave_tasks_need_no_close_stage() -> None:
    for n in MICROWAVE_TASKS:
        spec = arena_task(n).spec
        closes = [cp for cp in spec.checkpoints if "opening(microwave_1) <" in cp.predicate]
        assert all(cp.optional for cp in closes), spec.id
        assert (
            "opening(microwave_1) <" not in next(cp for cp in spec.checkpoints if cp.id == spec.last_required).predicate
        )


# ------------------------------------------------------------ whole-task traces


def pour_frames(bottle: str, target: str, pours: int, dist: float = 0.1) -> list[dict]:
    """Frames: the bottle lifted, then ``pours`` excursions over the target, each followed by rest."""
    lifted = {("shift_z", bottle): 0.05, ("distance", bottle, target): dist}
    frames = [dict(lifted) for _ in range(8)]
    for _ in range(pours):
        frames += [{**lifted, ("tilt", bottle): 0.6} for _ in range(3)]
        frames += [dict(lifted) for _ in range(8)]
    return frames


def run_task(task, frames: list[dict], protocol: Protocol | None = None):
    tracker = build_tracker(task, {}, protocol or Protocol(name="robomemarena"))  # the arena's own rules
    view = TraceView()
    tracker.reset(view)
    for step, frame in enumerate(frames):
        view.frame = frame
        tracker.update(view, step)
    return tracker


@pytest.mark.parametrize("number", [6, 10, 15])
def test_two_pours_then_the_monitor_passes(number: int) -> None:
    task = arena_task(number)
    c = task.spec.counting
    frames = pour_frames(c.object, c.target, 2)
    tracker = run_task(task, frames + [frames[-1]] * 30)
    assert tracker.stage_score == 1.0 and tracker.violation is None
    assert tracker.finished  # 30 steps after the second pour, no post-goal window


def test_a_third_pour_inside_the_monitor_fails_with_extra_pour() -> None:
    task = arena_task(6)
    frames = pour_frames("tomato_sauce_1", "cookies_1", 3)
    tracker = run_task(task, frames)
    assert tracker.stage_score == 1.0
    assert tracker.violation == EXTRA_POUR and not tracker.finished
    # Without strict rejection (--no-fail-on-extra-pour) the pour is recorded, not failed.
    lenient = run_task(task, frames + [frames[-1]] * 30, Protocol(name="robomemarena", fail_on_extra_pour=False))
    assert lenient.extra_pours and lenient.violation is None and lenient.finished


def test_monitor_incomplete_when_the_episode_ends_inside_it() -> None:
    task = arena_task(7)
    tracker = run_task(task, pour_frames("tomato_sauce_1", "chefmate_8_frypan_1", 2))
    assert tracker.required_done and not tracker.window_passed and not tracker.finished


def test_pours_far_from_the_target_do_not_count() -> None:
    tracker = run_task(arena_task(6), pour_frames("tomato_sauce_1", "cookies_1", 2, dist=0.35))
    assert tracker.stage_score == pytest.approx(1 / 3)  # lifted only


def test_microwave_task_succeeds_with_the_door_left_open() -> None:
    task = arena_task(20)
    region = "microwave_1_heating_region"
    away = {(f"offset_{axis}", item, region): 1.0 for axis in "xy" for item in ("cookies_1", "chocolate_pudding_1")}
    opened = {**away, ("opening", "microwave_1"): 0.4}
    cookies_in = {**opened, ("offset_x", "cookies_1", region): 0.05, ("offset_y", "cookies_1", region): -0.1}
    both_in = {
        **cookies_in,
        ("offset_x", "chocolate_pudding_1", region): 0.0,
        ("offset_y", "chocolate_pudding_1", region): 0.0,
    }
    # the door must open past 0.30 rad first; items "in" before that do not count
    frames = [both_in | {("opening", "microwave_1"): 0.25}] * 3 + [opened, cookies_in, both_in]
    tracker = run_task(task, frames + [both_in] * 200)
    assert tracker.completed_steps == [3, 4, 5] and tracker.finished
    # The post-goal window (RoboMemArena's 200 steps) has to run out first.
    assert not run_task(task, frames + [both_in] * 199).finished


def test_optional_close_stage_is_not_counted() -> None:
    task = arena_task(22)
    assert [cp.optional for cp in task.spec.checkpoints] == [False] * 6 + [True]
