"""Every random draw of an episode comes from a generator derived here.

A generator is a pure function of (seed, task id, purpose), so an episode is
the same whatever ran before it, in whichever worker, in whichever order.
Nothing here touches numpy's global random state.
"""

from __future__ import annotations

import zlib

import numpy as np

PURPOSES = ("binding", "layout", "policy", "cue")


def episode_rng(seed: int, task_id: str, purpose: str) -> np.random.Generator:
    """A generator for one purpose of one episode of one task.

    Raises ``ValueError`` for an unknown purpose (a typo would silently share streams).
    """
    if purpose not in PURPOSES:
        raise ValueError(f"unknown rng purpose {purpose!r}; known: {', '.join(PURPOSES)}")
    entropy = [int(seed) & 0xFFFFFFFF, zlib.crc32(task_id.encode()), PURPOSES.index(purpose)]
    return np.random.default_rng(np.random.SeedSequence(entropy))


def episode_seed(seed_base: int, episode: int) -> int:
    """The protocol's per-episode seed: seed base + episode index."""
    return int(seed_base) + int(episode)
