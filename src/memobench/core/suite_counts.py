"""Suite counts: tasks, checkpoint templates per memory op, object and fixture classes.

Pure computation over loaded :class:`~memobench.core.suite.Task` objects (no
simulator). ``memobench tasks stats`` prints these; the paper's suite table
is built from the same numbers.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from memobench.core.bddl_names import declared_instances
from memobench.core.bindings import all_bindings
from memobench.core.spec import ArenaFamily, MemoryOp, MemoryType
from memobench.core.suite import Task

COUNT_KEYS = (
    "tasks",
    "checkpoints",
    "storage",
    "update",
    "compression",
    "object_classes",
    "fixture_classes",
)
"""The numeric keys of every stats entry (total and per family), in display order."""

# One whole ``(:objects ...)`` / ``(:fixtures ...)`` section; its text is handed to
# declared_instances so the declaration grammar (and its duplicate check) lives in one place.
_SECTION = re.compile(r"\(:(objects|fixtures)\s.*?\)", re.S)


def declared_classes(bddl: str) -> tuple[set[str], set[str]]:
    """(object categories, fixture categories) declared by one rendered BDDL problem.

    Raises :class:`~memobench.core.bddl_names.BddlDeclarationError` for a malformed
    declaration (e.g. a category on two lines).
    """
    objects: set[str] = set()
    fixtures: set[str] = set()
    for match in _SECTION.finditer(bddl):
        categories = set(declared_instances(match.group(0)).values())
        (objects if match.group(1) == "objects" else fixtures).update(categories)
    return objects, fixtures


def task_classes(task: Task) -> tuple[set[str], set[str]]:
    """Object and fixture categories of a task, over every variant of its binding.

    A binding may swap which objects exist (e.g. which item is hidden), so the
    union over all rendered variants is what the task can put in a scene.
    """
    objects: set[str] = set()
    fixtures: set[str] = set()
    for binding in all_bindings(task.spec):
        obj, fix = declared_classes(task.bddl(binding))
        objects |= obj
        fixtures |= fix
    return objects, fixtures


@dataclass(frozen=True)
class GroupStats:
    """Counts for one group of tasks (a family, or the whole selection).

    ``binding_domain_sizes`` has one entry per binding of every task in the
    group (its number of values); unbound tasks contribute nothing.
    """

    tasks: int = 0
    checkpoints: int = 0
    storage: int = 0
    update: int = 0
    compression: int = 0
    object_class_names: tuple[str, ...] = ()
    fixture_class_names: tuple[str, ...] = ()
    binding_domain_sizes: tuple[int, ...] = ()

    @property
    def object_classes(self) -> int:
        return len(self.object_class_names)

    @property
    def fixture_classes(self) -> int:
        return len(self.fixture_class_names)

    def counts(self) -> dict[str, int]:
        """The :data:`COUNT_KEYS` numbers of this group."""
        return {key: int(getattr(self, key)) for key in COUNT_KEYS}


@dataclass(frozen=True)
class SuiteStats:
    """Totals over a selection of tasks, plus the same numbers per family present."""

    total: GroupStats
    families: dict[str, GroupStats] = field(default_factory=dict)

    def to_jsonable(self) -> dict[str, Any]:
        """The ``tasks stats --json`` document.

        Top level: the :data:`COUNT_KEYS` totals, ``families`` (family -> the
        same keys) and the sorted ``object_class_names`` / ``fixture_class_names``.
        """
        return {
            **self.total.counts(),
            "families": {name: group.counts() for name, group in self.families.items()},
            "object_class_names": list(self.total.object_class_names),
            "fixture_class_names": list(self.total.fixture_class_names),
        }


def _group(tasks: list[Task], classes: dict[str, tuple[set[str], set[str]]]) -> GroupStats:
    ops = Counter(cp.op for t in tasks for cp in t.spec.checkpoints)
    objects = set().union(*(classes[t.id][0] for t in tasks))
    fixtures = set().union(*(classes[t.id][1] for t in tasks))
    return GroupStats(
        tasks=len(tasks),
        checkpoints=sum(len(t.spec.checkpoints) for t in tasks),
        storage=ops[MemoryOp.STORAGE],
        update=ops[MemoryOp.UPDATE],
        compression=ops[MemoryOp.COMPRESSION],
        object_class_names=tuple(sorted(objects)),
        fixture_class_names=tuple(sorted(fixtures)),
        binding_domain_sizes=tuple(len(d) for t in tasks for _, d in sorted(t.spec.bindings.items())),
    )


def suite_stats(tasks: Iterable[Task]) -> SuiteStats:
    """Statistics of the given tasks: the total and each family, in taxonomy order.

    Class counts are distinct categories (a union), not sums over tasks.
    Raises :class:`~memobench.core.bddl_names.BddlDeclarationError` if a BDDL
    declaration is malformed.
    """
    tasks = list(tasks)
    classes = {t.id: task_classes(t) for t in tasks}
    families = {
        family.value: _group(members, classes)
        for family in (*MemoryType, *ArenaFamily)
        if (members := [t for t in tasks if t.spec.family == family])
    }
    return SuiteStats(total=_group(tasks, classes), families=families)


def format_domain_sizes(sizes: Iterable[int]) -> str:
    """Compact multiset of binding domain sizes, e.g. ``"2, 3 x4, 6"``; ``"-"`` if none."""
    counts = sorted(Counter(sizes).items())
    if not counts:
        return "-"
    return ", ".join(str(size) if n == 1 else f"{size} x{n}" for size, n in counts)
