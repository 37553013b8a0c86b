"""One MEMOBench task as a Gymnasium environment, episodes exactly as the harness runs them.

``reset(seed=s)`` is the harness's episode of seed ``s`` (``memobench eval --seed 7`` runs
seeds 7, 8, ...): the same binding, layout, cue and stabilisation, through the harness's own
functions (:mod:`memobench.evaluation.episode`). ``step`` executes one action and tracks the
checkpoints and commitments as the harness does.

- reward: ``sparse`` 1.0 on the step the episode succeeds: the last, at the horizon (the
  commitments hold until then; docs/protocol.md, section 2); ``dense`` +1.0 for every checkpoint
  completed on that step.
- ``terminated`` on a broken commitment (a violation, an extra pour); ``truncated`` at the
  task's horizon (or ``horizon``), where ``info["success"]`` says whether the episode succeeded.
- The observation holds no episode index and no step (a policy that reads it gets neither).
  ``info`` is the training loop's, for logging: after every step the step count, the checkpoints
  completed, the stages complete, the violation (``""`` if none), the end reason (``""`` while
  running) and success; after reset also the episode (seed, variant, binding, layout seed,
  instruction, object names) and the cue. A policy that reads ``info`` beyond the cue reads
  what the harness never shows one.
- The cue is shown before the first step, as the harness shows it to a policy: ``info["cue"]``
  at reset holds it as a stack of observations of the env's mode, recorded every few control
  steps while the cue played, padded with zero frames to ``cue_frames`` frames, the task's
  longest possible cue (0 for a task without a cue); ``info["cue_length"]`` is the number of
  frames that are the cue, the rest being padding. The padding lets a vector env stack the
  cues of different seeds (:mod:`memobench.gym.cue` says why padding).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from memobench.core.bindings import binding_label
from memobench.core.suite import Suite, Task
from memobench.core.tracker import EXTRA_POUR, CheckpointTracker
from memobench.evaluation.envs import EnvCache
from memobench.evaluation.episode import build_tracker, execute, horizon_end, play_policy_cue, stabilise
from memobench.evaluation.protocol import EpisodePlan, Protocol, plan_episode
from memobench.gym.cue import cue_bound, pad_cue
from memobench.gym.observation import (
    OBS_MODES,
    SceneLayout,
    cue_observations,
    observation_space,
    rgb_observation,
    state_observation,
)
from memobench.sim.env import SimEnv
from memobench.sim.world import WorldView

REWARDS = ("sparse", "dense")
TERMINAL = ("success", "violation", EXTRA_POUR)  # the end reasons that terminate an episode


class SpecMismatchError(RuntimeError):
    """The env id was registered for another version of the task's spec than the one installed."""


class MemoBenchEnv(gymnasium.Env):
    """A MEMOBench task behind the Gymnasium API (see the module docstring for the contract).

    ``obs_mode`` ``"state"`` (camera-free, what a camera could see) or ``"rgb"`` (both cameras
    at ``size`` x ``size``); ``reward`` ``"sparse"`` or ``"dense"``; ``horizon`` overrides the
    task's (diagnostics); ``clip_actions`` (default) clips actions outside [-1, 1], False refuses
    them with a ``ValueError`` (the harness's default and ``--strict-actions``). ``spec_hash`` is
    set by the registration: the task's installed spec must have that hash (:mod:`memobench.gym.versions`).
    Building costs a few seconds (the LIBERO scene); reset costs milliseconds plus the cue.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 20}

    def __init__(
        self,
        task_id: str,
        *,
        spec_hash: str | None = None,
        obs_mode: str = "state",
        size: int = 224,
        reward: str = "sparse",
        horizon: int | None = None,
        clip_actions: bool = True,
        render_mode: str | None = None,
    ):
        _check_choice("obs_mode", obs_mode, OBS_MODES)
        _check_choice("reward", reward, REWARDS)
        _check_choice("render_mode", render_mode, (None, *self.metadata["render_modes"]))
        self.task: Task = Suite.load().get(task_id)
        if spec_hash is not None and spec_hash != self.task.spec_hash:
            raise SpecMismatchError(
                f"{self.task.id}: this env id stands for spec {spec_hash}, the installed task is spec "
                f"{self.task.spec_hash}; use the id registered for it (memobench.gym.registered_ids())"
            )
        self.protocol = Protocol(resize_size=size, horizon=horizon, clip_actions=clip_actions)
        self.obs_mode, self.reward_mode, self.render_mode = obs_mode, reward, render_mode
        self._renders = obs_mode == "rgb" or render_mode == "rgb_array"
        self._envs = EnvCache()
        # The scene's objects are the same for every binding: the first variant's env fixes the order.
        self._sim = self._sim_for(plan_episode(self.task, 0, self.protocol.seed))
        self.layout = SceneLayout.of(self._sim)
        self.observation_space = observation_space(obs_mode, self.layout, size)
        self.action_space = spaces.Box(-1.0, 1.0, (7,), np.float32)
        self.cue_frames = cue_bound(self.task)  # every reset's info["cue"] has this many frames
        self._world: WorldView | None = None
        self._tracker: CheckpointTracker | None = None
        self._step = 0
        self._ended = True

    @property
    def instruction(self) -> str:
        return self.task.spec.instruction

    # -- the Gymnasium API -------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start the harness's episode of ``seed``; without one, a seed drawn from the env's generator."""
        super().reset(seed=seed)
        if seed is None:
            seed = int(self.np_random.integers(2**31 - 1))
        plan = plan_episode(self.task, 0, seed)
        self._sim = self._sim_for(plan)
        self._world = world = WorldView(self._sim)
        self._tracker = build_tracker(self.task, plan.binding, self.protocol)
        self._sim.reset(plan.layout_seed, self.protocol.arm_start_jitter)
        cue = play_policy_cue(self.task, plan, self._sim, world, self.protocol)
        cue_obs = cue_observations(self.obs_mode, self._sim, world, self.layout, cue, self.protocol.resize_size)
        stabilise(self._sim, world, self._tracker, self.protocol)
        self._step, self._ended = 0, False
        cue_length = len(cue_obs["robot_state"])
        info = {
            **self._episode_info(plan),
            **self._progress(""),
            "cue": pad_cue(cue_obs, self.cue_frames),
            "cue_length": cue_length,
        }
        return self._observe(), info

    def step(self, action):
        if self._ended or self._tracker is None:
            raise RuntimeError("step() before reset() or after the episode ended (terminated or truncated)")
        action = self._checked(action)
        done_before = self._completed()
        success_ends = not self.protocol.commitments_to_horizon
        end = execute(self._sim, self._world, self._tracker, action, self._step, success_ends=success_ends)
        self._step += 1
        terminated = end in TERMINAL
        truncated = not terminated and self._step >= self.protocol.horizon_for(self.task)
        if truncated:
            end = horizon_end(self._tracker)  # MEMOBench's protocol decides success here
        self._ended = terminated or truncated
        if self.reward_mode == "dense":
            reward = float(self._completed() - done_before)
        else:
            reward = 1.0 if end == "success" else 0.0
        return self._observe(), reward, terminated, truncated, self._progress(end or "")

    def render(self):
        """The agent-view image at ``size`` (``render_mode="rgb_array"``), else None."""
        if self.render_mode != "rgb_array":
            return None
        return rgb_observation(self._sim, self.protocol)["agentview"]

    def close(self) -> None:
        self._envs.close()
        super().close()

    # -- helpers ---------------------------------------------------------------------------
    def _sim_for(self, plan: EpisodePlan) -> SimEnv:
        env, _ = self._envs.get(self.task, plan.variant, plan.binding, self._renders, self.protocol.render_quality)
        if hasattr(self, "layout") and SceneLayout.of(env) != self.layout:
            raise RuntimeError(f"{self.task.id}: variant {plan.variant} has other objects than variant 0")
        return env

    def _observe(self) -> dict[str, np.ndarray]:
        if self.obs_mode == "rgb":
            return rgb_observation(self._sim, self.protocol)
        return state_observation(self._sim, self._world, self.layout)

    def _checked(self, action) -> np.ndarray:
        action = np.asarray(action, dtype=np.float64)
        if action.shape != (7,) or not np.all(np.isfinite(action)):
            raise ValueError(f"an action is 7 finite numbers in [-1, 1], got shape {action.shape}: {action}")
        if np.any(np.abs(action) > 1.0):
            if not self.protocol.clip_actions:
                raise ValueError(f"action outside [-1, 1] (the env was made with clip_actions=False): {action}")
            action = np.clip(action, -1.0, 1.0)
        return action

    def _completed(self) -> int:
        return sum(step is not None for step in self._tracker.completed_steps)

    def _episode_info(self, plan: EpisodePlan) -> dict[str, Any]:
        return {
            "seed": plan.seed,
            "variant": plan.variant,
            "binding": binding_label(plan.binding),
            "layout_seed": plan.layout_seed,
            "instruction": self.instruction,
            "object_names": list(self.layout.objects),
        }

    def _progress(self, end_reason: str) -> dict[str, Any]:
        tracker = self._tracker
        return {
            "step": self._step,
            "checkpoints_completed": np.array([s is not None for s in tracker.completed_steps]),
            "stages_complete": bool(tracker.stages_complete),
            "violation": tracker.violation or "",
            "end_reason": end_reason,
            "success": end_reason == "success",
        }


def _check_choice(name: str, value: Any, allowed: tuple) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
