"""The Gymnasium API: every task as ``gymnasium.make("MEMOBench/<task id>-v<n>", obs_mode=...)``.

Importing this package registers the ids (:mod:`memobench.gym.registration`); the env is
:class:`memobench.gym.env.MemoBenchEnv`. Needs ``gymnasium`` (``pip install 'memobench[gym]'``);
``import memobench`` never imports it.
"""

from __future__ import annotations

from memobench.gym.registration import register_envs, registered_ids

register_envs()

__all__ = ["register_envs", "registered_ids"]
