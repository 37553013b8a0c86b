"""A small per-process cache of simulator envs, one per (task, variant, rendering, render quality)."""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any

from memobench.core.suite import Task


class EnvCache:
    """Keeps the ``capacity`` most recently used envs; building one costs seconds."""

    def __init__(self, capacity: int = 3):
        self.capacity = capacity
        self._envs: OrderedDict[tuple, Any] = OrderedDict()

    def get(
        self, task: Task, variant: int, binding: dict[str, Any], render: bool, render_quality: str = "reference"
    ) -> tuple[Any, float]:
        """The env for this variant and the seconds spent building it (0 when cached).

        ``render_quality`` (``SimEnv``'s) matters only when ``render``: camera-free envs are one kind.
        """
        from memobench.sim.env import SimEnv

        quality = render_quality if render else "reference"
        key = (task.id, task.spec_hash, variant, render, quality)
        if key in self._envs:
            self._envs.move_to_end(key)
            return self._envs[key], 0.0
        start = time.perf_counter()
        env = SimEnv(task.bddl(binding), render=render, render_quality=quality)
        self._envs[key] = env
        while len(self._envs) > self.capacity:
            _, old = self._envs.popitem(last=False)
            old.close()
        return env, time.perf_counter() - start

    def close(self) -> None:
        for env in self._envs.values():
            env.close()
        self._envs.clear()
