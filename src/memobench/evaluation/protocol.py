"""The evaluation protocol: every setting that changes what an episode means.

Defaults follow the MEMOBench paper. These fields are written to ``run.json``
and must match for ``--resume`` to continue a run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from memobench.core.bindings import draw_binding
from memobench.core.seeding import episode_rng, episode_seed
from memobench.core.spec import LanguageLevel
from memobench.core.suite import Task


class Protocol(BaseModel):
    """Run-level settings shared by all episodes of a run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # Each description is also the help of the field's command-line flag (the CLI builds its flags from them);
    # "cli" in json_schema_extra: False keeps a field off the command line, a list names its flags.
    seed: int = Field(7, description="Seed base: episode e uses seed + e.")
    replan_steps: int = Field(
        5,
        ge=1,
        description=(
            "Actions executed from each chunk before re-querying (at most the policy's declared chunk length; a "
            "shorter chunk runs whole, then the policy is queried again)."
        ),
    )
    horizon: int | None = Field(
        None,
        ge=1,
        description=(
            "Control steps per episode (default: each task's own, at least 1200; overriding it is for diagnostics)."
        ),
    )
    stabilization_steps: int = Field(10, ge=0, description="No-op steps before the policy acts.")
    resize_size: int = Field(224, ge=8, description="Policy images are SIZE x SIZE (aspect-preserving pad).")
    render_quality: Literal["reference", "fast"] = Field(
        "reference",
        description=(
            "Camera meshes: 'reference' draws LIBERO's own; 'fast' draws decimated copies of the heavy visual-only "
            "meshes (physics and checkpoints identical, frames slightly different: docs/rendering.md)."
        ),
    )
    camera_size: int = Field(256, ge=8, description="Native render resolution.", json_schema_extra={"cli": False})
    memory_oracle: LanguageLevel | None = Field(None, description="Append completed checkpoint texts to the prompt.")
    extra_pour_monitor_steps: int = Field(
        30,
        ge=0,
        description=("Steps watched for an extra pour after the required ones."),
        json_schema_extra={"cli": ["--extra-pour-monitor-steps", "--post-stage-steps"]},
    )
    monitor_steps: int | None = Field(
        None,
        ge=0,
        description=(
            "Post-goal window: steps run after the last required checkpoint before success is declared (default: "
            "each task's own; overriding it is for diagnostics)."
        ),
    )
    fail_on_extra_pour: bool = Field(
        True, description=("Fail counting tasks on an extra pour (disable for diagnostics only).")
    )
    adapter_timeout: float = Field(300.0, ge=0, description="Seconds an adapter call may take (0 = no limit).")
    clip_actions: bool = Field(
        False,
        description=(
            "Clip actions outside [-1, 1] into the range (recorded in run.json); by default such a chunk fails its "
            "episode as an adapter_error."
        ),
    )
    # End an episode early, unsuccessful, once a policy that reports ``finished()`` holds a
    # still scene (docs/protocol.md, "End"). The certification's scripted baselines use it.
    end_when_finished: bool = Field(False, json_schema_extra={"cli": False})

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

    @property
    def key(self) -> tuple[str, int]:
        """The episode's identity in a run (retries are counted per key)."""
        return (self.task_id, self.episode)

    @property
    def affinity(self) -> tuple[str, int]:
        """Episodes of one (task, variant) share an env: a worker that built it gets the next one."""
        return (self.task_id, self.variant)


def plan_episode(task: Task, episode: int, seed_base: int) -> EpisodePlan:
    """The episode's seed, binding and layout seed: a pure function of (task, episode, seed base)."""
    seed = episode_seed(seed_base, episode)
    variant, binding = draw_binding(task.spec, episode_rng(seed, task.id, "binding"))
    layout_seed = int(episode_rng(seed, task.id, "layout").integers(2**31 - 1))
    return EpisodePlan(task.id, episode, seed, variant, binding, layout_seed)
