"""adversary-scene's register, without a simulator: which objects may hold it, where they start,
and how far a push must carry one."""

from __future__ import annotations

import numpy as np
import pytest

from memobench.core.bindings import all_bindings
from memobench.core.suite import Suite
from memobench.experts.scene_tally import _travel_to, start_regions, tally_objects


@pytest.fixture(scope="module")
def suite():
    return Suite.load()


def test_start_regions_read_each_objects_region_and_its_reach(suite):
    task = suite.get("T01-check-top-drawer")
    regions = start_regions(task.bddl(all_bindings(task.spec)[0]))
    # plate_init_region: (:ranges ((-0.025 0.225 0.025 0.275))), a 5 cm square: reach = half its diagonal
    region, reach = regions["plate_1"]
    assert region == "kitchen_table_plate_init_region"
    assert reach == pytest.approx(0.5 * np.hypot(0.05, 0.05))
    assert set(regions) == {"akita_black_bowl_1", "plate_1", "wooden_cabinet_1"}  # fixtures start On regions too


def test_tally_objects_are_watched_under_every_binding(suite):
    # objects no checkpoint is about: the disturbed rule watches them
    assert tally_objects(suite.get("T01-check-top-drawer")) == ["akita_black_bowl_1", "plate_1"]
    # T07 has none; the pan, which the task moves only after the stove was turned off, serves
    assert tally_objects(suite.get("T07-stove-on-off-pan-on-stove")) == ["chefmate_8_frypan_1"]
    # S06: which cheese stays put depends on the binding; only what every binding leaves alone serves
    assert tally_objects(suite.get("S06-two-drawers-retrieve-green-butter")) == ["plate_1"]


@pytest.mark.parametrize(
    ("offset", "direction", "distance", "travel"),
    [
        ((0.01, 0.0), (1.0, 0.0), 0.05, 0.04),  # away from the centre: the rest of the way
        ((0.01, 0.0), (-1.0, 0.0), 0.05, 0.06),  # through the centre and out the other side
        ((0.0, 0.0), (0.0, 1.0), 0.05, 0.05),
        ((0.06, 0.0), (1.0, 0.0), 0.05, 0.0),  # already past it
    ],
)
def test_push_travel_reaches_the_asked_distance_from_the_centre(offset, direction, distance, travel):
    got = _travel_to(np.array(offset), np.array(direction), distance)
    assert got == pytest.approx(travel)
    if travel > 0:
        assert np.linalg.norm(np.array(offset) + got * np.array(direction)) == pytest.approx(distance)
