"""Binomial rates with 95% Wilson score intervals, and means of per-episode scores.

SR, MSR, MUR, MCR and TSR are a count ``k`` of successes out of ``n`` trials
(episodes or checkpoint instances): :class:`Rate`. CSR is a mean of per-episode
scores in [0, 1], averaged per task and then over tasks: :class:`MeanScore`.
Both are fractions in [0, 1]; a value over zero trials is *undefined* (NaN),
never 0, so an absent checkpoint type is not mistaken for a failed one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Z95 = 1.959963984540054  # two-sided 95% standard-normal quantile


def wilson_interval(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for ``k`` successes out of ``n`` trials.

    Returns ``(lower, upper)``, fractions with ``0 <= lower <= k/n <= upper <= 1``;
    ``(nan, nan)`` when ``n == 0``. The bounds are exact at the edges: lower is
    0.0 when ``k == 0`` and upper is 1.0 when ``k == n``.

    Raises ValueError when ``n < 0`` or ``k`` is not in ``[0, n]``.
    """
    _check_counts(k, n)
    if n == 0:
        return (math.nan, math.nan)
    z2 = z * z
    # Closed forms at the edges: the general formula gives the same value up to
    # rounding, which could put the bound a hair outside [0, 1].
    if k == 0:
        return (0.0, z2 / (n + z2))
    if k == n:
        return (n / (n + z2), 1.0)
    p = k / n
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def _check_counts(k: int, n: int) -> None:
    if n < 0 or not 0 <= k <= n:
        raise ValueError(f"invalid counts k={k}, n={n}: need 0 <= k <= n")


def nan_to_none(x: float) -> float | None:
    """JSON has no NaN: render an undefined value as ``None`` (``null``)."""
    return None if math.isnan(x) else x


class _Ratio:
    """``value = k / n`` of a metric: ``n`` trials or averaged values, ``k`` their sum."""

    k: float
    n: int

    @property
    def defined(self) -> bool:
        """True when there is at least one trial (or averaged value)."""
        return self.n > 0

    @property
    def value(self) -> float:
        """``k / n`` in [0, 1]; NaN when ``n == 0``."""
        return self.k / self.n if self.n else math.nan


@dataclass(frozen=True)
class Rate(_Ratio):
    """``k`` successes out of ``n`` trials (``0 <= k <= n``).

    Adding two rates pools them (sums ``k`` and ``n``), which is how per-task
    counts become per-memory-type and overall counts.
    """

    k: int
    n: int

    def __post_init__(self) -> None:
        _check_counts(self.k, self.n)

    @property
    def ci95(self) -> tuple[float, float]:
        """95% Wilson interval; ``(nan, nan)`` when ``n == 0``."""
        return wilson_interval(self.k, self.n)

    def __add__(self, other: Rate) -> Rate:
        if not isinstance(other, Rate):
            return NotImplemented
        return Rate(self.k + other.k, self.n + other.n)

    def to_dict(self) -> dict[str, Any]:
        """``{"value", "k", "n", "ci95": [lo, hi]}`` with ``None`` for undefined values."""
        lo, hi = self.ci95
        return {
            "value": nan_to_none(self.value),
            "k": self.k,
            "n": self.n,
            "ci95": [nan_to_none(lo), nan_to_none(hi)],
        }


@dataclass(frozen=True)
class MeanScore(_Ratio):
    """A macro mean over tasks of each task's mean per-episode score (CSR), with a 95% interval.

    ``value`` = (1/T) * sum over the T tasks of m_t, where m_t is the mean of
    task t's per-episode scores (each in [0, 1]); NaN when there is no task.
    With one task it is that task's mean over its episodes.

    ``ci95`` is a normal approximation that treats the tasks as fixed and the
    episodes as the sample (as the Wilson intervals of the pooled rates do):
    ``value -/+ z * sqrt(sum_t s_t^2 / n_t) / T``, with s_t^2 the sample variance
    (n_t - 1 in the denominator) of task t's n_t scores, clipped to [0, 1]. It
    is (nan, nan) when any task has fewer than two episodes, and has zero width
    when every episode of every task scored the same.

    ``n`` counts what was averaged: the episodes of a single task, else the
    tasks (``unit`` says which), and ``k`` is the sum of those values, so
    ``value == k / n`` as for a :class:`Rate`.
    """

    k: float
    n: int
    unit: str  # "episodes" (one task) or "tasks"
    low: float
    high: float

    @classmethod
    def of_tasks(cls, scores: Mapping[str, Sequence[float]], z: float = Z95) -> MeanScore:
        """The estimate from per-episode scores grouped by task; tasks with no score are skipped."""
        groups = [list(map(float, s)) for s in scores.values() if len(s)]
        if not groups:
            return cls(0.0, 0, "tasks", math.nan, math.nan)
        means = [math.fsum(g) / len(g) for g in groups]
        value = math.fsum(means) / len(means)
        low = high = math.nan
        if all(len(g) >= 2 for g in groups):
            variance = math.fsum(_sample_variance(g) / len(g) for g in groups)
            half = z * math.sqrt(variance) / len(groups)
            low, high = max(0.0, value - half), min(1.0, value + half)
        if len(groups) == 1:
            return cls(math.fsum(groups[0]), len(groups[0]), "episodes", low, high)
        return cls(math.fsum(means), len(means), "tasks", low, high)

    @property
    def ci95(self) -> tuple[float, float]:
        """The normal-approximation 95% interval described on the class; NaN bounds if undefined."""
        return (self.low, self.high)

    def to_dict(self) -> dict[str, Any]:
        """``{"value", "k", "n", "unit", "ci95": [lo, hi]}`` with ``None`` for undefined values.

        The keys of :meth:`Rate.to_dict` plus ``unit``; ``k`` is a float here.
        """
        return {
            "value": nan_to_none(self.value),
            "k": self.k,
            "n": self.n,
            "unit": self.unit,
            "ci95": [nan_to_none(self.low), nan_to_none(self.high)],
        }


def _sample_variance(values: Sequence[float]) -> float:
    """Sample variance with ``n - 1`` in the denominator; needs ``len(values) >= 2``."""
    mean = math.fsum(values) / len(values)
    return math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1)
