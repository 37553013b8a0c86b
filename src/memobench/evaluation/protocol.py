"""The evaluation protocol: every setting that changes what an episode means.

Defaults follow the MEMOBench paper. These fields are written to ``run.json``
and must match for ``--resume`` to continue a run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from memobench.core.bindings import draw_binding
from memobench.core.seeding import episode_rng, episode_seed
from memobench.core.spec import LanguageLevel
from memobench.core.suite import Task


class Protocol(BaseModel):
    """Run-level settings shared by all episodes of a run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seed: int = 7  # seed base: episode e uses seed + e
    replan_steps: int = Field(5, ge=1)  # actions executed from each chunk before re-querying
    horizon: int | None = Field(None, ge=1)  # control steps; None = each task's own horizon
    stabilization_steps: int = Field(10, ge=0)  # no-op steps before the policy acts
    resize_size: int = Field(224, ge=8)  # policy images are resize_size x resize_size
    camera_size: int = Field(256, ge=8)  # native render resolution
    memory_oracle: LanguageLevel | None = None  # append completed checkpoint texts to the prompt
    extra_pour_monitor_steps: int = Field(30, ge=0)
    monitor_steps: int | None = Field(None, ge=0)  # post-goal window; None = each task's own
    fail_on_extra_pour: bool = True
    adapter_timeout: float = Field(300.0, ge=0)  # seconds per adapter call; 0 = no limit
    clip_actions: bool = False  # clip actions outside [-1, 1] instead of failing the episode (adapter_error)
    # End an episode early, unsuccessful, once a policy that reports ``finished()`` holds a
    # still scene (docs/protocol.md, "End"). The certification's scripted baselines use it.
    end_when_finished: bool = False

    def horizon_for(self, task: Task) -> int:
        return self.horizon if self.horizon is not None else task.spec.horizon

    def monitor_steps_for(self, task: Task) -> int:
        return self.monitor_steps if self.monitor_steps is not None else task.spec.monitor_steps


def stored_protocol(fields: dict[str, Any]) -> dict[str, Any]:
    """A protocol as a ``run.json`` stores it, with every field it lacks at its default.

    A ``run.json`` written before a field existed is read with that field's
    default, so comparing protocols (``--resume``, report conditions) does not
    see the missing key as a difference. Unknown keys are kept.
    """
    defaults = Protocol().model_dump(mode="json")
    return {**defaults, **fields}


@dataclass(frozen=True)
class EpisodePlan:
    """What an episode will be, decided from its seed alone (no simulator needed)."""

    task_id: str
    episode: int
    seed: int
    variant: int  # index into bindings.all_bindings(task.spec)
    binding: dict[str, Any]
    layout_seed: int


def plan_episode(task: Task, episode: int, seed_base: int) -> EpisodePlan:
    """The episode's seed, binding and layout seed: a pure function of (task, episode, seed base)."""
    seed = episode_seed(seed_base, episode)
    variant, binding = draw_binding(task.spec, episode_rng(seed, task.id, "binding"))
    layout_seed = int(episode_rng(seed, task.id, "layout").integers(2**31 - 1))
    return EpisodePlan(task.id, episode, seed, variant, binding, layout_seed)
