"""The cue's frame bound (:func:`memobench.sim.cue.max_cue_frames`) is reached, never passed.

No simulator: a stand-in env whose hand drifts away from wherever it is sent (home included)
makes a ``point`` cue use every step it may, and a performer that never finishes runs a
``demo`` cue to its cap. The bound is what the Gymnasium API pads a cue to
(:mod:`memobench.gym.cue`), so a cue longer than it would break every vector env on the task.
"""

from __future__ import annotations

import numpy as np
import pytest

from memobench.sim.cue import FRAME_EVERY, max_cue_frames, run_cue


class _Drifting:
    """A camera-free env whose hand moves 1 m along x a step, whatever it is told."""

    renders = False

    def __init__(self) -> None:
        self.steps = 0

    def step(self, action: np.ndarray) -> None:
        self.steps += 1

    def robot_state(self) -> np.ndarray:
        return np.array([self.steps, 0, 0, 0, 0, 0, 0, 0], float)

    def physics_state(self) -> np.ndarray:
        return np.zeros(3)

    def snapshot(self) -> None:
        return None

    def restore(self, snap: None) -> None: ...


class _FarAway:
    def position(self, name: str) -> np.ndarray:
        return np.array([1.0, 1.0, 1.0])


@pytest.mark.parametrize("n_targets", [1, 2, 3])
def test_a_point_cue_that_never_arrives_records_exactly_the_bound(n_targets: int) -> None:
    rec = run_cue(_Drifting(), _FarAway(), "point", [f"t{i}" for i in range(n_targets)])  # type: ignore[arg-type]
    assert len(rec.states) == max_cue_frames("point", n_targets)


def test_a_demo_cue_that_never_finishes_records_exactly_the_bound() -> None:
    rec = run_cue(_Drifting(), None, "demo", [], performer=lambda: np.zeros(7))  # type: ignore[arg-type]
    assert len(rec.states) == max_cue_frames("demo") == 1 + rec.steps // FRAME_EVERY["demo"]


def test_an_unknown_kind_has_no_bound() -> None:
    with pytest.raises(ValueError, match="unknown cue kind"):
        max_cue_frames("wave")
