"""Paired comparisons of two runs on the episodes (seeds) both ran.

- :func:`mcnemar_exact`: success vs failure per episode. Only discordant
  episodes carry information; under the null each is equally likely to
  favour either run, so the two-sided p-value is an exact binomial tail.
- :func:`paired_bootstrap`: the difference of means of any per-episode
  quantity (stage score, a checkpoint's completion), resampling episodes
  with replacement, with a fixed generator so reports are reproducible.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

BOOTSTRAP_SAMPLES = 10_000
BOOTSTRAP_SEED = 0


@dataclass(frozen=True)
class PairedResult:
    """Difference B - A, its 95% interval where there is one, and a two-sided p-value."""

    n: int
    difference: float
    p_value: float
    low: float | None = None
    high: float | None = None

    @property
    def significant(self) -> bool:
        return self.p_value < 0.05


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> PairedResult:
    """Exact McNemar test of paired successes ``a[i]``, ``b[i]`` (same episode i)."""
    if len(a) != len(b):
        raise ValueError(f"paired samples differ in length: {len(a)} vs {len(b)}")
    only_a = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    discordant = only_a + only_b
    if discordant == 0:
        p = 1.0
    else:
        tail = sum(math.comb(discordant, i) for i in range(min(only_a, only_b) + 1)) / 2**discordant
        p = min(1.0, 2 * tail)
    n = len(a)
    return PairedResult(n, (only_b - only_a) / n if n else 0.0, p)


def paired_bootstrap(
    a: Sequence[float], b: Sequence[float], samples: int = BOOTSTRAP_SAMPLES, seed: int = BOOTSTRAP_SEED
) -> PairedResult:
    """Mean of ``b - a`` with a percentile 95% interval and a two-sided bootstrap p-value."""
    diffs = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    if diffs.ndim != 1 or len(a) != len(b):
        raise ValueError(f"paired samples differ in length: {len(a)} vs {len(b)}")
    n = len(diffs)
    if n == 0:
        return PairedResult(0, 0.0, 1.0)
    observed = float(diffs.mean())
    rng = np.random.default_rng(seed)
    means = diffs[rng.integers(0, n, size=(samples, n))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    # p: how often the resampled mean lands on the other side of 0 (shifted to the null), two-sided
    centred = means - observed
    p = float(min(1.0, (np.sum(np.abs(centred) >= abs(observed)) + 1) / (samples + 1)))
    if np.all(diffs == 0):
        p = 1.0
    return PairedResult(n, observed, p, float(low), float(high))
