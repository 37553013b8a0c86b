"""Checkpoint tracker: prefix completion, history per checkpoint, stages, pour monitor.

Driven by a fake StateView over scripted per-step facts: no simulator.
"""

from __future__ import annotations

import pytest

from memobench.core.expr import ExprError, parse
from memobench.core.records import CheckpointResult
from memobench.core.spec import MemoryOp
from memobench.core.tracker import (
    CheckpointTracker,
    CountingMonitor,
    TrackedCheckpoint,
    TrackedViolation,
)

S, U, C = MemoryOp.STORAGE, MemoryOp.UPDATE, MemoryOp.COMPRESSION
NUMBER_DEFAULTS = {"tilt": 0.0, "height": 0.0, "distance": 1.0, "opening": 0.0}


class FakeView:
    """A StateView over a dict {(predicate, *args): value}; bools default False."""

    def __init__(self, facts: dict | None = None) -> None:
        self.facts = dict(facts or {})

    def query(self, name: str, args: tuple[str, ...]) -> bool | float:
        return self.facts.get((name, *args), NUMBER_DEFAULTS.get(name, False))


def cp(text: str, op: MemoryOp = S, optional: bool = False) -> TrackedCheckpoint:
    return TrackedCheckpoint(parse(text), op, optional)


def frames_from(spec: dict[tuple, str], n: int) -> list[dict]:
    """Per-step facts from {fact: '0110...'}; missing characters mean false."""
    return [{k: i < len(v) and v[i] == "1" for k, v in spec.items()} for i in range(n)]


def drive(tracker: CheckpointTracker, frames: list[dict]) -> dict[int, list[int]]:
    """Reset on the first frame, then update once per frame; {step: completed} where non-empty."""
    view = FakeView(frames[0])
    tracker.reset(view)
    out = {}
    for step, facts in enumerate(frames):
        view.facts = facts
        if done := tracker.update(view, step):
            out[step] = done
    return out


# ------------------------------------------------------------ prefix rule


def test_open_then_close_drawer() -> None:
    tracker = CheckpointTracker([cp("was_open(top)"), cp("closed_after_open(top)", U)])
    frames = frames_from({("open", "top"): "0110", ("closed", "top"): "1001"}, 5)
    assert drive(tracker, frames) == {1: [0], 3: [1]}
    assert tracker.completed_steps == [1, 3]
    assert tracker.required_done and tracker.finished and tracker.violation is None
    assert tracker.stage_score == 1.0 and tracker.average_score == 1.0
    assert tracker.current_index is None


def test_out_of_order_checkpoint_does_not_count() -> None:
    tracker = CheckpointTracker([cp("on(bowl, plate)"), cp("in(butter, basket)", U)])
    frames = frames_from({("in", "butter", "basket"): "1001", ("on", "bowl", "plate"): "0111"}, 4)
    # Butter in basket at step 0 precedes the bowl; it counts again only at step 3.
    assert drive(tracker, frames) == {1: [0], 3: [1]}
    assert tracker.completed_steps == [1, 3]


def test_history_before_eligibility_does_not_count() -> None:
    # Middle drawer checked (steps 0-1) before the top one (steps 2-3): not "after top".
    tracker = CheckpointTracker([cp("closed_after_open(top)"), cp("closed_after_open(middle)", U)])
    frames = frames_from(
        {("open", "middle"): "1000000", ("closed", "middle"): "0111001",
         ("open", "top"): "0010000", ("closed", "top"): "0001111"},
        7,
    )  # fmt: skip
    assert drive(tracker, frames[:5]) == {3: [0]}
    assert tracker.completed_steps == [3, None]
    assert tracker.current_index == 1 and tracker.stage_score == 0.5
    assert not tracker.finished
    # Checked properly afterwards: open at step 5, closed at step 6.
    frames[5][("open", "middle")] = True
    frames[5][("closed", "middle")] = False
    assert drive(tracker, frames) == {3: [0], 6: [1]}


def test_cascading_completion_in_one_step() -> None:
    tracker = CheckpointTracker([cp("open(d)"), cp("was_open(d)", U), cp("grasped(o) and open(d)", C), cp("lifted(o)")])
    frames = frames_from({("open", "d"): "001", ("grasped", "o"): "011", ("lifted", "o"): "0001"}, 4)
    # Steps 0-1: nothing eligible holds. Step 2: three complete at once (history of 1 starts at 2).
    assert drive(tracker, frames) == {2: [0, 1, 2], 3: [3]}
    assert tracker.completed_steps == [2, 2, 2, 3]


def test_optional_does_not_block_and_scores() -> None:
    tracker = CheckpointTracker([cp("on(a, p)"), cp("on(b, p)", U, optional=True), cp("on(c, p)", U)])
    # b holds at step 0 but is not eligible until a completes (step 1).
    frames = frames_from({("on", "b", "p"): "10001", ("on", "a", "p"): "01", ("on", "c", "p"): "001"}, 4)
    assert drive(tracker, frames) == {1: [0], 2: [2]}
    assert tracker.completed_steps == [1, None, 2]
    assert tracker.stages_complete and tracker.finished
    assert tracker.stage_score == 1.0
    assert tracker.average_score == pytest.approx(2 / 3)
    assert tracker.results() == [
        CheckpointResult(index=0, op=S, optional=False, completed=True, step=1),
        CheckpointResult(index=1, op=U, optional=True, completed=False, step=None),
        CheckpointResult(index=2, op=U, optional=False, completed=True, step=2),
    ]
    # The optional checkpoint stays eligible after later ones completed.
    frames.append({("on", "b", "p"): True})
    assert drive(tracker, frames) == {1: [0], 2: [2], 4: [1]}
    assert tracker.average_score == 1.0


def test_stage_score_and_current_index_progress() -> None:
    tracker = CheckpointTracker([cp("open(a)"), cp("open(b)", U), cp("open(c)", C)])
    view = FakeView()
    tracker.reset(view)
    assert (tracker.current_index, tracker.stage_score) == (0, 0.0)
    view.facts = {("open", "a"): True}
    assert tracker.update(view, 0) == [0]
    assert (tracker.current_index, tracker.stage_score) == (1, pytest.approx(1 / 3))
    assert [r.completed for r in tracker.results()] == [True, False, False]


def test_reset_starts_a_new_episode_and_steps_must_increase() -> None:
    tracker = CheckpointTracker([cp("was_open(d)"), cp("closed(d)", U)])
    frames = frames_from({("open", "d"): "01", ("closed", "d"): "001"}, 3)
    assert drive(tracker, frames) == {1: [0], 2: [1]}
    assert drive(tracker, frames) == {1: [0], 2: [1]}  # drive() resets: same again
    tracker.reset(FakeView())
    assert tracker.completed_steps == [None, None]
    tracker.update(FakeView(), 5)
    with pytest.raises(ValueError, match="steps must increase: got 5 after 5"):
        tracker.update(FakeView(), 5)


def test_constructor_validates() -> None:
    with pytest.raises(ExprError, match="unsubstituted"):
        CheckpointTracker([cp("open($drawer)")])
    with pytest.raises(ValueError, match="at least one checkpoint"):
        CheckpointTracker([])
    with pytest.raises(ValueError, match="required must be >= 1"):
        CountingMonitor("a", "b", required=0)


# --------------------------------------------------------------- pouring

POUR = [0.3, 0.6, 0.6, 0.3, 0.0]  # crosses `away` at its first step, completes at its last


def pour_frames(n: int, pours_at: list[int], held_until: int = 0) -> list[dict]:
    """n steps of a sauce bottle over the bowl (grasped for steps < held_until);
    a pour starts at each step in pours_at."""
    tilts = [0.0] * n
    for start in pours_at:
        tilts[start : start + len(POUR)] = POUR
    return [
        {
            ("tilt", "sauce"): t,
            ("distance", "sauce", "bowl"): 0.05,
            ("grasped", "sauce"): i < held_until,
        }
        for i, t in enumerate(tilts)
    ]


def counting_tracker(**monitor: object) -> CheckpointTracker:
    return CheckpointTracker(
        [
            cp("pour_count(sauce, bowl) >= 1"),
            cp("pour_count(sauce, bowl) >= 2", U),
            cp("pour_count(sauce, bowl) == 2 and not grasped(sauce)", C),
        ],
        counting=CountingMonitor("sauce", "bowl", required=2, monitor_steps=10, **monitor),
    )


# ------------------------------------------------------- violations, post-goal window


def rule(name: str, text: str, after: int | None = None, until: int | None = None) -> TrackedViolation:
    return TrackedViolation(name, parse(text), after, until)


def check_tracker(**kwargs) -> CheckpointTracker:
    """T01's shape: open the top drawer (S), close it again (U)."""
    return CheckpointTracker([cp("open(top)"), cp("closed_after_open(top)", U)], **kwargs)


CHECK = {("open", "top"): "01100000000", ("closed", "top"): "10011111111"}  # opened 1-2, shut from 3


def test_post_goal_window_delays_success() -> None:
    tracker = check_tracker(post_goal_steps=4)
    frames = frames_from(CHECK, 11)
    assert drive(tracker, frames[:7]) == {1: [0], 3: [1]}  # goal at 3: the window is steps 4..7
    assert tracker.goal_step == 3 and tracker.required_done
    assert not tracker.finished and not tracker.stages_complete
    drive(tracker, frames[:8])
    assert tracker.finished and tracker.stages_complete and tracker.violation is None


def test_post_goal_rule_fails_a_redo_inside_the_window() -> None:
    redo = rule("top-reopened", "open(top)", after=1)
    tracker = check_tracker(violations=[redo], post_goal_steps=4)
    frames = frames_from({("open", "top"): "01100100000", ("closed", "top"): "10011011111"}, 11)
    drive(tracker, frames)
    assert (tracker.violation, tracker.violation_step) == ("top-reopened", 5)
    assert tracker.required_done and not tracker.finished and not tracker.stages_complete


def test_rule_is_watched_only_while_active() -> None:
    # Opening the middle drawer is forbidden until the top one is checked (index 1).
    early = rule("middle-first", "open(middle)", until=1)
    tracker = check_tracker(violations=[early])
    drive(tracker, frames_from({**CHECK, ("open", "middle"): "00001"}, 6))
    assert tracker.violation is None  # the middle drawer opened at 4, after the check at 3
    tracker = check_tracker(violations=[early])
    drive(tracker, frames_from({**CHECK, ("open", "middle"): "01"}, 6))
    assert (tracker.violation, tracker.violation_step) == ("middle-first", 1)


def test_rule_history_starts_when_it_becomes_active() -> None:
    # ever(x) in a rule active after checkpoint 0 (step 1) ignores x held at step 0.
    late = rule("ever-x", "ever(on(x, y))", after=0)
    tracker = check_tracker(violations=[late])
    drive(tracker, frames_from({**CHECK, ("on", "x", "y"): "1"}, 6))
    assert tracker.violation is None
    tracker = check_tracker(violations=[late])
    drive(tracker, frames_from({**CHECK, ("on", "x", "y"): "001"}, 6))
    assert (tracker.violation, tracker.violation_step) == ("ever-x", 2)


def test_numeric_rule_and_first_violation_wins() -> None:
    rules = [rule("pulled", "opening(top) > 0.03", after=1), rule("any", "open(top)", after=1)]
    tracker = check_tracker(violations=rules, post_goal_steps=10)
    view_frames = frames_from(CHECK, 8)
    for i in (5, 6, 7):
        view_frames[i][("opening", "top")] = 0.05
    view_frames[6][("open", "top")] = True
    drive(tracker, view_frames)
    assert (tracker.violation, tracker.violation_step) == ("pulled", 5)  # sticky: the later one is not recorded


def test_rule_indices_are_checked() -> None:
    with pytest.raises(ValueError, match="refers to checkpoint 2"):
        check_tracker(violations=[rule("bad", "open(top)", after=2)])
    with pytest.raises(ValueError, match="post_goal_steps"):
        check_tracker(post_goal_steps=-1)


# Pours complete at steps 6 and 13; the bottle is released at step 14; window is 14..23.
RELEASE = 14


def test_exactly_two_pours_finish_after_the_window() -> None:
    tracker = counting_tracker()
    frames = pour_frames(30, [2, 9], held_until=RELEASE)
    assert drive(tracker, frames[:23]) == {6: [0], 13: [1], 14: [2]}
    assert tracker.window_start == 13
    assert tracker.required_done and not tracker.finished  # window 14..23 not over at step 22
    assert drive(tracker, frames[:24]) == {6: [0], 13: [1], 14: [2]}
    assert tracker.finished and tracker.violation is None
    assert tracker.pour_counts() == {"sauce->bowl": 2}
    assert tracker.pour_tilts() == {"sauce->bowl": [max(POUR)] * 2}


def test_third_pour_inside_window_is_a_violation() -> None:
    tracker = counting_tracker()
    # Third pour completes at step 19 (inside 14..23); the bottle is released at 14 then re-grasped.
    drive(tracker, pour_frames(30, [2, 9, 15], held_until=RELEASE))
    assert tracker.violation == "extra_pour"
    assert tracker.extra_pours == [19]
    assert not tracker.finished
    assert tracker.required_done  # the checkpoints themselves completed at 6, 13, 14
    assert tracker.completed_steps == [6, 13, 14]
    assert tracker.pour_counts() == {"sauce->bowl": 3}


def test_third_pour_after_window_is_not_a_violation() -> None:
    tracker = counting_tracker()
    drive(tracker, pour_frames(32, [2, 9, 25], held_until=RELEASE))  # completes at 29
    assert tracker.violation is None and tracker.extra_pours == []
    assert tracker.finished
    assert tracker.pour_counts() == {"sauce->bowl": 3}


def test_window_edge_is_inclusive() -> None:
    tracker = counting_tracker()
    drive(tracker, pour_frames(30, [2, 9, 19], held_until=RELEASE))  # completes at 23
    assert tracker.extra_pours == [23] and tracker.violation == "extra_pour"


def test_no_fail_on_extra_records_but_carries_on() -> None:
    tracker = counting_tracker(fail_on_extra=False)
    drive(tracker, pour_frames(30, [2, 9, 15], held_until=RELEASE))
    assert tracker.violation is None
    assert tracker.extra_pours == [19]
    assert tracker.finished


def test_counting_task_needs_the_required_pours_to_finish() -> None:
    # The checkpoints do not read the counter; the monitor's pair is tracked anyway.
    tracker = CheckpointTracker(
        [cp("grasped(sauce)")],
        counting=CountingMonitor("sauce", "bowl", required=2, monitor_steps=3),
    )
    drive(tracker, pour_frames(12, [2], held_until=1))
    assert tracker.required_done and tracker.window_start is None
    assert not tracker.finished and not tracker.window_passed
    assert tracker.pour_counts() == {"sauce->bowl": 1}


def test_stage_start_rebaselines_pour_counters() -> None:
    # The bottle is knocked to 0.3 rad away from the bowl (step 1) and lifted at step 2
    # (stage 0 done -> rebaseline to 0.3); it then pours over the bowl and returns to 0.32.
    tilts = [0.0, 0.3, 0.3, 0.9, 0.32]
    dists = [0.5, 0.5, 0.5, 0.05, 0.05]

    def run(first_optional: bool) -> CheckpointTracker:
        tracker = CheckpointTracker(
            [cp("lifted(sauce)", optional=first_optional), cp("pour_count(sauce, bowl) >= 1", U)]
        )
        frames = [
            {("tilt", "sauce"): t, ("distance", "sauce", "bowl"): d, ("lifted", "sauce"): i >= 2}
            for i, (t, d) in enumerate(zip(tilts, dists, strict=True))
        ]
        drive(tracker, frames)
        return tracker

    required = run(first_optional=False)
    assert required.completed_steps == [2, 4]
    assert required.pour_counts() == {"sauce->bowl": 1}
    # An optional checkpoint completing is not a stage start: no rebaseline, no pour.
    optional = run(first_optional=True)
    assert optional.completed_steps == [2, None]
    assert optional.pour_counts() == {"sauce->bowl": 0}


def test_pour_params_are_passed_to_counters() -> None:
    tracker = CheckpointTracker([cp("pour_count(sauce, bowl) >= 1")], pour_params={"away": 0.7})
    drive(tracker, pour_frames(8, [1]))  # peaks at 0.6 < 0.7
    assert tracker.pour_counts() == {"sauce->bowl": 0}
    with pytest.raises(ValueError, match="unknown pour parameter"):
        CheckpointTracker([cp("open(d)")], pour_params={"radius": 1.0})
