"""Feature statistics in the form LeRobot 0.4.x keeps them, computed episode by episode.

Every statistic set holds ``min``, ``max``, ``mean``, ``std``, ``count`` and the
quantiles ``q01``, ``q10``, ``q50``, ``q90``, ``q99`` (QUANTILES normalisation, pi0.5's
default, reads the quantiles). Vector features get one value per dimension; image
features one per channel, in [0, 1], shaped (3, 1, 1), from a fixed sample of at most
:data:`IMAGE_SAMPLE` frames per episode converted to float32 (never a float copy of all frames).

An episode's statistics are exact (its values fit in memory). The dataset's are merged
from the episodes' as LeRobot merges them: min/max of the extremes, the count-weighted
mean, the pooled variance (exact), and each quantile as the count-weighted mean of the
episodes' quantiles (an approximation, LeRobot's own). :class:`RunningStats` merges as
episodes arrive, so memory does not grow with the number of episodes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

QUANTILES = (0.01, 0.10, 0.50, 0.90, 0.99)
QUANTILE_KEYS = tuple(f"q{round(q * 100):02d}" for q in QUANTILES)
IMAGE_SAMPLE = 64  # frames per episode that image statistics are drawn from (evenly spaced)


def vector_stats(values: np.ndarray) -> dict[str, np.ndarray]:
    """Per-dimension statistics of ``values`` [N] or [N, D] (N >= 1); a 1-D input gives shape (1,)."""
    flat = np.asarray(values, dtype=np.float64).reshape(len(values), -1)
    if not len(flat):
        raise ValueError("statistics of no values")
    quantiles = np.quantile(flat, QUANTILES, axis=0)
    return {
        "min": flat.min(0),
        "max": flat.max(0),
        "mean": flat.mean(0),
        "std": flat.std(0),
        "count": np.array([len(flat)]),
        **{key: quantiles[i] for i, key in enumerate(QUANTILE_KEYS)},
    }


def image_sample(length: int) -> np.ndarray:
    """Indices of the frames an episode of ``length`` frames samples for image statistics."""
    return np.unique(np.linspace(0, length - 1, min(length, IMAGE_SAMPLE)).round().astype(np.int64))


def image_stats(frames: np.ndarray) -> dict[str, np.ndarray]:
    """Per-channel statistics in [0, 1], shaped (3, 1, 1), of a sample of ``frames`` [N, H, W, 3] uint8."""
    sample = frames[image_sample(len(frames))]
    pixels = sample.reshape(-1, 3).astype(np.float32) / np.float32(255)
    quantiles = np.quantile(pixels, QUANTILES, axis=0)

    def shaped(v: np.ndarray) -> np.ndarray:
        return np.asarray(v, dtype=np.float64).reshape(3, 1, 1)

    return {
        "min": shaped(pixels.min(0)),
        "max": shaped(pixels.max(0)),
        "mean": shaped(pixels.mean(0, dtype=np.float64)),
        "std": shaped(pixels.std(0, dtype=np.float64)),
        "count": np.array([len(sample)]),
        **{key: shaped(quantiles[i]) for i, key in enumerate(QUANTILE_KEYS)},
    }


class RunningStats:
    """The merge of many statistic sets of one feature (see the module docstring for how)."""

    def __init__(self) -> None:
        self.count = 0
        self.min = self.max = self.mean = self.m2 = None
        self.quantile_sums: dict[str, np.ndarray] = {}

    def add(self, stats: dict[str, np.ndarray]) -> None:
        n = int(stats["count"][0])
        mean, m2 = stats["mean"], stats["std"] ** 2 * n
        if self.count == 0:
            self.min, self.max, self.mean, self.m2 = stats["min"], stats["max"], mean, m2
            self.quantile_sums = {key: stats[key] * n for key in QUANTILE_KEYS}
            self.count = n
            return
        total = self.count + n
        delta = mean - self.mean
        self.mean = self.mean + delta * (n / total)
        self.m2 = self.m2 + m2 + delta**2 * (self.count * n / total)
        self.min, self.max = np.minimum(self.min, stats["min"]), np.maximum(self.max, stats["max"])
        for key in QUANTILE_KEYS:
            self.quantile_sums[key] = self.quantile_sums[key] + stats[key] * n
        self.count = total

    def result(self) -> dict[str, np.ndarray]:
        if self.count == 0:
            raise ValueError("no statistics were added")
        return {
            "min": self.min,
            "max": self.max,
            "mean": self.mean,
            "std": np.sqrt(self.m2 / self.count),
            "count": np.array([self.count]),
            **{key: self.quantile_sums[key] / self.count for key in QUANTILE_KEYS},
        }


def as_json(stats: dict[str, np.ndarray]) -> dict[str, Any]:
    """Statistics as JSON-ready nested lists (``count`` as integers)."""
    return {key: np.asarray(value).tolist() for key, value in stats.items()}
