"""One expert plan per task id; a task without a plan has no expert yet."""

from __future__ import annotations

import difflib
import importlib

from memobench.experts.expert import Plan

# task id -> "module:class" (imported on demand)
PLANS: dict[str, str] = {
    "O01-cued-milk": "o01:CuedMilkPlan",
    "T03-check-all-drawers": "t03:CheckAllDrawersPlan",
    "S01-hide-and-retrieve-butter": "s01:HideAndRetrieveButterPlan",
    "T09-pour-twice-bowl": "t09:PourTwicePlan",
    "P04-stack-in-order": "p04:StackInOrderPlan",
}


class NoPlanError(KeyError):
    """The task has no scripted expert plan."""


def plan_for(task_id: str) -> Plan:
    """A fresh plan object for ``task_id``."""
    if task_id not in PLANS:
        close = difflib.get_close_matches(task_id, list(PLANS), n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        raise NoPlanError(f"no expert plan for task {task_id!r}{hint} (plans exist for: {', '.join(PLANS)})")
    module, _, cls = PLANS[task_id].partition(":")
    return getattr(importlib.import_module(f"memobench.experts.plans.{module}"), cls)()
