"""A15 butter milk frypan: the butter into the frying pan, the milk over it twice, the milk back at its start.

Memory: ``pours``, the count (:mod:`memobench.experts.plans.arena_pour`'s docstring derives
it). RoboMemArena's own model reads the task as "place butter into frypan and pour milk
twice into frypan"; the task's goal has the milk back where it stood, the hand parked after.
Chance 1/4: after each pour the carton is back upright in the hand over the butter,
whatever the count.
"""

from __future__ import annotations

from memobench.experts.plans.arena_pour import ArenaPourPlan


class ButterMilkFrypanPlan(ArenaPourPlan):
    task_id = "A15-butter-milk-frypan"
    bottle = "milk_1"
    target = "butter_1"
    first = "butter_1"
    after = "start"
