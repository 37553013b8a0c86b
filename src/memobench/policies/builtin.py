"""Built-in reference policies (camera-free): lower bounds every report should show."""

from __future__ import annotations

from typing import Any

import numpy as np

CHUNK = 50  # the paper's action-chunk length


class NoopPolicy:
    """Holds still with the gripper open: the floor every policy must beat."""

    needs_images = False

    def __init__(self, chunk: int = CHUNK):
        self.chunk = int(chunk)

    def reset(self) -> None:
        pass

    def infer_actions(self, obs: dict[str, Any], prompt: str, resize_size: int) -> np.ndarray:
        actions = np.zeros((self.chunk, 7))
        actions[:, 6] = -1.0
        return actions


class RandomPolicy:
    """Uniform random actions in [-1, 1], drawn from the episode's generator (reproducible)."""

    needs_images = False

    def __init__(self, chunk: int = CHUNK, scale: float = 1.0):
        self.chunk, self.scale = int(chunk), float(scale)
        self._rng = np.random.default_rng(0)

    def begin_episode(self, rng: np.random.Generator) -> None:
        self._rng = rng

    def reset(self) -> None:
        pass

    def infer_actions(self, obs: dict[str, Any], prompt: str, resize_size: int) -> np.ndarray:
        return self.scale * self._rng.uniform(-1.0, 1.0, size=(self.chunk, 7))
