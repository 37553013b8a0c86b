"""One episode: cue, stabilisation, the cue query, the policy loop, checkpoint tracking, the record.

The loop follows docs/protocol.md: after the cue and the stabilisation steps, a
cue task's policy is queried once with the cue and that chunk is discarded (the
cue query); then the policy is queried, the first ``replan_steps`` actions of
its chunk are executed (the whole chunk if it is shorter, never padded; the
record counts such queries), then it is queried again. Under MEMOBench's
protocol the episode ends at a violation or at the horizon, where it is a
success if every required checkpoint completed (and the post-goal window fitted
before the horizon); under RoboMemArena's, success ends it once the post-goal
window has passed. Every way the policy can fail becomes
``status: adapter_error``; a simulator failure becomes ``env_error``. Either way a record is returned
and the sweep goes on.
"""

from __future__ import annotations

import time
import traceback
import typing
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memobench.core import expr
from memobench.core.bindings import binding_label, resolve_reference
from memobench.core.oracle import oracle_prompt
from memobench.core.records import EpisodeRecord, EpisodeStatus, Violation
from memobench.core.seeding import episode_rng
from memobench.core.suite import Task
from memobench.core.taxonomy import classify_failure
from memobench.core.tracker import (
    EXTRA_POUR,
    CheckpointTracker,
)
from memobench.evaluation.action_range import Clipping
from memobench.evaluation.protocol import EpisodePlan, Protocol
from memobench.evaluation.tracking import build_tracker
from memobench.experts.expert import Expert
from memobench.experts.plans import plan_for
from memobench.experts.scene import Scene
from memobench.policies.adapter import AdapterError, AdapterGuard
from memobench.sim.cue import CueRecording, run_cue
from memobench.sim.env import NOOP_ACTION, SimEnv
from memobench.sim.render import resize_squish, resize_with_pad
from memobench.sim.world import WorldView


class StepRecorder(typing.Protocol):
    """What an episode tells a recorder (demonstration collection's
    ``memobench.data.recorder.DemoRecorder``; data sits above evaluation)."""

    def begin(self, cue: CueRecording) -> None:
        """Called once with the episode's cue (empty for a task without one), after the cue and
        the stabilisation steps, before the first executed action."""

    def add(self, env: SimEnv, action: np.ndarray) -> None:
        """``action`` is about to be executed from the state ``env`` holds."""


POLICY_FINISHED = "policy_finished"  # end_reason: a finished policy in a still scene, unsuccessful (Stillness)
STILL_SPEED = 2e-4  # max |qvel| (m/s, rad/s) under which the scene counts as still
STILL_STEPS = 20  # consecutive still steps, the tracker unchanged, before a finished policy's episode ends


def longest_held(tracker: CheckpointTracker) -> int:
    """The longest ``held(x, n)`` window (n) in the tracker's checkpoints and rules; 0 if none."""
    predicates = [cp.predicate for cp in tracker.checkpoints] + [rule.predicate for rule in tracker.violations]
    return max(
        (
            int(node.args[1].value)
            for predicate in predicates
            for node in expr.walk(predicate)
            if isinstance(node, expr.Call) and node.func == "held"
        ),
        default=0,
    )


class Stillness:
    """When an episode whose policy has finished can end early without changing its outcome.

    A policy's ``finished()`` promises it will only hold still. Once the scene is
    also still (:data:`STILL_SPEED`) for ``needed`` steps in a row (:data:`STILL_STEPS`,
    or one more than the tracker's longest ``held`` window if that is longer), with
    no checkpoint, goal or violation changing meanwhile, nothing is left to change
    the record before the horizon: every predicate reads a scene that no longer
    changes, ``ever``/``then`` have latched or cannot, and a ``held`` that has not
    latched within its window never will. The episode then ends with the outcome it
    would have at the horizon (:meth:`end`): a success when the required checkpoints
    are complete with no violation (and the post-goal window fits before the
    horizon), else unsuccessful with end reason :data:`POLICY_FINISHED`.
    """

    def __init__(self, tracker: CheckpointTracker) -> None:
        self.tracker = tracker
        self.needed = max(STILL_STEPS, longest_held(tracker) + 1)
        self.still_steps = 0
        self._last: tuple | None = None

    def settled(self, speed: float) -> bool:
        tracker = self.tracker
        state = (tuple(tracker.completed_steps), tuple(tracker.gate_steps()), tracker.violation)
        if speed < STILL_SPEED and state == self._last:
            self.still_steps += 1
        else:
            self.still_steps = 0
        self._last = state
        return self.still_steps >= self.needed

    def end(self, horizon: int) -> str:
        """Account the still steps up to the horizon (``horizon`` steps in all) and return the end reason."""
        self.tracker.hold_until(horizon - 1)
        return "success" if self.tracker.finished else POLICY_FINISHED


@dataclass
class EpisodeOutcome:
    """The ledger record plus, when asked for, the frames for the episode's videos."""

    record: EpisodeRecord
    frames: dict[str, list[np.ndarray]] = field(default_factory=dict)


def cue_targets(task: Task, binding: dict[str, Any]) -> list[str]:
    """The cue's targets with binding references resolved to object names."""
    targets = task.spec.cue.targets if task.spec.cue else []
    return [str(resolve_reference(target, binding)) for target in targets]


class DemoPerformer:
    """The performer of a ``demo`` cue: the task's scripted expert doing the episode's routine.

    It acts on the episode's own env, not on a forward model: the cue is the
    harness's script, not a policy. It starts knowing what the cue conveys
    (:meth:`~memobench.experts.expert.Plan.demonstrate_memory` of ``binding``) and
    runs until its plan considers the task done. First it holds still for
    ``settle`` steps, as the episode does before the policy acts: objects spawn a
    little above their supports, and the plans read the scene once settled.
    Raises ``NoPlanError`` when the task has no expert plan.
    """

    def __init__(self, task: Task, binding: dict[str, Any], env: SimEnv, rng: np.random.Generator, settle: int):
        self.scene = Scene(env)
        self.expert = Expert(plan_for(task.id), rng)
        self.expert.plan.demonstrate_memory(binding, self.scene, self.expert.memory)
        self.settle = settle

    def __call__(self) -> np.ndarray | None:
        """The next action of the demonstration, or None once the routine is done."""
        if self.settle > 0:
            self.settle -= 1
            return NOOP_ACTION
        action = self.expert.act(self.scene)
        return None if self.expert.done else action


def play_cue(task: Task, plan: EpisodePlan, env: SimEnv, world: WorldView, protocol: Protocol) -> CueRecording:
    """Play the task's cue in ``env`` (reset to the episode's layout), frames at camera size.

    The scene is restored exactly afterwards (:func:`~memobench.sim.cue.run_cue`).
    A ``demo`` cue is performed by the task's expert (:class:`DemoPerformer`), drawing
    (if ever) from the episode's ``cue`` generator.
    """
    cue = task.spec.cue
    if cue is None:
        return CueRecording()
    performer = None
    if cue.kind == "demo":
        rng = episode_rng(plan.seed, task.id, "cue")
        performer = DemoPerformer(task, plan.binding, env, rng, settle=protocol.stabilization_steps)
    return run_cue(
        env, world, cue.kind, cue_targets(task, plan.binding), performer=performer, size=protocol.camera_size
    )


def play_policy_cue(task: Task, plan: EpisodePlan, env: SimEnv, world: WorldView, protocol: Protocol) -> CueRecording:
    """The cue as a policy is shown it: :func:`play_cue`, frames resized and padded to ``resize_size``.

    ``env`` must have been reset to the plan's layout; it is restored exactly afterwards.
    Empty for a task without a cue.
    """
    if task.spec.cue is None:
        return CueRecording()
    cue = play_cue(task, plan, env, world, protocol)
    size = protocol.resize_size
    cue.frames = [resize_with_pad(f, size) for f in cue.frames]
    cue.wrist_frames = [resize_with_pad(f, size) for f in cue.wrist_frames]
    return cue


def stabilise(env: SimEnv, world: WorldView, tracker: CheckpointTracker, protocol: Protocol) -> None:
    """The steps between the cue and the policy's first action: ``stabilization_steps`` no-ops
    (objects spawn a little above their supports), then tracking starts from the settled scene."""
    for _ in range(protocol.stabilization_steps):
        env.step(NOOP_ACTION)
    world.set_reference()
    tracker.reset(world)


def policy_images(env: SimEnv, protocol: Protocol) -> tuple[np.ndarray, np.ndarray]:
    """The agent-view and wrist images a policy sees now: rendered at ``camera_size``, made
    ``resize_size`` square by ``resize_mode`` (padded, or squished as RoboMemArena does)."""
    size = protocol.resize_size
    resize = resize_squish if protocol.resize_mode == "squish" else resize_with_pad
    return (
        resize(env.render("agentview", protocol.camera_size), size),
        resize(env.render("wrist", protocol.camera_size), size),
    )


def execute(
    env: SimEnv,
    world: WorldView,
    tracker: CheckpointTracker,
    action: np.ndarray,
    step: int,
    *,
    success_ends: bool = False,
) -> str | None:
    """Execute one action as policy step ``step`` and track it; the end reason if the episode ends here.

    ``"violation"`` (or :data:`EXTRA_POUR`) when a commitment broke; with ``success_ends``
    (RoboMemArena's protocol: not ``commitments_to_horizon``) ``"success"`` once the required
    checkpoints are done and the post-goal window passed; otherwise None (MEMOBench's protocol
    decides success at the horizon: :func:`horizon_end`).
    """
    env.step(action)
    tracker.update(world, step)
    if tracker.violation:
        return EXTRA_POUR if tracker.violation == EXTRA_POUR else "violation"
    if success_ends and tracker.finished:
        return "success"
    return None


def horizon_end(tracker: CheckpointTracker) -> str:
    """The end reason of an episode that reached its horizon: ``"success"`` when every required
    checkpoint completed, no commitment broke and the post-goal window fitted, else ``"horizon"``."""
    return "success" if tracker.finished else "horizon"


class _Episode:
    """State of one running episode; :func:`run_episode` is the public entry point."""

    def __init__(
        self,
        task: Task,
        plan: EpisodePlan,
        env: SimEnv,
        guard: AdapterGuard,
        protocol: Protocol,
        capture_video: bool,
        recorder: StepRecorder | None = None,
        video_every: int = 0,
    ):
        self.task, self.plan, self.env, self.guard, self.protocol = task, plan, env, guard, protocol
        self.video_every = video_every
        self.recorder = recorder
        self.world = WorldView(env)
        self.capture_video = capture_video and env.renders
        self.policy_images = guard.needs_images and env.renders
        self.tracker = build_tracker(task, plan.binding, protocol)
        self.frames: dict[str, list[np.ndarray]] = {"agentview": [], "wrist": []}
        self.cue = CueRecording()
        self.timings = {"reset": 0.0, "cue": 0.0, "policy": 0.0, "sim": 0.0}
        self.steps = self.queries = 0
        self.short_chunk_queries = 0  # chunks with fewer rows than replan_steps
        self.min_chunk_rows: int | None = None
        self.clipping = Clipping()  # executed actions clipped into [-1, 1] (clip_actions)

    # -- phases ----------------------------------------------------------------------
    def reset(self) -> None:
        start = time.perf_counter()
        self.env.reset(self.plan.layout_seed, self.protocol.arm_start_jitter)
        self.timings["reset"] = time.perf_counter() - start
        if self.task.spec.cue is not None:
            start = time.perf_counter()
            self.cue = play_policy_cue(self.task, self.plan, self.env, self.world, self.protocol)
            self.timings["cue"] = time.perf_counter() - start
        if self.capture_video:
            self.frames["agentview"] += self.cue.frames
            self.frames["wrist"] += self.cue.wrist_frames

    def start_policy(self) -> None:
        """Reset the policy, show it the cue, stabilise, then (a cue task) the cue query."""
        self.guard.reset()
        self.guard.begin_episode(episode_rng(self.plan.seed, self.task.id, "policy"))
        for i, state in enumerate(self.cue.states):
            obs = {"observation/state": state, "cue": True}
            if self.guard.observe_images and self.cue.frames:
                obs["observation/image"] = self.cue.frames[i]
                obs["observation/wrist_image"] = self.cue.wrist_frames[i]
            self.guard.observe(obs)
        stabilise(self.env, self.world, self.tracker, self.protocol)
        if self.protocol.cue_query and self.task.spec.cue is not None:
            self.cue_query()
        if self.recorder is not None:
            self.recorder.begin(self.cue)

    def cue_query(self) -> None:
        """Query the policy once with the cue (``cue``: True, ``prompt_video`` when it gets images) and
        discard the chunk: it is validated (a broken one is the policy's error) but never executed,
        so nothing the policy does with the cue reaches the scene. Not counted in ``policy_queries``
        (the queries whose chunks ran); its time counts as the policy's."""
        obs = self.query_observation(step=0, images=self.policy_images)
        obs["cue"] = True
        if self.cue.frames and self.policy_images:
            obs["prompt_video"] = self.cue.video()
        start = time.perf_counter()
        self.guard.infer(obs, obs["prompt"], self.protocol.resize_size, range_check=not self.protocol.clip_actions)
        self.timings["policy"] += time.perf_counter() - start

    def prompt(self) -> str:
        level = self.protocol.memory_oracle
        instruction = self.task.spec.instruction
        if level is None:
            return instruction
        done = [
            cp.text.at(level)
            for cp, step in zip(self.task.spec.checkpoints, self.tracker.completed_steps, strict=True)
            if step is not None
        ]
        return oracle_prompt(instruction, done)

    def observation(self, images: bool) -> dict[str, Any]:
        """What a policy sees of the scene now (docs/protocol.md, section 1): no episode index, no step."""
        obs: dict[str, Any] = {"observation/state": self.env.robot_state(), "prompt": self.prompt()}
        if images:
            obs["observation/image"], obs["observation/wrist_image"] = policy_images(self.env, self.protocol)
        return obs

    def query_observation(self, step: int, images: bool) -> dict[str, Any]:
        """:meth:`observation`, plus for a privileged policy (the built-in experts) the task, the
        simulator's snapshot and the policy step ``step``; and, for one that ``wants_gate``
        (``adversary-arm``, which goes home only then), whether the episode waits for the arm at
        home (a home gate is the next item: that tells how far the task has got)."""
        obs = self.observation(images)
        if self.guard.privileged:
            obs["privileged/task"] = self.task
            obs["privileged/snapshot"] = self.env.snapshot()
            obs["privileged/step"] = step
            if self.guard.wants_gate:
                current = self.tracker.current_index
                obs["privileged/gate"] = current is not None and self.tracker.checkpoints[current].gate
        return obs

    def capture_frames(self) -> None:
        agentview, wrist = policy_images(self.env, self.protocol)
        self.frames["agentview"].append(agentview)
        self.frames["wrist"].append(wrist)

    def query(self, step: int) -> list[np.ndarray]:
        """Query the policy; returns the actions to run before the next query.

        These are the chunk's first ``replan_steps`` rows, or all of them when the
        chunk is shorter: the policy is then queried again after fewer steps (it
        is never padded). Such queries are counted and the shortest chunk kept for
        the record, so a shortened interval is visible in the ledger and run.json.
        """
        images = self.policy_images or self.capture_video
        obs = self.query_observation(step, images)
        if self.capture_video:
            self.frames["agentview"].append(obs["observation/image"])
            self.frames["wrist"].append(obs["observation/wrist_image"])
        if not self.policy_images:
            obs.pop("observation/image", None)
            obs.pop("observation/wrist_image", None)
        if self.queries == 0 and self.cue.frames and self.policy_images and not self.protocol.cue_query:
            obs["prompt_video"] = self.cue.video()  # RoboMemArena's protocol: with the first executed query
        start = time.perf_counter()
        chunk = self.guard.infer(
            obs, obs["prompt"], self.protocol.resize_size, range_check=not self.protocol.clip_actions
        )
        self.timings["policy"] += time.perf_counter() - start
        self.queries += 1
        rows = len(chunk)
        self.short_chunk_queries += rows < self.protocol.replan_steps
        self.min_chunk_rows = rows if self.min_chunk_rows is None else min(self.min_chunk_rows, rows)
        return list(chunk[: self.protocol.replan_steps])

    def rollout(self) -> str:
        """Run the policy loop; returns the end reason."""
        queue: list[np.ndarray] = []
        stillness = Stillness(self.tracker) if self.protocol.end_when_finished and self.guard.has_finished else None
        finished = False
        horizon = self.protocol.horizon_for(self.task)
        success_ends = not self.protocol.commitments_to_horizon
        for step in range(horizon):
            if not queue:
                queue = self.query(step)
                finished = stillness is not None and self.guard.finished()
            start = time.perf_counter()
            action = self.clipping.clip(queue.pop(0))  # a no-op unless clip_actions let the chunk through
            if self.recorder is not None:
                self.recorder.add(self.env, action)
            end = execute(self.env, self.world, self.tracker, action, step, success_ends=success_ends)
            self.steps = step + 1
            self.timings["sim"] += time.perf_counter() - start
            if self.capture_video and self.video_every and (step + 1) % self.video_every == 0 and queue:
                self.capture_frames()  # between queries; a query step captures its own
            if self.guard.observes_rollout:
                self.guard.observe(self.observation(self.guard.observe_images and self.env.renders))
            if end is not None:
                return end
            if finished and stillness.settled(self.env.max_speed()):
                return stillness.end(horizon)
        return horizon_end(self.tracker)

    # -- the record -------------------------------------------------------------------
    def record(self, status: EpisodeStatus, end_reason: str, error: str | None, total: float) -> EpisodeRecord:
        timings = {k: round(v, 4) for k, v in {**self.timings, "total": total}.items()}
        return make_record(
            self.task,
            self.plan,
            self.tracker,
            status,
            end_reason,
            error,
            steps=self.steps,
            queries=self.queries,
            timings=timings,
            short_chunk_queries=self.short_chunk_queries,
            min_chunk_rows=self.min_chunk_rows,
            clipped_actions=self.clipping.actions,
            max_action_excess=self.clipping.max_excess,
        )


def make_record(
    task: Task,
    plan: EpisodePlan,
    tracker: CheckpointTracker,
    status: EpisodeStatus,
    end_reason: str,
    error: str | None,
    *,
    steps: int = 0,
    queries: int = 0,
    timings: dict[str, float] | None = None,
    short_chunk_queries: int = 0,
    min_chunk_rows: int | None = None,
    clipped_actions: int = 0,
    max_action_excess: float = 0.0,
) -> EpisodeRecord:
    """The ledger record of an episode from its plan, its tracker and how it ended."""
    success = status == EpisodeStatus.OK and end_reason == "success"
    checkpoints = tracker.results()
    violation = None
    if tracker.violation is not None:
        violation = Violation(name=tracker.violation, step=tracker.violation_step)
    return EpisodeRecord(
        task_id=task.id,
        memory_type=task.spec.family,
        episode=plan.episode,
        seed=plan.seed,
        binding=binding_label(plan.binding),
        status=status,
        success=success,
        failure_class=classify_failure(success, status, end_reason, checkpoints),
        end_reason=end_reason,
        checkpoints=checkpoints,
        violation=violation,
        stage_score=tracker.stage_score,
        stages_complete=tracker.stages_complete,
        average_score=tracker.average_score,
        pour_counts=tracker.pour_counts(),
        pour_tilts=tracker.pour_tilts(),
        gates=tracker.gate_steps(),
        steps=steps,
        policy_queries=queries,
        short_chunk_queries=short_chunk_queries,
        min_chunk_rows=min_chunk_rows,
        clipped_actions=clipped_actions,
        max_action_excess=round(max_action_excess, 6),
        error=error,
        timings=timings or {},
    )


def run_episode(
    task: Task,
    plan: EpisodePlan,
    env: SimEnv,
    guard: AdapterGuard,
    protocol: Protocol,
    *,
    capture_video: bool = False,
    recorder: StepRecorder | None = None,
    video_every: int = 0,
) -> EpisodeOutcome:
    """Run one episode to its end and describe it; never raises for policy or simulator failures.

    Videos (``capture_video``) hold the frames the policy was shown at its
    queries and, with ``video_every`` n > 0, also every n-th step between them;
    nothing else is rendered.

    A ``recorder`` (demonstration collection) is given the cue and, before each
    executed action, the state it acts on.
    """
    start = time.perf_counter()
    ep = _Episode(task, plan, env, guard, protocol, capture_video, recorder, video_every)
    status, end_reason, error = EpisodeStatus.OK, "horizon", None
    try:
        ep.reset()
        ep.start_policy()
        end_reason = ep.rollout()
    except AdapterError as e:
        status, end_reason, error = EpisodeStatus.ADAPTER_ERROR, "adapter_error", str(e)
    except Exception as e:  # the simulator or LIBERO failed: record it, keep the sweep going
        status, end_reason = EpisodeStatus.ENV_ERROR, "env_error"
        error = f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=6)}"
    record = ep.record(status, end_reason, error, time.perf_counter() - start)
    frames = ep.frames if ep.capture_video else {}
    return EpisodeOutcome(record=record, frames=frames)


def env_error_record(task: Task, plan: EpisodePlan, error: str) -> EpisodeRecord:
    """The record of an episode that could not start because its env could not be built
    (or whose worker kept dying in the simulator)."""
    tracker = build_tracker(task, plan.binding, Protocol())
    return make_record(task, plan, tracker, EpisodeStatus.ENV_ERROR, "env_error", error)


def adapter_error_record(task: Task, plan: EpisodePlan, error: str) -> EpisodeRecord:
    """The record of an episode whose worker process the policy ended (it died inside an adapter call).

    The episode's progress died with the worker, so the record has no checkpoint
    completed and no steps: the policy failed it, as if it had raised at once.
    """
    tracker = build_tracker(task, plan.binding, Protocol())
    return make_record(task, plan, tracker, EpisodeStatus.ADAPTER_ERROR, "adapter_error", error)
