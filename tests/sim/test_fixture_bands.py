"""The fixture bands (simulator-free): shut, open, ajar and what an observation reads, per class.

Values are worked out by hand from the table (drawer shut 5 mm, door 0.05 rad, knob 0.05 rad;
drawers and the door open toward negative joint values, the knob toward positive ones).
"""

from __future__ import annotations

import re

import pytest

from memobench.core.suite import Suite
from memobench.sim.fixture_bands import BANDS, band_of

DRAWER, DOOR, KNOB = BANDS["WoodenCabinet"], BANDS["Microwave"], BANDS["FlatStove"]


@pytest.mark.parametrize(
    ("band", "q", "opening"),
    [
        (DRAWER, -0.02, 0.02),  # pulled out 2 cm
        (DRAWER, 0.0017, 0.0),  # pushed past shut into the back wall (T01's expert leaves it there)
        (DOOR, -0.5, 0.5),
        (DOOR, 0.021, 0.0),  # the door's overshoot past shut after the expert's press
        (KNOB, 0.75, 0.75),
        (KNOB, -0.0047, 0.0),  # turned off into the stop (T06's expert leaves it there)
    ],
)
def test_opening_is_measured_in_the_direction_the_part_opens(band, q, opening) -> None:
    assert band.opening(q) == pytest.approx(opening, abs=1e-12)


@pytest.mark.parametrize(
    ("band", "inside", "outside"),
    [(DRAWER, -0.004, -0.006), (DOOR, -0.049, -0.051), (KNOB, 0.049, 0.051)],
)
def test_within_the_shut_band_a_joint_reads_exactly_zero_outside_its_raw_value(band, inside, outside) -> None:
    assert band.shut_at(inside) and not band.shut_at(outside)
    assert band.observed(inside) == 0.0 and band.observed(outside) == outside
    assert band.observed(0.0017 * band.direction * -1) == 0.0  # past shut reads shut too


def test_the_band_edge_counts_as_shut() -> None:
    assert DRAWER.shut_at(-0.005) and DRAWER.observed(-0.005) == 0.0


@pytest.mark.parametrize(
    ("band", "mid", "moving", "open_q"),
    [(DRAWER, -0.07, 0.01, -0.15), (DOOR, -0.6, 0.1, -1.4), (KNOB, 0.3, 0.05, 0.75)],
)
def test_ajar_is_at_rest_between_shut_and_open(band, mid, moving, open_q) -> None:
    assert band.ajar_at(mid, 0.0) and band.ajar_at(mid, -0.5 * band.rest_speed)
    assert not band.ajar_at(mid, moving) and not band.ajar_at(mid, -moving)  # being moved through
    assert not band.ajar_at(band.direction * band.shut, 0.0)  # shut (the edge of the band)
    assert not band.ajar_at(open_q, 0.0)  # open by LIBERO's test


def test_a_class_without_a_band_is_named() -> None:
    with pytest.raises(KeyError, match=r"ShortFridge.*FlatStove, Microwave, WoodenCabinet"):
        band_of("ShortFridge")


def test_must_stay_shut_rules_use_the_band_not_a_threshold() -> None:
    """A rule ``opening(f) > x`` leaves a gap between the band (contents in view) and x
    (the violation): a policy could look inside without breaking it. Rules say ``not closed(f)``."""
    thresholds = {
        f"{task.id}/{rule.name}": rule.predicate
        for task in Suite.load()
        for rule in task.spec.violations
        if re.search(r"\bopening\(", rule.predicate)
    }
    assert thresholds == {}
