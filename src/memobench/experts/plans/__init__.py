"""One expert plan per task id; a task without a plan has no expert yet.

Plans are found by file name: the plan for task ``T03-check-all-drawers``
lives in ``plans/t03.py`` (the id's prefix, lower case), which defines one
:class:`~memobench.experts.expert.Plan` subclass whose ``task_id`` is the
full id. Adding a task's expert is adding its module; there is no registry
to edit.
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
import re
from functools import cache

from memobench.experts.expert import Plan

_MODULE = re.compile(r"[tsopa]\d\d")  # a plan module is named after its task's id prefix (A: the arena)


class NoPlanError(KeyError):
    """The task has no scripted expert plan."""


def _plan_class(module_name: str) -> type[Plan]:
    module = importlib.import_module(f"{__name__}.{module_name}")
    found = [
        v
        for v in vars(module).values()
        if isinstance(v, type) and issubclass(v, Plan) and v.__module__ == module.__name__ and v.task_id
    ]
    if len(found) != 1:
        raise TypeError(f"{module.__file__}: expected one Plan subclass with a task_id, found {len(found)}")
    return found[0]


@cache
def plans() -> dict[str, type[Plan]]:
    """Task id -> plan class, for every plan module in this package."""
    classes = [_plan_class(m.name) for m in pkgutil.iter_modules(__path__) if _MODULE.fullmatch(m.name)]
    return {cls.task_id: cls for cls in sorted(classes, key=lambda c: c.task_id)}


def plan_for(task_id: str) -> Plan:
    """A fresh plan object for ``task_id``."""
    known = plans()
    if task_id not in known:
        close = difflib.get_close_matches(task_id, list(known), n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        raise NoPlanError(f"no expert plan for task {task_id!r}{hint} (plans exist for: {', '.join(known)})")
    return known[task_id]()
