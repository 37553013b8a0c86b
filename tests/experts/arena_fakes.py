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


# -- the drawer plans (A04, A05, A11-A14, A17) -----------------------------------------------

SITE = {"top": (-0.017, 0.311, 0.627), "middle": (-0.017, 0.311, 0.558), "bottom": (-0.017, 0.311, 0.488)}


class DrawerScene:
    """Drawer joints, item positions, the held item and the hidden ones."""

    def __init__(self, opened: dict[str, float], items: dict[str, tuple], held=None, hidden=()):
        self.q = {level: opened.get(level, 0.0) for level in SITE}
        self.items = {k: np.array(v, dtype=float) for k, v in items.items()}
        self.held, self.hidden_items = held, set(hidden)

    def joint(self, name: str) -> float:
        return self.q[name.split("_")[-2]]

    def pos(self, name: str) -> np.ndarray:
        if name.endswith("_region"):
            level = name.split("_")[-2]
            return np.array(SITE[level]) + np.array([0.0, self.q[level], 0.0])
        return self.items[name]

    def grasped(self, name: str) -> bool:
        return name == self.held

    def hidden(self, name: str) -> bool:
        return name in self.hidden_items

    def eef_pos(self) -> np.ndarray:
        return np.array([-0.06, 0.0, 0.67])

    def table_top(self) -> float:
        return 0.424


# A04 / A05: check the three drawers, then store the butter in the target.
CHEESE_IN_TOP = (-0.017, 0.311, 0.607)  # on the top drawer's floor, 2 cm under its site
CHECK_START = {"butter_1": (-0.12, -0.10, 0.433), "cream_cheese_1": CHEESE_IN_TOP}


class Picks:
    """A generator whose draws are given in advance (the memoryless plan's guesses)."""

    def __init__(self, *indices: int):
        self.indices = list(indices)

    def integers(self, n):
        return self.indices.pop(0)


def cheese_follows(opened: dict[str, float]) -> dict[str, tuple]:
    """The start's items, the cream cheese moved with the top drawer."""
    x, y, z = CHEESE_IN_TOP
    return dict(CHECK_START, cream_cheese_1=(x, y + opened.get("top", 0.0), z))
