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

Then the paired problem-bootstrap interval of a difference of two AUROCs on the same samples
(:func:`cotaudit.validation.intervals.paired_auroc_difference`) on a smaller grid.

Run: ``nice -n 5 python bench/auroc_coverage.py`` (``--reps``, ``--boot-reps``, ``--n-boot``).
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


def difference_grid(reps: int, n_boot: int, seed: int) -> None:
    """Coverage of the paired problem-bootstrap interval of A_a - A_b (statistics a and b read
    on the same samples, their noise correlated 0.5)."""
    print("\n## Paired difference A_a - A_b (paired problem bootstrap, percentile)\n")
    print("| design | K or n per class | AUROC a | AUROC b | true diff | coverage | width |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    pairs_ab = ((0.7, 0.7), (0.8, 0.6), (0.9, 0.7), (0.95, 0.8), (1.0, 0.9))
    worst = 1.0
    for design in ("continuous", "pairs+"):
        for k in (10, 20, 50):
            for ta, tb in pairs_ab:
                rng = np.random.default_rng([seed, 99, k, int(ta * 100), int(tb * 100)])
                covered, widths = 0, []
                for _ in range(reps):
                    pos = np.r_[np.ones(k, bool), np.zeros(k, bool)]
                    units = list(range(k)) * 2 if design == "pairs+" else list(range(2 * k))
                    u = rng.normal(0, math.sqrt(0.5), k) if design == "pairs+" else np.zeros(k)
                    u2 = np.r_[u, u]
                    s = math.sqrt(0.5) if design == "pairs+" else 1.0
                    e = rng.multivariate_normal([0, 0], [[1, 0.5], [0.5, 1]], 2 * k) * s
                    va = u2 + e[:, 0] + pos * _shift(ta)
                    vb = u2 + e[:, 1] + pos * _shift(tb)
                    d = paired_auroc_difference(
                        va, vb, pos, units, n_boot=n_boot, seed=int(rng.integers(1 << 30))
                    )
                    if not math.isnan(d.low):
                        covered += d.low <= ta - tb + 1e-12 <= d.high + 2e-12
                        widths.append(d.high - d.low)
                cov = covered / reps
                worst = min(worst, cov)
                print(
                    f"| {design} | {k} | {ta} | {tb} | {ta - tb:.2f} | {cov:.3f} | "
                    f"{np.mean(widths) if widths else math.nan:.3f} |"
                )
    print(f"\n- paired difference: min coverage {worst:.3f} (R = {reps}, B = {n_boot})")


def _shift(theta: float) -> float:
    return 100.0 if theta == 1 else math.sqrt(2) * float(norm.ppf(theta))


def main(argv: list[str] | None = None, clock: Callable[[], float] = time.perf_counter) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=4000, help="data sets per cell, analytic methods")
    ap.add_argument("--boot-reps", type=int, default=250, help="data sets per cell, bootstrap")
    ap.add_argument("--n-boot", type=int, default=1000, help="bootstrap resamples per data set")
    ap.add_argument("--diff-reps", type=int, default=300, help="data sets per difference cell")
    ap.add_argument("--seed", type=int, default=20260)
    args = ap.parse_args(argv)
    assert MIN_UNITS == 2
    start = clock()
    cells = run_grid(args.reps, args.boot_reps, args.n_boot, args.seed)
    print("# AUROC interval coverage, 95% nominal\n")
    print_grid(cells, args.reps, args.boot_reps)
    mid = clock()
    difference_grid(args.diff_reps, args.n_boot, args.seed)
    end = clock()
    print(f"\nruntime: grid {mid - start:.0f} s, difference {end - mid:.0f} s, ", end="")
    print(f"total {end - start:.0f} s")


if __name__ == "__main__":
    main()
