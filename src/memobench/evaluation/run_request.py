"""What a run evaluates, how, and where it writes: the request every backend's workers share."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memobench.core.suite import Task
from memobench.evaluation.execution import check_execution
from memobench.evaluation.protocol import Protocol


@dataclass
class RunRequest:
    """What to evaluate, how, and where to write it."""

    tasks: list[Task]
    num_trials_per_task: int
    protocol: Protocol
    out_root: Path
    policy: dict[str, Any]  # {"name": ...} or {"adapter_spec": ..., "adapter_kwargs": ...}
    video: str = "none"
    video_every: int = 0  # also a video frame every n steps between queries (0: query frames only)
    resume: bool = False
    # Worker processes; results do not depend on it. 0 runs episodes in this process with the
    # adapter handed to evaluate() (the default here; the CLI's default is 1, isolated).
    workers: int = 0
    backend: str = "local"  # "local" (this machine) or "ray"
    ray_address: str | None = None  # a Ray cluster; None starts a local Ray
    episode_timeout: float | None = None  # seconds before a worker's episode counts as hung
    max_attempts: int = 3  # executions of an episode whose worker dies or hangs

    def __post_init__(self) -> None:
        check_execution(self.workers, self.episode_timeout, self.backend, self.ray_address)

    @property
    def in_process(self) -> bool:
        """Whether episodes run in this process (no isolation, so no timeout or retry)."""
        return self.workers == 0
