"""Paired tests and Fleiss' kappa against hand-computed and published values."""

from __future__ import annotations

import math

import pytest

from memobench.metrics.agreement import fleiss_kappa
from memobench.metrics.paired import mcnemar_exact, paired_bootstrap

# Fleiss (1971) as worked on Wikipedia: 10 items, 14 raters, 5 categories -> kappa 0.210.
WIKIPEDIA_TABLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def test_fleiss_kappa_matches_the_published_worked_example():
    result = fleiss_kappa(WIKIPEDIA_TABLE)
    assert result.kappa == pytest.approx(0.210, abs=5e-4)
    assert result.observed == pytest.approx(0.378, abs=5e-4)
    assert result.chance == pytest.approx(0.213, abs=5e-4)
    assert result.category_share == pytest.approx([0.143, 0.200, 0.279, 0.150, 0.229], abs=5e-4)


def test_fleiss_kappa_perfect_and_bad_tables():
    perfect = fleiss_kappa([[3, 0], [0, 3], [3, 0]])
    assert perfect.kappa == pytest.approx(1.0) and perfect.per_category_kappa == pytest.approx([1.0, 1.0])
    with pytest.raises(ValueError, match="same number"):
        fleiss_kappa([[2, 1], [1, 1]])


def test_mcnemar_counts_only_discordant_pairs():
    # 6 episodes only B solved, 1 only A solved: p = 2 * P(Bin(7, .5) <= 1) = 2 * 8/128
    a = [True] * 3 + [False] * 6 + [True] + [False] * 2
    b = [True] * 3 + [True] * 6 + [False] + [False] * 2
    result = mcnemar_exact(a, b)
    assert result.p_value == pytest.approx(16 / 128)
    assert result.difference == pytest.approx(5 / 12) and not result.significant
    assert mcnemar_exact([True, False], [True, False]).p_value == 1.0
    strong = mcnemar_exact([False] * 10, [True] * 10)
    assert strong.p_value == pytest.approx(2 / 2**10) and strong.significant


def test_paired_bootstrap_is_reproducible_and_sensible():
    a = [0.0, 0.5, 0.5, 1.0, 0.0, 0.5] * 5
    b = [1.0, 1.0, 0.5, 1.0, 0.5, 1.0] * 5
    first, again = paired_bootstrap(a, b), paired_bootstrap(a, b)
    assert first == again
    assert first.difference == pytest.approx(sum(b) / 30 - sum(a) / 30)
    assert first.low < first.difference < first.high and first.low > 0 and first.significant
    null = paired_bootstrap(a, a)
    assert null.difference == 0 and null.p_value == 1.0 and not math.isnan(null.low)
