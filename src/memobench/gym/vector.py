"""``make_env(task, n_envs)``: a vector env of one task, as LeRobot's evaluation loop takes one.

LeRobot builds its evaluation envs with ``make_env(cfg, n_envs, use_async_envs)`` and steps
them as one batch; this is the same shape for a MEMOBench task, without LeRobot's config
classes. Seeds are given at reset, one per env (``envs.reset(seed=[7, 8])`` plays the
harness's episodes of seeds 7 and 8); the cues of different seeds stack because each env
pads its cue (:mod:`memobench.gym.cue`).
"""

from __future__ import annotations

import functools
from typing import Any

import gymnasium

from memobench.gym.registration import NAMESPACE, registered_ids


def make_env(
    task: str, n_envs: int = 1, *, use_async_envs: bool = False, **env_kwargs: Any
) -> gymnasium.vector.VectorEnv:
    """``n_envs`` envs of ``task`` as one vector env (``SyncVectorEnv``, or ``AsyncVectorEnv``).

    ``task`` is a registered id (``MEMOBench/O01-cued-milk-v2``) or a task id, whole or its
    prefix (``O01-cued-milk``, ``O01``: its newest version). ``env_kwargs`` go to every env
    (``obs_mode``, ``size``, ``reward``, ...). Async workers are spawned, not forked: a forked
    child would share the parent's MuJoCo and GL state; they import ``memobench.gym`` through
    the id's module prefix, which registers the ids in each. Raises ``ValueError`` for
    ``n_envs`` < 1 or a task with no registered id, before any env is built.
    """
    if n_envs < 1:
        raise ValueError(f"n_envs must be at least 1, got {n_envs}")
    gym_id = resolve_id(task)
    make = functools.partial(gymnasium.make, f"memobench.gym:{gym_id}", **env_kwargs)
    if use_async_envs:
        return gymnasium.vector.AsyncVectorEnv([make] * n_envs, context="spawn")
    return gymnasium.vector.SyncVectorEnv([make] * n_envs)


def resolve_id(task: str) -> str:
    """The registered id ``task`` names (see :func:`make_env`)."""
    ids = registered_ids()
    if task in ids:
        return task
    name = task.removeprefix(f"{NAMESPACE}/")
    matches = [i for i in ids if i.removeprefix(f"{NAMESPACE}/").rsplit("-v", 1)[0] == name]
    matches = matches or [i for i in ids if i.removeprefix(f"{NAMESPACE}/").startswith(f"{name}-")]
    if len(matches) != 1:
        raise ValueError(f"{task!r} names {len(matches)} MEMOBench envs; give a task id or one of registered_ids()")
    return matches[0]
