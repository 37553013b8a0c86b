"""Reading a demonstration cue from robot states, on synthetic states (no simulator).

A synthetic demonstration moves the hand in straight lines and closes or
opens the fingers at the speed the real gripper does (~0.007 m of gap a
control step); states are kept every step and subsampled as a cue records
them (every 4th step for ``demo`` cues).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from memobench.experts.expert import Memory
from memobench.experts.plans.cues import handlings, moves
from memobench.experts.plans.p03 import DiscardThenPlatePlan
from memobench.experts.plans.p04 import StackInOrderPlan

OPEN_GAP, START_GAP = 0.079, 0.042  # the fingers at rest, and as a reset leaves them (half open)
HIGH = 1.15  # hand height while carrying


class FakeScene:
    """Object origins by name: all the decoder reads of the scene."""

    def __init__(self, positions: dict[str, tuple[float, float]]):
        self.positions = {name: np.array([x, y, 0.97]) for name, (x, y) in positions.items()}

    def pos(self, name: str) -> np.ndarray:
        return self.positions[name]


class Demo:
    """Builds a step-by-step robot state sequence: hand xyz, axis-angle, finger joints."""

    def __init__(self) -> None:
        self.hand, self.gap = np.array([-0.2, 0.0, HIGH]), START_GAP
        self.states: list[np.ndarray] = []
        self.record()
        self.grip(OPEN_GAP)  # the first steps open the half-open hand: not a release

    def record(self) -> None:
        self.states.append(np.r_[self.hand, 0.0, 0.0, 0.0, self.gap / 2, -self.gap / 2])

    def move(self, xy: tuple[float, float], z: float, steps: int = 20) -> None:
        start, end = self.hand.copy(), np.array([*xy, z])
        for t in np.linspace(0, 1, steps + 1)[1:]:
            self.hand = start + t * (end - start)
            self.record()

    def grip(self, gap: float, hold: int = 5) -> None:
        while abs(self.gap - gap) > 1e-9:  # the real gripper: ~0.007 m a step
            self.gap += float(np.clip(gap - self.gap, -0.007, 0.007))
            self.record()
        for _ in range(hold):
            self.record()

    def carry(self, pick: tuple[float, float], place: tuple[float, float], width: float = 0.03) -> None:
        """Pick at ``pick`` (fingers closing on ``width``), carry high, let go at ``place``."""
        self.move(pick, HIGH)
        self.move(pick, 0.95)
        self.grip(width)
        self.move(pick, HIGH)
        self.move(place, HIGH)
        self.move(place, 1.0)
        self.grip(OPEN_GAP)
        self.move(place, HIGH)

    def every(self, n: int) -> list[np.ndarray]:
        return self.states[::n]


@pytest.mark.parametrize("every", [1, 2, 4])
def test_handlings_find_each_grasp_and_release_where_the_hand_was(every):
    demo = Demo()
    demo.carry((0.0, -0.2), (0.1, 0.2), width=0.053)  # the widest grasp measured (orange juice)
    demo.carry((0.1, 0.2), (0.0, -0.2), width=0.004)  # a bowl's wall
    found = handlings(demo.every(every))
    assert len(found) == 2
    np.testing.assert_allclose([g.pick[:2] for g in found], [(0.0, -0.2), (0.1, 0.2)], atol=1e-6)
    np.testing.assert_allclose([g.place[:2] for g in found], [(0.1, 0.2), (0.0, -0.2)], atol=1e-6)


def test_a_grasp_still_closed_at_the_end_has_no_place_and_is_not_a_move():
    demo = Demo()
    demo.move((0.0, -0.2), 0.95)
    demo.grip(0.03)
    demo.move((0.1, 0.2), HIGH)
    scene = FakeScene({"a": (0.0, -0.2), "b": (0.1, 0.2)})
    (grasp,) = handlings(demo.every(4))
    assert grasp.place is None
    assert moves(demo.every(4), ["a"], ["b"], scene) == []


def test_moves_skip_failed_grasps_and_grasps_elsewhere():
    scene = FakeScene({"a": (0.0, -0.2), "b": (0.0, 0.0), "plate": (0.0, 0.2)})
    demo = Demo()
    demo.move((0.0, -0.2), 0.95)
    demo.grip(0.0)  # closed on nothing: a failed grasp, retried
    demo.grip(OPEN_GAP)
    demo.carry((0.0, -0.2), (0.0, 0.2))  # a onto the plate
    demo.carry((0.3, 0.0), (0.0, 0.2))  # something away from every candidate
    assert moves(demo.every(4), ["a", "b"], ["plate"], scene) == [("a", "plate")]


BOWLS = {"akita_black_bowl_1": (-0.05, -0.18), "red_akita_black_bowl_1": (-0.08, 0.0), "white_bowl_1": (-0.05, 0.19)}


def rim(bowl: str) -> tuple[float, float]:
    """Where the hand takes or lets go of a bowl: over its wall, ~5 cm off its origin."""
    x, y = BOWLS[bowl]
    return x, y + (0.05 if y >= 0 else -0.05)


@pytest.mark.parametrize("order", list(itertools.permutations(BOWLS)))
def test_p04_reads_every_stacking_order_from_its_demonstration(order):
    bottom, middle, top = order
    demo = Demo()
    demo.carry(rim(middle), rim(bottom), width=0.004)
    demo.carry(rim(top), rim(bottom), width=0.004)  # the stack stands where the bottom bowl stood
    memory = Memory()
    StackInOrderPlan().remember_cue(demo.every(4), FakeScene(BOWLS), memory)
    assert memory["order"] == [bottom, middle, top]


@pytest.mark.parametrize("waste, keep", [("ketchup_1", "bbq_sauce_1"), ("bbq_sauce_1", "ketchup_1")])
def test_p03_reads_the_waste_from_where_it_was_put_not_from_the_order(waste, keep):
    scene = FakeScene(
        {
            "ketchup_1": (-0.16, -0.04),
            "bbq_sauce_1": (-0.16, 0.10),
            "basket_1": (-0.02, -0.22),
            "yellow_plate_1": (-0.03, 0.20),
        }
    )
    xy = {name: tuple(scene.pos(name)[:2]) for name in scene.positions}
    demo = Demo()
    demo.carry(xy[keep], xy["yellow_plate_1"])  # plated first: the basket still says which is waste
    demo.carry(xy[waste], xy["basket_1"])
    memory = Memory()
    DiscardThenPlatePlan().remember_cue(demo.every(4), scene, memory)
    assert memory == {"waste": waste}


def test_no_demonstration_leaves_the_memory_empty():
    memory = Memory()
    StackInOrderPlan().remember_cue(Demo().every(4), FakeScene(BOWLS), memory)
    assert memory == {}
