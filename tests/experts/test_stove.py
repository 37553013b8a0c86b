"""The stove knob's decision rule and memory (no simulator: a fake scene with one joint)."""

from __future__ import annotations

import numpy as np
import pytest

from memobench.experts.control import DOWN
from memobench.experts.stove import TurnKnob, fin_rot, knob_to_turn, note_turn, start_memory


class KnobScene:
    """Just enough of a Scene for the knob rules: one joint reading."""

    def __init__(self, q: float):
        self.q = q

    def joint(self, name: str) -> float:
        assert name == "flat_stove_1_button"
        return self.q


def finished(on: bool) -> TurnKnob:
    skill = TurnKnob(on)
    skill.finish(True)
    return skill


def test_fin_rot_at_rest_is_the_start_pose_and_yaws_with_the_knob():
    np.testing.assert_allclose(fin_rot(0.0), DOWN, atol=1e-12)
    yawed = fin_rot(0.7)
    assert yawed[:, 2] == pytest.approx(DOWN[:, 2])  # still pointing down
    assert np.arctan2(yawed[1, 0], yawed[0, 0]) - np.arctan2(DOWN[1, 0], DOWN[0, 0]) == pytest.approx(0.7)


def test_a_knob_that_reads_on_is_always_turned_off():
    turn = knob_to_turn(KnobScene(0.9), {}, guess=lambda options: pytest.fail("no guess needed"))
    assert isinstance(turn, TurnKnob) and not turn.on


def test_memory_walks_untouched_was_on_cycled():
    memory: dict = {}
    start_memory(memory)
    assert knob_to_turn(KnobScene(0.0), memory, guess=None).on
    note_turn(finished(True), KnobScene(0.9), memory)
    assert memory["stove"] == "was on"
    note_turn(finished(False), KnobScene(-0.004), memory)
    assert memory["stove"] == "cycled"
    assert knob_to_turn(KnobScene(-0.004), memory, guess=None) is None


def test_a_turn_off_that_stops_short_is_redone():
    memory = {"stove": "was on"}
    note_turn(finished(False), KnobScene(0.1), memory)  # not below 0: not off
    assert memory["stove"] == "was on"
    assert not knob_to_turn(KnobScene(0.1), memory, guess=None).on


@pytest.mark.parametrize("q", [0.0, -0.0047, 0.2])
def test_without_memory_a_knob_at_rest_is_a_guess_between_on_and_done(q):
    seen = []
    knob_to_turn(KnobScene(q), {}, guess=lambda options: seen.append(options) or options[0])
    (options,) = seen
    assert [None if o is None else o.on for o in options] == [True, None]
