"""Coverage of 95% AUROC intervals by simulation, methods side by side on the same data sets.

Grid: true AUROC in {0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0} x designs x class sizes:

- ``continuous``: independent samples, negatives N(0, 1), positives N(d, 1),
  AUROC = Phi(d / sqrt 2); 1.0: positives shifted by 100 (perfect separation).
- ``tied``: independent samples on 5 levels (a tau_first read off a curve of 4 cuts);
  negatives P = (0.40, 0.30, 0.15, 0.10, 0.05), positives the exponential tilt p_l ~ q_l e^(b l)
  whose AUROC (ties counting 1/2) is the target; 1.0: negatives on levels 0-2, positives on 3-4.
- ``pairs+``: K problems, each one positive and one negative sharing a problem effect
  u_k ~ N(0, 1/2): x = u + d + e, y = u + e', e ~ N(0, 1/2) (within-pair correlation +0.5).
- ``pairs-``: the same with the negative's effect reversed, y = -u + e' (correlation -0.5: the
  problem inflates the spread instead of cancelling).

The truth of the clustered designs is the marginal AUROC P(x > y) of a positive and a negative
of different problems, Phi(d / sqrt 2). Sizes: (10, 10), (20, 20), (50, 50), (100, 100),
(10, 50), (50, 10) positives/negatives for the independent designs; K = 10, 20, 50, 100 pairs.

Methods (each data set gets all of them):

- ``percentile``: the problem bootstrap's percentile interval, the resampling of
  :func:`cotaudit.bootstrap.bootstrap_ci` (checked equal to it on one data set per cell).
- ``chosen``: :func:`cotaudit.validation.intervals.auroc_interval` (Newcombe's score-type
  inversion over units, widened by the clustered design effect where it exceeds it; checked
  equal to the library on three data sets per cell).
- ``newcombe-units``: Newcombe (2006) method 5 over the units, no design effect.
- ``design-effect``: Newcombe's variance scaled by the clustered design effect alone (no floor;
  Newcombe over units where the design effect is 0 or undefined).
- ``logit-wald``: logit(A) +- z sqrt(Var_c) / (A (1 - A)) with Obuchowski's clustered variance
  (zero width at A in {0, 1}).

Then the interval of a difference ``A_a - A_b`` of two statistics read on the same samples,
their noise correlated ``rho`` in {0.5, 0.9} (pairs designs: the problem effect shared by both
statistics), on the same designs and sizes, with (AUROC a, AUROC b) in (0.5, 0.5), (0.7, 0.7),
(0.8, 0.6), (0.9, 0.7), (0.95, 0.8), (0.9, 0.9), (1.0, 0.9), (1.0, 1.0) (tied: 5 levels cut
from a shifted normal at the negatives' quantiles; 1.0 as above). Methods:

- ``percentile``: the paired problem bootstrap (``A*_a - A*_b`` on the same draws).
- ``delong-wald``: ``d +- z sqrt(Var_c(A_a) + Var_c(A_b) - 2 Cov_c)``.
- ``mover-c``: MOVER from the two ``chosen`` intervals, ``r = Cov_c / sqrt(Var_c Var_c)``.
- ``mover-f``: MOVER, ``r`` over the floored variances the single intervals use.
- ``mover``: ``mover-f`` with ``r`` capped at ``1 - 1/K_min``.
- ``chosen``: :func:`cotaudit.validation.intervals.paired_auroc_difference`, ``mover``
  widened by ``delong-wald`` (checked equal to the library on three data sets per cell, and its
  p-value below 0.025 exactly when its low bound is above 0).

Run: ``nice -n 5 python bench/auroc_coverage.py`` (``--reps``, ``--boot-reps``, ``--n-boot``,
``--diff-reps``, ``--diff-boot-reps``; ``--only grid`` or ``--only difference``).
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import brentq
from scipy.stats import norm

from cotaudit.bootstrap import bootstrap_ci, percentile_interval
from cotaudit.stats import TIE_TOLERANCE
from cotaudit.validation.detection import ClassRows
from cotaudit.validation.intervals import (
    MIN_UNITS,
    auroc_interval,
    difference_correlation,
    mover_bounds,
    newcombe_variance,
    paired_auroc_difference,
    resampled_aurocs,
    score_bounds,
)

THETAS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0)
SIZES = ((10, 10), (20, 20), (50, 50), (100, 100), (10, 50), (50, 10))
PAIRS = (10, 20, 50, 100)
DESIGNS = ("continuous", "tied", "pairs+", "pairs-")
METHODS = ("percentile", "chosen", "newcombe-units", "design-effect", "logit-wald")
Z = float(norm.ppf(0.975))
NEG_LEVELS = np.array([0.40, 0.30, 0.15, 0.10, 0.05])


def tied_auroc(p: NDArray[np.float64], q: NDArray[np.float64]) -> float:
    """P(X > Y) + P(X = Y)/2 for X ~ p, Y ~ q on the same levels."""
    below = np.concatenate([[0.0], np.cumsum(q)[:-1]])
    return float(p @ (below + q / 2))


def tilt(theta: float) -> NDArray[np.float64]:
    """The positives' level probabilities with AUROC ``theta`` against NEG_LEVELS."""
    levels = np.arange(NEG_LEVELS.size)

    def p_of(b: float) -> NDArray[np.float64]:
        w = NEG_LEVELS * np.exp(b * levels)
        return np.asarray(w / w.sum(), dtype=float)

    b = brentq(lambda b: tied_auroc(p_of(b), NEG_LEVELS) - theta, -1e-9, 60.0) if theta > 0.5 else 0
    return p_of(b)


def draw(
    design: str, theta: float, m: int, n: int, reps: int, rng: np.random.Generator
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(x, y)``: ``reps`` data sets of ``m`` positives and ``n`` negatives (rows)."""
    d = math.sqrt(2) * norm.ppf(theta) if theta < 1 else 0.0
    shift = 100.0 if theta == 1 else 0.0
    if design == "continuous":
        return rng.normal(d, 1, (reps, m)) + shift, rng.normal(0, 1, (reps, n))
    if design == "tied":
        if theta == 1:
            return rng.choice([3.0, 4.0], (reps, m)), rng.choice([0.0, 1.0, 2.0], (reps, n))
        levels = np.arange(5, dtype=float)
        return rng.choice(levels, (reps, m), p=tilt(theta)), rng.choice(
            levels, (reps, n), p=NEG_LEVELS
        )
    u = rng.normal(0, math.sqrt(0.5), (reps, m))
    sign = 1.0 if design == "pairs+" else -1.0
    x = u + d + shift + rng.normal(0, math.sqrt(0.5), (reps, m))
    return x, sign * u + rng.normal(0, math.sqrt(0.5), (reps, n))


def units_of(design: str, m: int, n: int) -> tuple[NDArray[np.intp], NDArray[np.intp], int]:
    """Each positive's and negative's unit index (first-appearance order over positives then
    negatives, as the interval functions number them) and the number of units."""
    if design.startswith("pairs"):
        return np.arange(m), np.arange(n), m
    return np.arange(m), m + np.arange(n), m + n


def analytic(
    x: NDArray[np.float64], y: NDArray[np.float64], pu: NDArray[np.intp], nu: NDArray[np.intp]
) -> dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]]:
    """The analytic methods' bounds for every data set at once (the formulas of
    :mod:`cotaudit.validation.intervals`, batched)."""
    diff = x[:, :, None] - y[:, None, :]
    psi = np.where(diff > TIE_TOLERANCE, 1.0, np.where(np.abs(diff) <= TIE_TOLERANCE, 0.5, 0.0))
    m, n = psi.shape[1:]
    k = int(max(pu.max(), nu.max()) + 1)
    a = psi.mean((1, 2))
    r10 = (psi.mean(2) - a[:, None]) @ np.eye(k)[pu]
    r01 = (psi.mean(1) - a[:, None]) @ np.eye(k)[nu]
    k10, k01, kk = np.unique(pu).size, np.unique(nu).size, np.unique(np.r_[pu, nu]).size
    var_c = np.maximum(
        0.0,
        k10 / (k10 - 1) * (r10**2).sum(1) / m**2
        + k01 / (k01 - 1) * (r01**2).sum(1) / n**2
        + 2 * kk / (kk - 1) * (r10 * r01).sum(1) / (m * n),
    )
    v_n = newcombe_variance(a, m, n)
    usable = (v_n > 0) & (var_c > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.where(usable, var_c / v_n, 1.0)
        logit = np.log(a / (1 - a))
        half = Z * np.sqrt(var_c) / (a * (1 - a))
    effect = np.where(v_n > 0, var_c / np.where(v_n > 0, v_n, 1.0), 0.0)
    out = {
        "chosen": score_bounds(a, effect, m, n, Z, floor=(k10, k01)),
        "newcombe-units": score_bounds(a, np.ones_like(a), k10, k01, Z),
        "design-effect": score_bounds(
            a, scale, np.where(usable, m, k10), np.where(usable, n, k01), Z
        ),
    }
    inner = (a > 0) & (a < 1)
    out["logit-wald"] = (
        np.where(inner, 1 / (1 + np.exp(-(logit - half))), a),
        np.where(inner, 1 / (1 + np.exp(-(logit + half))), a),
    )
    sd0 = np.sqrt(
        np.maximum(effect * newcombe_variance(0.5, m, n), newcombe_variance(0.5, k10, k01))
    )
    out["p"] = (norm.sf((a - 0.5) / sd0), a)
    return out


def percentile_bounds(
    x: NDArray[np.float64],
    y: NDArray[np.float64],
    pu: NDArray[np.intp],
    nu: NDArray[np.intp],
    n_boot: int,
    rng: np.random.Generator,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    k = int(max(pu.max(), nu.max()) + 1)
    lows, highs = [], []
    for xr, yr in zip(x, y, strict=True):
        diff = xr[:, None] - yr[None, :]
        psi = np.where(diff > TIE_TOLERANCE, 1.0, np.where(np.abs(diff) <= TIE_TOLERANCE, 0.5, 0.0))
        low, high, _ = percentile_interval(resampled_aurocs(psi, pu, nu, k, n_boot, rng))
        lows.append(low)
        highs.append(high)
    return np.array(lows), np.array(highs)


def check_against_library(
    x: NDArray[np.float64], y: NDArray[np.float64], pu: NDArray[np.intp], nu: NDArray[np.intp]
) -> None:
    """The batched formulas give :func:`auroc_interval`'s bounds, and the batched bootstrap
    gives :func:`bootstrap_ci`'s percentile interval on the same seed, on a few data sets."""
    batched = analytic(x[:3], y[:3], pu, nu)
    for r in range(3):
        values = np.r_[x[r], y[r]]
        positive = np.r_[np.ones(x.shape[1], bool), np.zeros(y.shape[1], bool)]
        units = [f"u{u}" for u in np.r_[pu, nu]]
        got = auroc_interval(values, positive, units)
        low, high = batched["chosen"][0][r], batched["chosen"][1][r]
        assert abs(got.low - low) < 1e-9 and abs(got.high - high) < 1e-9, (got, low, high)
        assert abs(got.p_value - batched["p"][0][r]) < 1e-9
    rows = ClassRows(units, values, positive)
    ci = bootstrap_ci(rows.auroc, units, n_boot=200, seed=7)
    mine = percentile_bounds(x[2:3], y[2:3], pu, nu, 200, np.random.default_rng(7))
    assert (ci.low, ci.high) == (mine[0][0], mine[1][0]), (ci, mine)


def run_grid(reps: int, boot_reps: int, n_boot: int, seed: int) -> list[dict[str, Any]]:
    cells = []
    for design in DESIGNS:
        sizes = [(k, k) for k in PAIRS] if design.startswith("pairs") else list(SIZES)
        for m, n in sizes:
            pu, nu, _ = units_of(design, m, n)
            for theta in THETAS:
                rng = np.random.default_rng([seed, DESIGNS.index(design), m, n, int(theta * 100)])
                x, y = draw(design, theta, m, n, reps, rng)
                check_against_library(x, y, pu, nu)
                cell: dict[str, Any] = {"design": design, "m": m, "n": n, "theta": theta}
                bounds = analytic(x, y, pu, nu)
                bounds["percentile"] = percentile_bounds(
                    x[:boot_reps], y[:boot_reps], pu, nu, n_boot, rng
                )
                for method in METHODS:
                    low, high = bounds[method]
                    cell[method] = (
                        float(np.mean((low <= theta + 1e-12) & (theta - 1e-12 <= high))),
                        float(np.mean(high - low)),
                        float(np.mean(high - low <= 0)),
                    )
                p = bounds["p"][0]
                cell["size"] = (float(np.mean(p < 0.05)), float(np.mean(p < 0.025)))
                cell["mean_auroc"] = float(bounds["p"][1].mean())
                cells.append(cell)
    return cells


def print_grid(cells: list[dict[str, Any]], reps: int, boot_reps: int) -> None:
    print(
        "| design | n pos | n neg | AUROC | mean A | "
        + " | ".join(f"{m} cover / width" for m in METHODS)
        + " |"
    )
    print("|---|---:|---:|---:|---:|" + "---:|" * len(METHODS))
    for c in cells:
        parts = []
        for method in METHODS:
            cover, width, zero = c[method]
            parts.append(f"{cover:.3f} / {width:.3f}" + (f" ({zero:.0%} zero)" if zero else ""))
        print(
            f"| {c['design']} | {c['m']} | {c['n']} | {c['theta']} | {c['mean_auroc']:.3f} | "
            + " | ".join(parts)
            + " |"
        )
    print()
    for method, r in zip(METHODS, (boot_reps, reps, reps, reps, reps), strict=True):
        se = math.sqrt(0.95 * 0.05 / r)
        covers = [(c[method][0], c) for c in cells]
        worst = sorted(covers, key=lambda t: t[0])[:3]
        text = "; ".join(
            f"{cov:.3f} ({c['design']} {c['m']}/{c['n']} AUROC {c['theta']})" for cov, c in worst
        )
        zero_cells = sum(1 for c in cells if c[method][2] > 0)
        print(
            f"- {method}: min coverage {worst[0][0]:.3f} over {len(cells)} cells "
            f"(R = {r}, SE at 0.95 = {se:.4f}); worst: {text}; cells with a zero-width "
            f"interval: {zero_cells}"
        )
    null = [c for c in cells if c["theta"] == 0.5]
    worst5 = max(c["size"][0] for c in null)
    worst25 = max(c["size"][1] for c in null)
    mean5 = np.mean([c["size"][0] for c in null])
    print(
        f"- chosen one-sided p-value at AUROC 0.5: P(p < 0.05) mean {mean5:.3f}, max "
        f"{worst5:.3f}; P(p < 0.025) max {worst25:.3f} over {len(null)} null cells"
    )


DIFF_PAIRS = (
    (0.5, 0.5),
    (0.7, 0.7),
    (0.8, 0.6),
    (0.9, 0.7),
    (0.95, 0.8),
    (0.9, 0.9),
    (1.0, 0.9),
    (1.0, 1.0),
)
DIFF_RHOS = (0.5, 0.9)
DIFF_METHODS = ("percentile", "delong-wald", "mover-c", "mover-f", "mover", "chosen")
CUTS = norm.ppf(np.cumsum(NEG_LEVELS)[:-1])


def _shift(theta: float) -> float:
    return 100.0 if theta == 1 else math.sqrt(2) * float(norm.ppf(theta))


def tied_shift(theta: float) -> float:
    """The latent shift ``d`` whose 5-level discretisation (cuts at the negatives' quantiles
    CUTS) gives positives with AUROC ``theta`` against NEG_LEVELS."""

    def p_of(d: float) -> NDArray[np.float64]:
        return np.diff(norm.cdf(np.r_[-np.inf, CUTS, np.inf] - d))

    if theta == 0.5:
        return 0.0
    return float(brentq(lambda d: tied_auroc(p_of(d), NEG_LEVELS) - theta, 0.0, 30.0))


def draw_pair(
    design: str,
    ta: float,
    tb: float,
    rho: float,
    m: int,
    n: int,
    reps: int,
    rng: np.random.Generator,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """``(x_a, y_a, x_b, y_b)``: two statistics on the same ``reps`` data sets of ``m``
    positives and ``n`` negatives, their noise correlated ``rho``, AUROCs ``ta`` and ``tb``."""
    e = rng.multivariate_normal([0, 0], [[1, rho], [rho, 1]], (reps, m + n))
    out: list[NDArray[np.float64]] = []
    if design in ("continuous", "tied"):
        for j, theta in enumerate((ta, tb)):
            x, y = e[:, :m, j], e[:, m:, j]
            if design == "continuous":
                out += [x + _shift(theta), y]
            elif theta == 1:
                out += [np.where(x > 0, 4.0, 3.0), np.digitize(y, CUTS[:2]).astype(float)]
            else:
                out += [
                    np.digitize(x + tied_shift(theta), CUTS).astype(float),
                    np.digitize(y, CUTS).astype(float),
                ]
        return out[0], out[1], out[2], out[3]
    u = rng.normal(0, math.sqrt(0.5), (reps, m))
    sign = 1.0 if design == "pairs+" else -1.0
    e = e * math.sqrt(0.5)
    for j, theta in enumerate((ta, tb)):
        out += [u + e[:, :m, j] + _shift(theta), sign * u + e[:, m:, j]]
    return out[0], out[1], out[2], out[3]


def _psi(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
    diff = x[:, :, None] - y[:, None, :]
    return np.where(diff > TIE_TOLERANCE, 1.0, np.where(np.abs(diff) <= TIE_TOLERANCE, 0.5, 0.0))


def difference_bounds(
    xa: NDArray[np.float64],
    ya: NDArray[np.float64],
    xb: NDArray[np.float64],
    yb: NDArray[np.float64],
    pu: NDArray[np.intp],
    nu: NDArray[np.intp],
) -> dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]]:
    """The analytic difference methods' bounds for every data set at once (the formulas of
    :mod:`cotaudit.validation.intervals`, batched)."""
    psi_a, psi_b = _psi(xa, ya), _psi(xb, yb)
    m, n = psi_a.shape[1:]
    k = int(max(pu.max(), nu.max()) + 1)
    k10, k01, kk = np.unique(pu).size, np.unique(nu).size, np.unique(np.r_[pu, nu]).size
    res = []
    for psi in (psi_a, psi_b):
        a = psi.mean((1, 2))
        res.append(
            (
                a,
                (psi.mean(2) - a[:, None]) @ np.eye(k)[pu],
                (psi.mean(1) - a[:, None]) @ np.eye(k)[nu],
            )
        )

    def cov(i: int, j: int) -> NDArray[np.float64]:
        _, x10, x01 = res[i]
        _, y10, y01 = res[j]
        return np.asarray(
            k10 / (k10 - 1) * (x10 * y10).sum(1) / m**2
            + k01 / (k01 - 1) * (x01 * y01).sum(1) / n**2
            + kk / (kk - 1) * ((x10 * y01).sum(1) + (x01 * y10).sum(1)) / (m * n)
        )

    var_a, var_b, cov_ab = np.maximum(0, cov(0, 0)), np.maximum(0, cov(1, 1)), cov(0, 1)
    a, b = res[0][0], res[1][0]
    singles = []
    floored = []
    for est, var in ((a, var_a), (b, var_b)):
        v_n = newcombe_variance(est, m, n)
        effect = np.where(v_n > 0, var / np.where(v_n > 0, v_n, 1.0), 0.0)
        singles.append(score_bounds(est, effect, m, n, Z, floor=(k10, k01)))
        floored.append(np.maximum(var, newcombe_variance(est, k10, k01)))
    kmin = np.full_like(a, min(k10, k01))
    big = np.full_like(a, 1e300)
    r_c = difference_correlation(cov_ab, var_a, var_b, big)
    r_f = difference_correlation(cov_ab, floored[0], floored[1], big)
    r_chosen = difference_correlation(cov_ab, floored[0], floored[1], kmin)
    half = Z * np.sqrt(np.maximum(0.0, var_a + var_b - 2 * cov_ab))
    mover = mover_bounds(a, b, singles[0], singles[1], r_chosen)
    return {
        "chosen": (
            np.maximum(-1.0, np.minimum(mover[0], a - b - half)),
            np.minimum(1.0, np.maximum(mover[1], a - b + half)),
        ),
        "delong-wald": (a - b - half, a - b + half),
        "mover-c": mover_bounds(a, b, singles[0], singles[1], r_c),
        "mover-f": mover_bounds(a, b, singles[0], singles[1], r_f),
        "mover": mover_bounds(a, b, singles[0], singles[1], r_chosen),
        "r": (r_chosen, a - b),
    }


def difference_grid(reps: int, boot_reps: int, n_boot: int, seed: int) -> None:
    """Coverage of the difference intervals of A_a - A_b (statistics a and b read on the same
    samples, their noise correlated rho), methods side by side on the same data sets."""
    print("\n## Paired difference A_a - A_b, 95% nominal\n")
    print(
        "| design | n pos | n neg | rho | AUROC a | AUROC b | "
        + " | ".join(f"{m} cover / width" for m in DIFF_METHODS)
        + " | mean r |"
    )
    print("|---|---:|---:|---:|---:|---:|" + "---:|" * (len(DIFF_METHODS) + 1))
    cells = []
    for design in DESIGNS:
        sizes = [(k, k) for k in PAIRS] if design.startswith("pairs") else list(SIZES)
        for m, n in sizes:
            pu, nu, _ = units_of(design, m, n)
            for rho in DIFF_RHOS:
                for ta, tb in DIFF_PAIRS:
                    rng = np.random.default_rng(
                        [
                            seed,
                            7,
                            DESIGNS.index(design),
                            m,
                            n,
                            int(rho * 10),
                            int(ta * 100),
                            int(tb * 100),
                        ]
                    )
                    xa, ya, xb, yb = draw_pair(design, ta, tb, rho, m, n, reps, rng)
                    check_difference(xa, ya, xb, yb, pu, nu)
                    bounds: dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]] = {}
                    for s in range(0, reps, 500):
                        part = difference_bounds(
                            xa[s : s + 500],
                            ya[s : s + 500],
                            xb[s : s + 500],
                            yb[s : s + 500],
                            pu,
                            nu,
                        )
                        for key, (lo, hi) in part.items():
                            old = bounds.get(key, (np.zeros(0), np.zeros(0)))
                            bounds[key] = (np.r_[old[0], lo], np.r_[old[1], hi])
                    k = int(max(pu.max(), nu.max()) + 1)
                    lows, highs = [], []
                    for r in range(boot_reps):
                        psi = (
                            _psi(xa[r : r + 1], ya[r : r + 1])[0]
                            - _psi(xb[r : r + 1], yb[r : r + 1])[0]
                        )
                        b_lo, b_hi, _ = percentile_interval(
                            resampled_aurocs(psi, pu, nu, k, n_boot, rng)
                        )
                        lows.append(b_lo)
                        highs.append(b_hi)
                    bounds["percentile"] = (np.array(lows), np.array(highs))
                    truth = ta - tb
                    cell: dict[str, Any] = {
                        "design": design,
                        "m": m,
                        "n": n,
                        "rho": rho,
                        "ta": ta,
                        "tb": tb,
                    }
                    for method in DIFF_METHODS:
                        lo, hi = bounds[method]
                        cell[method] = (
                            float(np.mean((lo <= truth + 1e-12) & (truth - 1e-12 <= hi))),
                            float(np.mean(hi - lo)),
                            float(np.mean(hi - lo <= 0)),
                        )
                    lo, hi = bounds["chosen"]
                    cell["miss_low"] = float(np.mean(lo > truth + 1e-12))
                    cell["r"] = float(bounds["r"][0].mean())
                    cells.append(cell)
                    parts = []
                    for method in DIFF_METHODS:
                        cover, width, zero = cell[method]
                        parts.append(
                            f"{cover:.3f} / {width:.3f}" + (f" ({zero:.0%} zero)" if zero else "")
                        )
                    print(
                        f"| {design} | {m} | {n} | {rho} | {ta} | {tb} | "
                        + " | ".join(parts)
                        + f" | {cell['r']:.2f} |",
                        flush=True,
                    )
    print()
    for method, r in zip(DIFF_METHODS, (boot_reps,) + (reps,) * 5, strict=True):
        se = math.sqrt(0.95 * 0.05 / r)
        worst = sorted(cells, key=lambda c: c[method][0])[:3]
        text = "; ".join(
            f"{c[method][0]:.3f} ({c['design']} {c['m']}/{c['n']} rho {c['rho']} "
            f"{c['ta']} vs {c['tb']})"
            for c in worst
        )
        zero_cells = sum(1 for c in cells if c[method][2] > 0)
        below = sum(1 for c in cells if c[method][0] < 0.93)
        print(
            f"- {method}: min coverage {worst[0][method][0]:.3f} over {len(cells)} cells "
            f"(R = {r}, SE at 0.95 = {se:.4f}); cells below 0.93: {below}; worst: {text}; "
            f"cells with a zero-width interval: {zero_cells}"
        )
    for design in DESIGNS:
        covers = [c["chosen"][0] for c in cells if c["design"] == design]
        print(f"- chosen, {design}: min {min(covers):.3f}, mean {np.mean(covers):.3f}")
    null = [c for c in cells if c["ta"] == c["tb"] < 1]
    print(
        f"- chosen one-sided p < 0.025 (low bound above the true 0) in the {len(null)} cells "
        f"with equal AUROCs below 1: mean {np.mean([c['miss_low'] for c in null]):.4f}, "
        f"max {max(c['miss_low'] for c in null):.4f}"
    )


def check_difference(
    xa: NDArray[np.float64],
    ya: NDArray[np.float64],
    xb: NDArray[np.float64],
    yb: NDArray[np.float64],
    pu: NDArray[np.intp],
    nu: NDArray[np.intp],
) -> None:
    """The batched formulas give :func:`paired_auroc_difference`'s bounds on 3 data sets, and
    its p-value is below 0.025 exactly when its low bound is above 0."""
    batched = difference_bounds(xa[:3], ya[:3], xb[:3], yb[:3], pu, nu)
    m = xa.shape[1]
    positive = np.r_[np.ones(m, bool), np.zeros(ya.shape[1], bool)]
    units = [f"u{u}" for u in np.r_[pu, nu]]
    for r in range(3):
        d = paired_auroc_difference(np.r_[xa[r], ya[r]], np.r_[xb[r], yb[r]], positive, units)
        low, high = batched["chosen"][0][r], batched["chosen"][1][r]
        assert abs(d.low - low) < 1e-9 and abs(d.high - high) < 1e-9, (d, low, high)
        assert (d.p_value < 0.025) == (d.low > 0) or abs(d.low) < 1e-9, d


def main(argv: list[str] | None = None, clock: Callable[[], float] = time.perf_counter) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=4000, help="data sets per cell, analytic methods")
    ap.add_argument("--boot-reps", type=int, default=250, help="data sets per cell, bootstrap")
    ap.add_argument("--n-boot", type=int, default=1000, help="bootstrap resamples per data set")
    ap.add_argument("--diff-reps", type=int, default=2000, help="data sets per difference cell")
    ap.add_argument(
        "--diff-boot-reps", type=int, default=100, help="of them, bootstrapped (percentile)"
    )
    ap.add_argument("--only", choices=("grid", "difference"), help="run one part only")
    ap.add_argument("--seed", type=int, default=20260)
    args = ap.parse_args(argv)
    assert MIN_UNITS == 2
    start = clock()
    if args.only != "difference":
        cells = run_grid(args.reps, args.boot_reps, args.n_boot, args.seed)
        print("# AUROC interval coverage, 95% nominal\n")
        print_grid(cells, args.reps, args.boot_reps)
    mid = clock()
    if args.only != "grid":
        difference_grid(args.diff_reps, args.diff_boot_reps, args.n_boot, args.seed)
    end = clock()
    print(f"\nruntime: grid {mid - start:.0f} s, difference {end - mid:.0f} s, ", end="")
    print(f"total {end - start:.0f} s")


if __name__ == "__main__":
    main()
