"""The evaluation protocol: every setting that changes what an episode means.

Defaults follow the MEMOBench paper; ``name="robomemarena"`` (``--protocol
robomemarena``) starts from RoboMemArena's run-all defaults instead
(:data:`ROBOMEMARENA_DEFAULTS`), for every field not given. These fields are
written to ``run.json`` and must match for ``--resume`` to continue a run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from memobench.core.bindings import draw_binding
from memobench.core.seeding import episode_rng, episode_seed
from memobench.core.spec import ARENA_SUITE, LanguageLevel
from memobench.core.suite import Task
from memobench.sim.env import ARM_START_JITTER, MAX_ARM_START_JITTER

# RoboMemArena's run-all defaults (docs/arena.md): seed start 100, 3,000 steps, a chunk of
# 10 actions per query, 256-px images squished (not padded) to a square, 10 wait steps.
# Post-goal steps are each arena task's own (200, none for a counting task).
ROBOMEMARENA_DEFAULTS: dict[str, Any] = {
    "seed": 100,
    "horizon": 3000,
    "replan_steps": 10,
    "resize_size": 256,
    "resize_mode": "squish",
    "stabilization_steps": 10,
    "extra_pour_monitor_steps": 30,
    "fail_on_extra_pour": True,
    "cue_query": False,
    "commitments_to_horizon": False,
    "arm_start_jitter": 0.0,
    "clip_actions": True,  # its client sends actions to robosuite, which clips them
}
PROTOCOL_DEFAULTS = {"memobench": {}, "robomemarena": ROBOMEMARENA_DEFAULTS}


class Protocol(BaseModel):
    """Run-level settings shared by all episodes of a run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: Literal["memobench", "robomemarena"] = Field(
        "memobench",
        description=(
            "Whose defaults every other setting starts from: MEMOBench's, or RoboMemArena's run-all script "
            "(seed 100, 3000 steps, replan 10, 256-px squished images; with its four output files)."
        ),
        json_schema_extra={"cli": ["--protocol"]},
    )

    # Each description is also the help of the field's command-line flag (the CLI builds its flags from them);
    # "cli" in json_schema_extra: False keeps a field off the command line, a list names its flags.
    seed: int = Field(7, description="Seed base: episode e uses seed + e (RoboMemArena's seed start).")
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
        json_schema_extra={"cli": ["--horizon", "--max-steps"]},
    )
    stabilization_steps: int = Field(
        10,
        ge=0,
        description="No-op steps (gripper open) before the policy acts.",
        json_schema_extra={"cli": ["--stabilization-steps", "--num-steps-wait"]},
    )
    resize_size: int = Field(224, ge=8, description="Policy images are SIZE x SIZE (see --resize-mode).")
    resize_mode: Literal["pad", "squish"] = Field(
        "pad",
        description=(
            "How a camera frame becomes SIZE x SIZE: pad (keep the aspect ratio, black bars) or squish "
            "(stretch, area interpolation: RoboMemArena's)."
        ),
    )
    render_quality: Literal["reference", "fast"] = Field(
        "fast",
        description=(
            "Camera meshes: 'fast' draws calibrated decimated copies of the heavy visual-only meshes (2-3x faster "
            "frames; physics and checkpoints identical; frames within 32 dB PSNR of 'reference': docs/rendering.md); "
            "'reference' draws LIBERO's own."
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
            "Post-goal window: the fewest steps between the last required checkpoint and the horizon for a success "
            "(--protocol robomemarena: the steps run after it before success ends the episode). Default: each task's "
            "own; overriding it is for diagnostics. An arena counting task has none: the extra-pour monitor ends it."
        ),
        json_schema_extra={"cli": ["--monitor-steps", "--post-goal-steps"]},
    )
    fail_on_extra_pour: bool = Field(
        True, description=("Fail counting tasks on an extra pour (disable for diagnostics only).")
    )
    adapter_timeout: float = Field(300.0, ge=0, description="Seconds an adapter call may take (0 = no limit).")
    # Clipping is what openpi's LIBERO client and robosuite do with an entry beyond [-1, 1] (a stock
    # policy's 1.003 is rounding); each episode's record counts the actions clipped and the largest
    # excess, so it is never silent (memobench.evaluation.action_range).
    clip_actions: bool = Field(
        True,
        description=(
            "Clip action entries outside [-1, 1] into the range, counted per episode in the ledger (the default); "
            "--strict-actions fails such a chunk's episode as an adapter_error instead. NaN/inf always fail it."
        ),
        json_schema_extra={"cli": ["--clip-actions/--strict-actions"]},
    )
    # End an episode early, with the outcome it would have at the horizon, once a policy that
    # reports ``finished()`` holds a still scene (docs/protocol.md, "End"). The certification's
    # scripted policies use it.
    end_when_finished: bool = Field(False, json_schema_extra={"cli": False})
    # MEMOBench's two rules that RoboMemArena's protocol does not have (docs/protocol.md, section 2),
    # set by ``name``; not flags. ``cue_query``: the cue is handed to the policy in a query whose
    # chunk is discarded, so no executed query carries it (False: ``prompt_video`` comes with the
    # first executed query, as before). ``commitments_to_horizon``: success is decided at the
    # horizon, the commitments watched until then (False: success ends the episode once the
    # post-goal window has passed; demonstration collection keeps that, so a demo stops there).
    cue_query: bool = Field(True, json_schema_extra={"cli": False})
    commitments_to_horizon: bool = Field(True, json_schema_extra={"cli": False})
    # Radians: the arm's joints start off LIBERO's start pose by a Gaussian draw of this deviation,
    # seeded by the layout (robosuite's own default; docs/protocol.md, "Registers"): a start pose
    # shared by every episode would tell a policy back home a few millimetres off it that it has
    # been away. RoboMemArena's protocol starts every episode at LIBERO's pose.
    arm_start_jitter: float = Field(ARM_START_JITTER, ge=0.0, le=MAX_ARM_START_JITTER, json_schema_extra={"cli": False})

    @model_validator(mode="before")
    @classmethod
    def _named_defaults(cls, data: Any) -> Any:
        # The named protocol's defaults fill every field the caller did not give.
        if isinstance(data, dict) and data.get("name") in PROTOCOL_DEFAULTS:
            return {**PROTOCOL_DEFAULTS[data["name"]], **data}
        return data

    def horizon_for(self, task: Task) -> int:
        return self.horizon if self.horizon is not None else task.spec.horizon

    def monitor_steps_for(self, task: Task) -> int:
        # RoboMemArena runs post-goal steps only for tasks without a pour count.
        arena_counting = task.spec.suite == ARENA_SUITE and task.spec.counting is not None
        if self.monitor_steps is None or arena_counting:
            return task.spec.monitor_steps
        return self.monitor_steps


# What a run.json written before these fields existed ran: the rules before them, not today's
# defaults, so such a run is not resumed (or merged in a report) under the new rules.
# clip_actions: runs before it refused out-of-range chunks (it was then added with that default, False).
LEGACY_FIELDS: dict[str, Any] = {
    "cue_query": False,
    "commitments_to_horizon": False,
    "arm_start_jitter": 0.0,
    "clip_actions": False,
}


def stored_protocol(fields: dict[str, Any]) -> dict[str, Any]:
    """A protocol as a ``run.json`` stores it, with every field it lacks at its default.

    A ``run.json`` written before a field existed is read with that field's
    default, so comparing protocols (``--resume``, report conditions) does not
    see the missing key as a difference; except the fields of
    :data:`LEGACY_FIELDS`, read as what such a run did. Unknown keys are kept.
    """
    defaults = Protocol().model_dump(mode="json")
    return {**defaults, **LEGACY_FIELDS, **fields}


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
