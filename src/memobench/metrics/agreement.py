"""Inter-annotator agreement on categorical labels (Fleiss' kappa).

``counts[i][j]`` is how many annotators put item ``i`` in category ``j``;
every item must be rated by the same number of annotators (at least 2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class FleissResult:
    kappa: float
    observed: float  # mean pairwise agreement per item, P-bar
    chance: float  # agreement expected from the category shares, P-bar-e
    category_share: list[float]  # p_j
    per_category_kappa: list[float]  # kappa of each category against all others


def fleiss_kappa(counts: Sequence[Sequence[int]]) -> FleissResult:
    table = np.asarray(counts, dtype=float)
    if table.ndim != 2 or table.shape[0] == 0:
        raise ValueError("counts must be a non-empty items x categories table")
    raters = table.sum(axis=1)
    if not np.all(raters == raters[0]) or raters[0] < 2:
        raise ValueError(f"every item needs the same number (>= 2) of ratings; got {sorted(set(raters.tolist()))}")
    n, m = raters[0], table.shape[0]
    share = table.sum(axis=0) / (m * n)
    per_item = (np.sum(table * table, axis=1) - n) / (n * (n - 1))
    observed, chance = float(per_item.mean()), float(np.sum(share * share))
    kappa = 1.0 if chance == 1.0 else (observed - chance) / (1.0 - chance)
    per_category = []
    for j, p in enumerate(share):
        q = 1.0 - p
        if p * q == 0:
            per_category.append(float("nan"))
            continue
        disagreement = np.sum(table[:, j] * (n - table[:, j])) / (m * n * (n - 1) * p * q)
        per_category.append(float(1.0 - disagreement))
    return FleissResult(float(kappa), observed, chance, share.tolist(), per_category)
