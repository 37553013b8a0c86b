"""Stand-ins the simulator-free arena plan tests share."""

from __future__ import annotations

import numpy as np


class NoChoices:
    """A generator that fails the test when used: the plan was to leave no choice to chance."""

    def integers(self, *args, **kwargs):
        raise AssertionError("the plan drew a random choice")


def query_positions(positions: dict[str, np.ndarray], name: str, args: tuple[str, ...]) -> float:
    """A fake scene's answer to the predicates' ``distance`` (xy) and ``offset_x/y/z`` queries."""
    a, b = (positions[n] for n in args)
    if name == "distance":
        return float(np.linalg.norm(a[:2] - b[:2]))
    return float(a["xyz".index(name[-1])] - b["xyz".index(name[-1])])
