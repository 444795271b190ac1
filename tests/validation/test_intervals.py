"""AUROC intervals over problems, the paired difference of two AUROCs and g-mean^2, on
hand-built samples with the numbers derived by hand from the formulas of
:mod:`cotaudit.validation.intervals`."""

from __future__ import annotations

import itertools
import math
from statistics import NormalDist

import numpy as np
import pytest

from cotaudit.stats import auroc
from cotaudit.validation.intervals import (
    auroc_interval,
    clustered_covariance,
    clustered_variance,
    g_mean_squared,
    paired_auroc_difference,
    psi_matrix,
    score_bounds,
)

Z = NormalDist().inv_cdf(0.975)


def newcombe(t: float, k: float) -> float:
    """V_N(t; k, k) written out: t (1 - t) [1 + (k - 1)((1 - t)/(2 - t) + t/(1 + t))] / k^2."""
    return t * (1 - t) * (1 + (k - 1) * ((1 - t) / (2 - t) + t / (1 + t))) / (k * k)


def test_perfect_separation_keeps_a_positive_width_and_contains_one():
    """Three problems, each a positive at 1 and a negative at 0: A = 1, every placement is 1,
    so Var_c = 0 and the interval is Newcombe's over the 3 units: the low bound solves
    (1 - t)^2 = z^2 V_N(t; 3, 3). At t = 1/2, V_N = (1/4)(1 + 2 (1/3 + 1/3))/9 = 7/108 and
    z^2 7/108 = 0.2490 < 1/4, so 1/2 is just outside: the bound lies a little above 1/2."""
    i = auroc_interval([1, 1, 1, 0, 0, 0], [1, 1, 1, 0, 0, 0], ["a", "b", "c"] * 2)
    assert (i.estimate, i.high) == (1.0, 1.0)
    assert 0.5 < i.low < 0.51
    assert (1 - i.low) ** 2 == pytest.approx(Z * Z * newcombe(i.low, 3), abs=1e-9)
    # p: z0 = (1 - 1/2) / sqrt(7/108) = 1.964, p = 1 - Phi(1.964)
    assert i.p_value == pytest.approx(1 - NormalDist().cdf(0.5 / math.sqrt(7 / 108)))
    assert i.p_value == pytest.approx(0.02477, abs=1e-5)
    assert (i.n_positive, i.n_negative, i.positive_units, i.negative_units) == (3, 3, 3, 3)


def test_a_class_on_one_problem_gives_no_interval():
    """One own-answer sample (one problem) against three uncued: the estimate, no interval."""
    i = auroc_interval([0.9, 0.1, 0.2, 0.3], [1, 0, 0, 0], ["p1", "p1", "p2", "p3"])
    assert i.estimate == 1.0
    assert math.isnan(i.low) and math.isnan(i.high) and math.isnan(i.p_value)
    # two positives of the same problem still rest on one unit
    j = auroc_interval([0.9, 0.8, 0.2, 0.3], [1, 1, 0, 0], ["p1", "p1", "p2", "p3"])
    assert j.positive_units == 1 and math.isnan(j.low)
    empty = auroc_interval([0.2, 0.3], [0, 0], ["p2", "p3"])
    assert math.isnan(empty.estimate) and empty.n_positive == 0


def test_the_clustered_variance_and_p_value_by_hand():
    """Positives 0.9, 0.4 and negatives 0.5, 0.1: psi = [[1, 1], [0, 1]], A = 3/4,
    placements V10 = (1, 1/2), V01 = (1/2, 1), residuals (1/4, -1/4) and (-1/4, 1/4).

    Four problems (one sample each): S10 = S01 = 2 (1/16 + 1/16) = 1/4, S11 = 0, so
    Var_c = 1/4 / 4 + 1/4 / 4 = 1/8; V_N(3/4; 2, 2) = (3/16)(1 + 1/5 + 3/7)/4, so
    D = Var_c / V_N(3/4) = 1.637 > 1 widens the floor. p = 1 - Phi((1/4) / sqrt(D V_N(1/2))),
    V_N(1/2; 2, 2) = (1/4)(1 + 2/3)/4.

    Two problems (p1 holds 0.9 and 0.5, p2 holds 0.4 and 0.1): S11 = 2 (-1/16 - 1/16) = -1/4
    cancels the rest, Var_c = 0; the floor V_N(t; 2, 2) alone gives the interval."""
    values, positive = [0.9, 0.4, 0.5, 0.1], [1, 1, 0, 0]
    psi = psi_matrix([0.9, 0.4], [0.5, 0.1])
    assert psi.tolist() == [[1, 1], [0, 1]]
    a, var_c = clustered_variance(psi, np.array([0, 1]), np.array([2, 3]))
    assert (a, var_c) == (0.75, pytest.approx(1 / 8))
    d = (1 / 8) / ((3 / 16) * (1 + 1 / 5 + 3 / 7) / 4)
    assert d == pytest.approx(1.6374, abs=1e-4)
    independent = auroc_interval(values, positive, ["p1", "p2", "p3", "p4"])
    sd0 = math.sqrt(d * (1 / 4) * (1 + 2 / 3) / 4)
    assert independent.p_value == pytest.approx(1 - NormalDist().cdf(0.25 / sd0))
    for t in (independent.low, independent.high):
        assert (0.75 - t) ** 2 == pytest.approx(Z * Z * d * newcombe(t, 2), abs=1e-9)

    _, paired_var = clustered_variance(psi, np.array([0, 1]), np.array([0, 1]))
    assert paired_var == pytest.approx(0.0)
    paired = auroc_interval(values, positive, ["p1", "p2", "p1", "p2"])
    for t in (paired.low, paired.high):
        assert (0.75 - t) ** 2 == pytest.approx(Z * Z * newcombe(t, 2), abs=1e-9)
    assert 0 < paired.low < 0.75 < paired.high < 1


def test_all_tied_values_never_give_a_zero_width_interval():
    """Every value equal: A = 1/2 and every placement is 1/2 (Var_c = 0); the interval is
    Newcombe's over the units, symmetric about 1/2 and of positive width."""
    i = auroc_interval([0.3] * 6, [1, 1, 1, 0, 0, 0], ["a", "b", "c", "d", "e", "f"])
    assert i.estimate == 0.5
    assert i.high - i.low > 0.3
    assert i.low == pytest.approx(1 - i.high)
    assert i.p_value == pytest.approx(0.5)


def test_the_accepted_set_is_one_interval():
    """The bisection assumes {t : (A - t)^2 <= z^2 V(t)} is connected: check it on a fine grid
    for small and large classes, estimates near and at the bounds, narrow and wide variances."""
    t = np.linspace(0, 1, 4001)
    for a, scale, m, n in itertools.product(
        (0.0, 0.3, 0.5, 0.9, 0.99, 1.0), (0.2, 1.0, 4.0), (2, 10, 100), (2, 30)
    ):
        inside = (a - t) ** 2 <= Z * Z * scale * newcombe_vec(t, m, n)
        edges = np.flatnonzero(np.diff(inside.astype(int)))
        assert edges.size <= 2, (a, scale, m, n)
        low, high = score_bounds(a, scale, m, n, Z)
        assert inside[(t > low + 1e-3) & (t < high - 1e-3)].all()


def newcombe_vec(t, m, n):
    k = (m + n) / 2
    return t * (1 - t) * (1 + (k - 1) * ((1 - t) / (2 - t) + t / (1 + t))) / (m * n)


def test_the_p_value_is_not_anti_conservative_under_the_null():
    """Four positives and four negatives with distinct values, one problem each: under the
    null every one of the C(8, 4) = 70 labellings is equally likely, so P(p <= alpha) is
    exactly the share of labellings whose p-value is at most alpha: at most one labelling
    (1/70, the null distribution's step) above alpha. (A = 15/16, two labellings with the one
    above, gets p = 0.022 where the permutation p is 2/70 = 0.029.)"""
    values = np.arange(8, dtype=float)
    units = [f"p{i}" for i in range(8)]
    ps = []
    for chosen in itertools.combinations(range(8), 4):
        positive = np.isin(np.arange(8), chosen)
        ps.append(auroc_interval(values, positive, units).p_value)
    p = np.array(ps)
    for alpha in (0.025, 0.05, 0.1, 0.2, 0.3):
        assert alpha - 3 / 70 <= np.mean(p <= alpha) <= alpha + 1 / 70
    assert np.mean(p < 0.5) == 31 / 70  # A > 1/2: 31 labellings, A = 1/2: 8, A < 1/2: 31


def solve(f, lo, hi):
    """The root of f on [lo, hi] (f(lo) and f(hi) of opposite signs), by plain bisection."""
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if (f(mid) > 0) == (f(lo) > 0) else (lo, mid)
    return (lo + hi) / 2


def test_identical_statistics_give_zero_inside_an_interval_of_positive_width():
    """Both statistics 0.9, 0.4 | 0.5, 0.1 on four problems: A_a = A_b = 3/4, the same single
    intervals [l, u] (D = 1.637 > 1, so V(A) = Var_c) and Cov_c = Var_c: r = 1 capped at
    1 - 1/K = 1/2 (K = 2 problems per class). MOVER with x = A - l, y = u - A:
    low = -sqrt(x^2 + y^2 - 2 r x y), high = +sqrt(y^2 + x^2 - 2 r y x): symmetric about 0."""
    values, positive, units = [0.9, 0.4, 0.5, 0.1], [1, 1, 0, 0], ["p1", "p2", "p3", "p4"]
    single = auroc_interval(values, positive, units)
    d = paired_auroc_difference(values, values, positive, units)
    x, y = 0.75 - single.low, single.high - 0.75
    half = math.sqrt(x * x + y * y - x * y)
    assert (d.estimate, d.auroc_a, d.auroc_b, d.correlation) == (0.0, 0.75, 0.75, 0.5)
    assert (d.low, d.high) == (pytest.approx(-half), pytest.approx(half))
    assert d.high - d.low > 0.3
    assert d.p_value == 0.5
    assert (d.n_positive, d.n_negative, d.n_units, d.method) == (
        2,
        2,
        4,
        "mover-newcombe-obuchowski+delong-wald",
    )


def test_uncorrelated_aurocs_square_and_add():
    """Statistic a 0.9, 0.4 | 0.5, 0.1 and b 0.9, 0.4 | 0.1, 0.5, four problems: psi_a =
    [[1, 1], [0, 1]], psi_b = [[1, 1], [1, 0]], both A = 3/4 with residuals a10 = b10 =
    (1/4, -1/4), a01 = (-1/4, 1/4), b01 = (1/4, -1/4). Cov_c = 2 (1/16 + 1/16)/4 +
    2 (-1/16 - 1/16)/4 + 0 = 0 and Var_c = 1/8 for each: r = 0, and MOVER's bounds are
    -+sqrt(x^2 + y^2), x, y the single interval's arms. The Wald arm z sqrt(1/8 + 1/8) = z/2
    = 0.980 is longer, so the interval is 0 -+ z/2."""
    positive, units = [1, 1, 0, 0], ["p1", "p2", "p3", "p4"]
    a, b = [0.9, 0.4, 0.5, 0.1], [0.9, 0.4, 0.1, 0.5]
    var_a, var_b, cov = clustered_covariance(
        psi_matrix([0.9, 0.4], [0.5, 0.1]),
        psi_matrix([0.9, 0.4], [0.1, 0.5]),
        np.array([0, 1]),
        np.array([2, 3]),
    )
    assert (var_a, var_b, cov) == (pytest.approx(1 / 8), pytest.approx(1 / 8), pytest.approx(0))
    single = auroc_interval(a, positive, units)
    assert auroc_interval(b, positive, units) == single
    d = paired_auroc_difference(a, b, positive, units)
    mover = math.hypot(0.75 - single.low, single.high - 0.75)
    assert mover < Z / 2
    assert d.correlation == pytest.approx(0.0, abs=1e-12)
    assert (d.estimate, d.low, d.high) == (0.0, pytest.approx(-Z / 2), pytest.approx(Z / 2))


def test_a_perfect_statistic_against_a_constant_one_by_hand():
    """Five problems, each a positive and a negative. a separates them (A_a = 1, every
    placement 1), b is constant (A_b = 1/2, every placement 1/2): both Var_c = 0, so r = 0,
    the Wald arm is 0 and each single interval is Newcombe's over the 5 units: a's [t_a, 1] with
    (1 - t_a)^2 = z^2 V_N(t_a; 5, 5), b's 1/2 +- h with h^2 = z^2 V_N(1/2 - h; 5, 5).
    Difference 1/2, low = 1/2 - sqrt((1 - t_a)^2 + h^2), high = 1/2 + h. The p-value for
    "a > b" is 1 - Phi(z*), z* the critical value at which that low bound reaches 0 (with 4
    problems the 95% interval still holds 0: low -0.025)."""
    positive = [True, False] * 5
    units = [f"p{i // 2}" for i in range(10)]
    d = paired_auroc_difference([1, 0] * 5, [5] * 10, positive, units)

    def arms(z):
        t_a = solve(lambda t: (1 - t) ** 2 - z * z * newcombe(t, 5), 0.0, 1.0 - 1e-12)
        h = solve(lambda h: h * h - z * z * newcombe(0.5 - h, 5), 0.0, 0.5)
        return 1 - t_a, h

    down_a, h = arms(Z)
    assert (d.estimate, d.correlation) == (0.5, 0.0)
    assert d.low == pytest.approx(0.5 - math.hypot(down_a, h), abs=1e-9)
    assert d.high == pytest.approx(0.5 + h, abs=1e-9)
    assert 0 < d.low < 0.5 < d.high < 1
    assert d.p_value < 0.025  # the 95% interval excludes 0
    z_star = NormalDist().inv_cdf(1 - d.p_value)
    assert 0.5 == pytest.approx(math.hypot(*arms(z_star)), abs=1e-6)
    assert d.low == pytest.approx(0.03705, abs=1e-5)
    four = paired_auroc_difference([1, 0] * 4, [5] * 8, positive[:8], units[:8])
    assert four.low < 0 < four.estimate and four.p_value > 0.025
    swapped = paired_auroc_difference([5] * 10, [1, 0] * 5, positive, units)
    assert (swapped.low, swapped.high) == (pytest.approx(-d.high), pytest.approx(-d.low))
    assert swapped.p_value == pytest.approx(1 - d.p_value)


def test_the_p_value_matches_the_interval_on_random_samples():
    """p < (1 - c)/2 exactly when the low bound is above 0, at two confidences."""
    rng = np.random.default_rng(3)
    units = [f"p{i}" for i in range(10)] * 2
    positive = np.r_[np.ones(10, bool), np.zeros(10, bool)]
    for shift in (0.0, 0.5, 1.0, 1.5, 2.5):
        va = rng.normal(size=20) + shift * positive
        vb = 0.6 * va + rng.normal(size=20)
        for c in (0.9, 0.95):
            d = paired_auroc_difference(va, vb, positive, units, confidence=c)
            assert d.low < d.estimate < d.high
            assert (d.p_value < (1 - c) / 2) == (d.low > 0)
            assert (d.p_value > (1 + c) / 2) == (d.high < 0)


def test_the_difference_drops_nan_rows_and_needs_two_problems_per_class():
    """Rows where either statistic is NaN are left out of both; one problem: no interval."""
    rng = np.random.default_rng(5)
    units = [f"p{i}" for i in range(12)] * 2
    positive = np.r_[np.ones(12, bool), np.zeros(12, bool)]
    va = rng.normal(size=24) + positive
    vb = rng.normal(size=24) + 0.3 * positive
    vb[[0, 12]] = np.nan  # problem p0's two samples
    dropped = paired_auroc_difference(va, vb, positive, units)
    assert (dropped.n_positive, dropped.n_negative, dropped.n_units) == (11, 11, 11)
    assert dropped.auroc_a == pytest.approx(auroc(va[1:12].tolist(), va[13:].tolist()))
    assert dropped.low < dropped.estimate < dropped.high
    one = paired_auroc_difference([1, 0], [0, 1], [True, False], ["p1", "p1"])
    assert one.estimate == 1.0  # A_a = 1, A_b = 0
    assert math.isnan(one.low) and math.isnan(one.high) and math.isnan(one.p_value)


def test_g_mean_squared_by_hand():
    """Selection positives 0.9, 0.6, 0.4 and negatives 0.5, 0.2, 0.1. Candidates (midpoints
    and the two ends) and TPR x TNR of "x >= h": 0.0: 1 x 0; 0.15: 1 x 1/3; 0.3: 1 x 2/3;
    0.45: 2/3 x 2/3; 0.55: 2/3 x 1; 0.75: 1/3 x 1; 1.9: 0 x 1. The best, 2/3, is reached at
    0.3 and 0.55: the lower, 0.3, is kept. Evaluation positives 0.35, 0.8, 0.25 (two called
    positive: TPR 2/3) and negatives 0.31, 0.1 (0.1 below 0.3: TNR 1/2): g-mean^2 = 1/3."""
    g = g_mean_squared(
        [0.9, 0.6, 0.4, 0.5, 0.2, 0.1],
        [1, 1, 1, 0, 0, 0],
        [0.35, 0.8, 0.25, 0.31, 0.1, math.nan],
        [1, 1, 1, 0, 0, 0],
    )
    assert g.threshold == pytest.approx(0.3)
    assert g.selection_g_mean2 == pytest.approx(2 / 3)
    assert (g.tpr, g.tnr, g.g_mean2) == (pytest.approx(2 / 3), 0.5, pytest.approx(1 / 3))
    assert (g.n_positive, g.n_negative) == (3, 2)
    none = g_mean_squared([0.1, 0.2], [1, 1], [0.1, 0.2], [1, 0])
    assert math.isnan(none.g_mean2)
