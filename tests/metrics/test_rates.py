"""Wilson intervals, Rate and MeanScore, checked against hand-computed and reference values."""

from __future__ import annotations

import json
import math

import pytest

from memobench.metrics.rates import MeanScore, Rate, wilson_interval

Z = 1.959963984540054


def _score_residual(k: int, n: int, p: float) -> float:
    """Zero exactly when p is a Wilson bound: (k/n - p)^2 = z^2 p (1 - p) / n.

    This is the definition of the interval (inverting the score test), not the
    closed form the implementation uses, so it checks the formula independently.
    """
    return (k / n - p) ** 2 - Z * Z * p * (1 - p) / n


def test_wilson_k_zero_has_exact_lower_bound_and_known_upper() -> None:
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0
    assert round(hi, 4) == 0.2775
    assert _score_residual(0, 10, hi) == pytest.approx(0.0, abs=1e-12)


def test_wilson_k_equals_n_has_exact_upper_bound() -> None:
    lo, hi = wilson_interval(10, 10)
    assert hi == 1.0
    assert round(lo, 4) == 0.7225  # 10 / (10 + z^2) = 10 / 13.8415
    assert _score_residual(10, 10, lo) == pytest.approx(0.0, abs=1e-12)


def test_wilson_half_is_symmetric_and_matches_reference() -> None:
    lo, hi = wilson_interval(5, 10)
    assert (round(lo, 4), round(hi, 4)) == (0.2366, 0.7634)
    assert lo + hi == pytest.approx(1.0)
    for bound in (lo, hi):
        assert _score_residual(5, 10, bound) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize(("k", "n"), [(1, 10), (3, 7), (99, 100), (1, 1), (0, 1), (17, 1000)])
def test_wilson_bounds_solve_the_score_equation(k: int, n: int) -> None:
    lo, hi = wilson_interval(k, n)
    assert 0.0 <= lo <= k / n <= hi <= 1.0
    for bound in (lo, hi):
        assert _score_residual(k, n, bound) == pytest.approx(0.0, abs=1e-12)


def test_wilson_one_of_ten_matches_statsmodels_reference() -> None:
    # statsmodels.stats.proportion.proportion_confint(1, 10, method="wilson")
    lo, hi = wilson_interval(1, 10)
    assert (round(lo, 4), round(hi, 4)) == (0.0179, 0.4042)


def test_wilson_empty_is_nan() -> None:
    lo, hi = wilson_interval(0, 0)
    assert math.isnan(lo) and math.isnan(hi)


@pytest.mark.parametrize(("k", "n"), [(-1, 5), (6, 5), (0, -1)])
def test_wilson_rejects_impossible_counts(k: int, n: int) -> None:
    with pytest.raises(ValueError, match="0 <= k <= n"):
        wilson_interval(k, n)


def test_rate_value_ci_and_dict() -> None:
    r = Rate(3, 4)
    assert r.defined
    assert r.value == 0.75
    assert r.ci95 == wilson_interval(3, 4)
    d = r.to_dict()
    assert d == {"value": 0.75, "k": 3, "n": 4, "ci95": list(wilson_interval(3, 4))}


def test_undefined_rate_renders_none_and_is_valid_json() -> None:
    r = Rate(0, 0)
    assert not r.defined
    assert math.isnan(r.value)
    d = r.to_dict()
    assert d == {"value": None, "k": 0, "n": 0, "ci95": [None, None]}
    json.dumps(d, allow_nan=False)  # raises if a NaN slipped through


def test_rates_pool_by_addition() -> None:
    assert Rate(1, 2) + Rate(3, 5) == Rate(4, 7)
    assert Rate(0, 0) + Rate(2, 3) == Rate(2, 3)


def test_rate_rejects_k_above_n() -> None:
    with pytest.raises(ValueError):
        Rate(5, 4)


# -- MeanScore: the mean over tasks of each task's mean score ---------------------------------


def test_mean_score_of_one_task_is_its_episode_mean_with_a_normal_interval() -> None:
    # scores 0.2, 0.4, 0.6: mean 0.4; sample variance (0.04 + 0 + 0.04) / 2 = 0.04;
    # standard error sqrt(0.04 / 3) = 0.11547; half width z * 0.11547 = 0.22632
    m = MeanScore.of_tasks({"t": [0.2, 0.4, 0.6]})
    assert m.value == pytest.approx(0.4) and (m.k, m.n, m.unit) == (pytest.approx(1.2), 3, "episodes")
    half = Z * math.sqrt(0.04 / 3)
    assert round(half, 5) == 0.22632
    assert m.ci95 == pytest.approx((0.4 - half, 0.4 + half))


def test_mean_score_of_tasks_weighs_every_task_the_same() -> None:
    # task a: 1 and 0 (mean 1/2, s^2 = 1/2, s^2/n = 1/4); task b: 1, 1, 1, 1 (mean 1, s^2 = 0)
    # mean (1/2 + 1) / 2 = 3/4 (pooled over episodes it would be 5/6);
    # standard error sqrt(1/4 + 0) / 2 = 1/4
    m = MeanScore.of_tasks({"a": [1.0, 0.0], "b": [1.0] * 4})
    assert m.value == 0.75 and (m.k, m.n, m.unit) == (1.5, 2, "tasks")
    assert m.ci95 == pytest.approx((0.75 - Z / 4, 1.0))  # 0.75 + 0.49 clipped to 1


def test_mean_score_interval_is_clipped_to_the_unit_interval() -> None:
    low, high = MeanScore.of_tasks({"t": [0.0, 0.0, 0.1]}).ci95
    assert low == 0.0 and 0.0 < high < 1.0


def test_mean_score_undefined_cases() -> None:
    empty = MeanScore.of_tasks({})
    assert (
        not empty.defined
        and math.isnan(empty.value)
        and empty.to_dict() == {"value": None, "k": 0.0, "n": 0, "unit": "tasks", "ci95": [None, None]}
    )
    one = MeanScore.of_tasks({"t": [0.5]})  # one episode: no spread to estimate
    assert one.defined and one.value == 0.5 and one.to_dict()["ci95"] == [None, None]
    json.dumps(empty.to_dict(), allow_nan=False)
    # a task with no score is skipped, not counted as 0
    assert MeanScore.of_tasks({"a": [1.0, 1.0], "b": []}).value == 1.0
