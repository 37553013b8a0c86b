"""Binomial rates with 95% Wilson score intervals.

Every MEMOBench metric is a count ``k`` of successes out of ``n`` trials
(episodes or checkpoint instances). Rates are fractions in [0, 1]; a rate over
zero trials is *undefined* (NaN), never 0, so an absent checkpoint type is not
mistaken for a failed one.
"""

from __future__ import annotations

import math
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


@dataclass(frozen=True)
class Rate:
    """``k`` successes out of ``n`` trials (``0 <= k <= n``).

    Adding two rates pools them (sums ``k`` and ``n``), which is how per-task
    counts become per-memory-type and overall counts.
    """

    k: int
    n: int

    def __post_init__(self) -> None:
        _check_counts(self.k, self.n)

    @property
    def defined(self) -> bool:
        """True when there is at least one trial."""
        return self.n > 0

    @property
    def value(self) -> float:
        """``k / n`` in [0, 1]; NaN when ``n == 0``."""
        return self.k / self.n if self.n else math.nan

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
