"""Unit-level bootstrap: intervals derived by hand on constructed data.

With two units A and B the resample space is four equally likely ordered draws (A,A), (A,B),
(B,A), (B,B), so a statistic's replicate takes T(A,A) with probability 1/4, T(A,B) = T(B,A)
with 1/2 and T(B,B) with 1/4; the 2.5% and 97.5% quantiles of many replicates are then exactly
T(A,A) and T(B,B) (each holds a quarter of the mass, far more than 2.5%).
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cotaudit.bootstrap as bootstrap
from cotaudit.bootstrap import (
    UnitSampler,
    bootstrap_ci,
    distinct_rows,
    multinomial_counts,
    paired_difference,
    percentile_bounds,
    percentile_interval,
    resample_indices,
    resampled_means,
)


def _mean_of(values: np.ndarray):
    return lambda rows: float(values[rows].mean())


def test_two_units_interval_by_hand_and_wider_than_row_level() -> None:
    # unit A: ten rows of 0, unit B: ten rows of 1; rows within a unit are perfectly correlated
    values = np.array([0.0] * 10 + [1.0] * 10)
    units = ["A"] * 10 + ["B"] * 10
    unit_ci = bootstrap_ci(_mean_of(values), units, n_boot=2000, seed=1)
    assert unit_ci.estimate == 0.5 and unit_ci.n_units == 2
    assert (unit_ci.low, unit_ci.high) == (0.0, 1.0)  # T(A,A) and T(B,B)
    # the row-level bootstrap treats the 20 rows as independent: sd 0.5/sqrt(20) = 0.11, so its
    # interval is about 0.5 +- 0.22, far narrower than the honest [0, 1]
    row_ci = bootstrap_ci(_mean_of(values), list(range(20)), n_boot=2000, seed=1)
    assert row_ci.n_units == 20
    assert 0.2 < row_ci.low < 0.4 and 0.6 < row_ci.high < 0.8


def test_two_units_replicate_distribution_is_the_enumerated_one() -> None:
    values = np.array([0.0, 0.0, 1.0])  # A = {0, 0}, B = {1}: T(A,B) = 1/3 (rows, not units)
    sampler = UnitSampler(["A", "A", "B"])
    boot = sampler.replicates(_mean_of(values), 4000, seed=3)
    freq = Counter(np.round(boot, 12).tolist())
    assert set(freq) == {0.0, round(1 / 3, 12), 1.0}
    assert freq[0.0] / 4000 == pytest.approx(0.25, abs=0.03)
    assert freq[round(1 / 3, 12)] / 4000 == pytest.approx(0.5, abs=0.03)
    assert freq[1.0] / 4000 == pytest.approx(0.25, abs=0.03)


def test_rows_of_a_unit_drawn_twice_come_twice() -> None:
    sampler = UnitSampler(["u", "v", "u", "w"])
    assert sampler.labels == ("u", "v", "w") and sampler.n_rows == 4
    assert sampler.rows([0, 0, 2]).tolist() == [0, 2, 0, 2, 3]


def test_stratified_draws_keep_units_per_stratum() -> None:
    # units 0..4 in stratum "a", units 5, 6 in stratum "b" (strata visited in sorted order)
    units = [0, 1, 2, 3, 4, 5, 6, 6]
    strata = ["a"] * 5 + ["b"] * 3
    sampler = UnitSampler(units, strata)
    rng = np.random.default_rng(0)
    for _ in range(50):
        draw = sampler.draw(rng)
        assert draw.size == 7
        assert set(draw[:5].tolist()) <= {0, 1, 2, 3, 4} and set(draw[5:].tolist()) <= {5, 6}


def test_unit_spanning_two_strata_is_refused() -> None:
    with pytest.raises(ValueError, match="unit 'p1' spans strata"):
        UnitSampler(["p1", "p1"], ["x", "y"])
    with pytest.raises(ValueError, match="at least one row"):
        UnitSampler([])


def test_percentile_interval_ignores_nan_by_hand() -> None:
    # quantiles 0.25 and 0.75 of 1..5 with linear interpolation: 2 and 4
    assert percentile_interval([math.nan, 1, 2, 3, 4, 5], confidence=0.5) == (2.0, 4.0, 5)
    low, high, n = percentile_interval([math.nan, math.nan])
    assert math.isnan(low) and math.isnan(high) and n == 0
    with pytest.raises(ValueError, match="confidence"):
        percentile_interval([1.0], confidence=1.0)


def test_paired_difference_cancels_what_units_share() -> None:
    # run b = run a + 0.1 on every problem; problems differ a lot from one another
    a_values = np.array([0.0, 0.2, 5.0, 5.2, 9.0])
    units_a = ["p1", "p1", "p2", "p2", "p3"]
    b_values = np.array([9.1, 0.1, 0.3, 5.1, 5.3, 7.0])  # other row order, an extra problem p9
    units_b = ["p3", "p1", "p1", "p2", "p2", "p9"]
    diff = paired_difference(
        _mean_of(a_values), units_a, _mean_of(b_values), units_b, n_boot=500, seed=2
    )
    assert diff.n_units == 3  # p9 is not shared
    # on the shared rows mean(a) - mean(b) = -0.1, and every paired resample gives -0.1 too
    assert diff.estimate == pytest.approx(-0.1)
    assert diff.low == pytest.approx(-0.1) and diff.high == pytest.approx(-0.1)
    # each run alone: its interval spans the spread between problems
    a = bootstrap_ci(_mean_of(a_values), units_a, n_boot=500, seed=2)
    b = bootstrap_ci(_mean_of(b_values), units_b, n_boot=500, seed=2)
    assert a.high - a.low > 3 and b.n_units == 4


def test_paired_with_no_shared_unit_is_nan() -> None:
    a, b = _mean_of(np.array([1.0])), _mean_of(np.array([2.0]))
    diff = paired_difference(a, ["x"], b, ["y"], n_boot=10)
    assert math.isnan(diff.estimate) and diff.n_units == 0
    assert bootstrap_ci(a, ["x"], n_boot=10).estimate == 1.0
    assert bootstrap_ci(b, ["y"], n_boot=10).estimate == 2.0


def test_distinct_rows_collapses_only_within_a_unit() -> None:
    X = np.array([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0], [1.0, 2.0], [1.0, 2.5]])
    labels = np.array(["h", "h", "c", "h", "h"])
    units = ["s1", "s1", "s1", "s2", "s1"]
    # row 1 repeats row 0 (same unit, label, features); row 2 has another label; row 3 is
    # another unit; row 4 other features
    assert distinct_rows(units, X, labels).tolist() == [True, False, True, True, True]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=12), st.integers(0, 10_000))
def test_interval_holds_the_estimate_of_a_mean_within_unit_extremes(
    unit_of: list[int], seed: int
) -> None:
    values = np.array([float(u * u) for u in unit_of])  # rows of a unit agree
    ci = bootstrap_ci(_mean_of(values), unit_of, n_boot=200, seed=seed)
    assert ci.n_units == len(set(unit_of)) and ci.n_valid == 200
    assert values.min() <= ci.low <= ci.high <= values.max()


# --- vectorised forms ----------------------------------------------------------------------------


def test_resample_indices_are_the_unit_sampler_draws(monkeypatch) -> None:
    """Row b of the vectorised draws is UnitSampler.draw's b-th draw (one stratum), whatever the
    chunk size."""
    sampler = UnitSampler([f"u{i}" for i in range(7)])
    rng = np.random.default_rng(3)
    expected = np.stack([sampler.draw(rng) for _ in range(50)])
    for cells in (bootstrap.RESAMPLE_CHUNK_CELLS, 7 * 4, 1):
        monkeypatch.setattr(bootstrap, "RESAMPLE_CHUNK_CELLS", cells)
        got = np.concatenate(list(resample_indices(7, 50, np.random.default_rng(3))))
        assert got.shape == (50, 7) and np.array_equal(got, expected)


def test_resampled_means_by_hand() -> None:
    # unit 0: one row of 2; unit 1: four rows summing to 10
    sums, sizes = np.array([2.0, 10.0]), np.array([1, 4])
    counts = np.array([[2, 0], [1, 1], [0, 2]])
    assert resampled_means(sums, sizes, counts).tolist() == [2.0, 12 / 5, 20 / 8]
    two_columns = resampled_means(np.stack([sums, -sums], axis=1), sizes, counts)
    assert two_columns.tolist() == [[2.0, -2.0], [12 / 5, -12 / 5], [20 / 8, -20 / 8]]


def test_multinomial_counts_draw_k_units_per_resample() -> None:
    counts = multinomial_counts(5, 4000, np.random.default_rng(0))
    assert counts.shape == (4000, 5) and (counts.sum(axis=1) == 5).all()
    # each unit is drawn once per resample on average (binomial(5, 1/5) mean 1, sd 0.9/sqrt(4000))
    assert np.allclose(counts.mean(axis=0), 1.0, atol=0.06)


def test_percentile_bounds_by_hand_per_column_and_nan_kept() -> None:
    reps = np.array([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0], [4.0, 40.0], [5.0, 50.0]])
    low, high = percentile_bounds(reps, confidence=0.5)  # quantiles 0.25 and 0.75
    assert low.tolist() == [2.0, 20.0] and high.tolist() == [4.0, 40.0]
    low, high = percentile_bounds([1.0, math.nan, 3.0])
    assert math.isnan(low) and math.isnan(high)
    assert percentile_interval([1.0, 2.0, 3.0, 4.0, 5.0], 0.5) == (2.0, 4.0, 5)
