"""T02's checkpoints enforce "check the middle drawer, *then* serve the bowl": serving first cannot pass.

Driven by a fake StateView over scripted per-step facts, with the predicates read from
the task's own task.yaml: no simulator.
"""

from __future__ import annotations

from memobench.core.expr import parse
from memobench.core.suite import TASKS_ROOT, load_task
from memobench.core.tracker import CheckpointTracker, TrackedCheckpoint

MIDDLE, BOWL, PLATE = "wooden_cabinet_1_middle_region", "akita_black_bowl_1", "plate_1"


class FakeView:
    def __init__(self) -> None:
        self.facts: dict = {}

    def query(self, name: str, args: tuple[str, ...]) -> bool | float:
        return self.facts.get((name, *args), False)


def tracker() -> CheckpointTracker:
    task = load_task(TASKS_ROOT / "temporal" / "T02-check-middle-drawer-then-bowl")
    return CheckpointTracker([TrackedCheckpoint(parse(c.predicate), c.op) for c in task.spec.checkpoints])


def drive(events: dict[str, str]) -> list[int | None]:
    """Per-step facts from {'open'|'closed'|'on': '0110...'} (missing characters: false)."""
    keys = {"open": ("open", MIDDLE), "closed": ("closed", MIDDLE), "on": ("on", BOWL, PLATE)}
    n = max(len(v) for v in events.values())
    t, view = tracker(), FakeView()
    t.reset(view)
    for step in range(n):
        view.facts = {keys[k]: step < len(v) and v[step] == "1" for k, v in events.items()}
        t.update(view, step)
    return t.completed_steps


def test_check_then_bowl_passes() -> None:
    steps = drive({"open": "0110000", "closed": "1000111", "on": "0000011"})
    assert steps == [1, 4, 5]


def test_bowl_first_then_check_fails() -> None:
    steps = drive({"open": "0001100", "closed": "1110011", "on": "0111111"})
    assert steps[:2] == [3, 5] and steps[2] is None
