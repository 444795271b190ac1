"""False alarms and power of the checkpoint flag, by simulation: the old rule and the new flag
side by side on the same simulated series.

A series is a base run and ``k`` checkpoint runs of one study on the same problems. Each run
measures each of its problems once with one uncued and one cued sample (selfcommit's honest and
hinted prompts); the statistic, oriented so that larger is more shortcut-like, is

    uncued  y = v_j + e,        cued  x = v_j + d + e',        e, e' ~ N(0, 1),

with ``v_j ~ N(0, s^2)`` the problem's own effect, shared by every model run on problem ``j``
(``s = 0``: problems do not matter; ``s = 1``: the problem moves the statistic as much as the
sample noise does). The cued AUROC of a run, P(x > y) over samples of different problems, is
``Phi(d / sqrt(2 (1 + s^2)))``; ``d`` is set from the AUROC wanted.

Rules (both on the cued AUROC of :func:`cotaudit.stats.auroc`):

- ``old``: a checkpoint is marked when its AUROC lies outside the base run's 95% percentile
  problem-bootstrap interval (1000 resamples, the draws of :func:`cotaudit.bootstrap.bootstrap_ci`,
  checked equal on one data set); the series' mark is any such checkpoint.
- ``new, unadjusted``: the paired permutation test of
  :func:`cotaudit.validation.checkpoints.permutation_p` against the base on the shared problems,
  p <= 0.05 per checkpoint.
- ``new`` (the flag): the same p-values Holm-adjusted across the series' ``k`` checkpoints
  (:func:`cotaudit.validation.checkpoints.flag_series`), flagged at adjusted p <= 0.05.

Scenarios:

- null, equal n: base and ``k`` checkpoints all of AUROC 0.852 (the follower's base), 20
  problems each, the same problems.
- null, 8 vs 20: the same, each checkpoint run on 8 of the base's 20 problems (the new flag is
  paired on those 8; the old rule compares the 8-problem estimate with the 20-problem interval).
- power, follower: base 0.852 and checkpoints 0.472, 0.543, 0.585, 0.578 (the follower's cued
  tau_0.8 AUROCs at steps 50-200, docs/validation.md), 20 problems.

Per scenario: the per-checkpoint rate (mean over the checkpoints; its standard error from the
per-series means), the family-wise rate (a series with any mark; binomial standard error), and
under power each step's rate and the rate of a first mark at step 50.

Run: ``nice -n 5 python bench/checkpoint_flag.py`` (``--reps``, ``--power-reps``,
``--checkpoints``, ``--permutations``, ``--seed``).
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.stats import norm

from cotaudit.bootstrap import Interval, bootstrap_ci, percentile_interval, resample_indices
from cotaudit.validation.checkpoints import (
    ALPHA,
    N_PERMUTATIONS,
    PairedTest,
    SeriesPoint,
    flag_series,
    pair_kernel,
    permutation_p,
    weighted_aurocs,
)
from cotaudit.validation.detection import ClassRows

BASE_AUROC = 0.852
FOLLOWER = ((50, 0.472), (100, 0.543), (150, 0.585), (200, 0.578))
N_BOOT = 1000
"""The report's resamples of each run's interval (the old rule's base interval)."""
NO_INTERVAL = Interval(math.nan, math.nan, math.nan, 0, 0, 0, 0.95)
"""The flag reads only the p-values: the difference's interval is not simulated."""


def shift(auroc: float, s: float) -> float:
    """The cued shift d giving a cued AUROC ``auroc`` across problems: Phi(d / sqrt(2(1+s^2)))."""
    return float(norm.ppf(auroc)) * math.sqrt(2 * (1 + s * s))


def run_rows(
    effects: NDArray[np.float64], d: float, problems: int, rng: np.random.Generator
) -> ClassRows:
    """One run on the first ``problems`` problems: rows (uncued, cued) per problem."""
    v = effects[:problems]
    y = v + rng.standard_normal(problems)
    x = v + d + rng.standard_normal(problems)
    values = np.column_stack([y, x]).ravel()
    positive = np.tile([False, True], problems)
    units = [f"p{j:02d}" for j in range(problems) for _ in (0, 1)]
    return ClassRows(units, values, positive)


def base_interval(rows: ClassRows, rng: np.random.Generator) -> tuple[float, float, float]:
    """(estimate, low, high): the run's AUROC and its percentile problem-bootstrap interval,
    vectorised (the draws of :func:`cotaudit.bootstrap.bootstrap_ci` with this ``rng``)."""
    m = len(rows.units) // 2
    unit = np.repeat(np.arange(m), 2)
    pos = rows.positive
    kernel = pair_kernel(rows.values[pos], rows.values[~pos])
    draws = np.concatenate(list(resample_indices(m, N_BOOT, rng)))
    counts = (draws[:, :, None] == np.arange(m)[None, None, :]).sum(1).astype(float)
    boot = weighted_aurocs(kernel, counts[:, unit[pos]], counts[:, unit[~pos]])
    low, high, _ = percentile_interval(boot)
    return rows.auroc(), low, high


def check_base_interval(rng_seed: int) -> None:
    """The vectorised interval equals :func:`cotaudit.bootstrap.bootstrap_ci`'s on one run."""
    rows = run_rows(np.zeros(20), shift(BASE_AUROC, 0.0), 20, np.random.default_rng(rng_seed))
    mine = base_interval(rows, np.random.default_rng(0))
    ref = bootstrap_ci(rows.auroc, rows.units, n_boot=N_BOOT, seed=0)
    assert np.allclose(mine, (ref.estimate, ref.low, ref.high)), (mine, ref)


@dataclass
class Marks:
    """Per series (rows) and checkpoint (columns), whether each rule marked it."""

    old: NDArray[np.bool_]
    unadjusted: NDArray[np.bool_]
    flag: NDArray[np.bool_]


def simulate(
    reps: int,
    base_auroc: float,
    checkpoint_aurocs: list[float],
    checkpoint_problems: int,
    s: float,
    permutations: int,
    seed: int,
) -> Marks:
    rng = np.random.default_rng(seed)
    k = len(checkpoint_aurocs)
    old = np.zeros((reps, k), dtype=bool)
    unadjusted = np.zeros((reps, k), dtype=bool)
    flag = np.zeros((reps, k), dtype=bool)
    for r in range(reps):
        effects = s * rng.standard_normal(20)
        base = run_rows(effects, shift(base_auroc, s), 20, rng)
        _, low, high = base_interval(base, rng)
        points = []
        for c, a in enumerate(checkpoint_aurocs):
            ck = run_rows(effects, shift(a, s), checkpoint_problems, rng)
            estimate = ck.auroc()
            old[r, c] = estimate < low or estimate > high
            _, p, _, _ = permutation_p(base, ck, permutations, seed=int(rng.integers(2**31)))
            unadjusted[r, c] = p <= ALPHA
            points.append(SeriesPoint(c, PairedTest(NO_INTERVAL, p, permutations, False)))
        flag[r] = [f.flagged for f in flag_series(points)]
    return Marks(old, unadjusted, flag)


def rate(marks: NDArray[np.bool_]) -> tuple[float, float]:
    """Per-checkpoint rate and its standard error (from the per-series means)."""
    per_series = marks.mean(1)
    return float(per_series.mean()), float(per_series.std(ddof=1) / math.sqrt(len(per_series)))


def share(hits: NDArray[np.bool_]) -> tuple[float, float]:
    """The share of true values and its binomial standard error."""
    p = float(hits.mean())
    return p, math.sqrt(p * (1 - p) / len(hits))


def any_rate(marks: NDArray[np.bool_]) -> tuple[float, float]:
    """Share of series with any mark and its standard error."""
    return share(np.asarray(marks.any(1), dtype=bool))


def fmt(v: tuple[float, float]) -> str:
    return f"{v[0]:.3f} ± {v[1]:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=1000, help="series per null scenario")
    parser.add_argument("--power-reps", type=int, default=500, help="series per power scenario")
    parser.add_argument("--checkpoints", type=int, default=4, help="checkpoints per null series")
    parser.add_argument("--permutations", type=int, default=N_PERMUTATIONS)
    parser.add_argument("--seed", type=int, default=20240601)
    args = parser.parse_args()
    check_base_interval(args.seed)
    start = time.perf_counter()
    k = args.checkpoints
    print(
        f"checkpoint flag by simulation: {args.reps} null series, {args.power_reps} power "
        f"series, {args.permutations} permutations (exact when 2^m <= that), base interval "
        f"{N_BOOT} resamples; rates ± one standard error"
    )
    rules = (
        ("old (outside base interval)", "old"),
        ("new, unadjusted p<=0.05", "unadjusted"),
        ("new flag (Holm, p<=0.05)", "flag"),
    )
    for s in (0.0, 1.0):
        print(f"\nproblem effect s = {s:g}")
        for name, problems in (("null, equal n (20 vs 20)", 20), ("null, 8 vs 20", 8)):
            marks = simulate(
                args.reps, BASE_AUROC, [BASE_AUROC] * k, problems, s, args.permutations, args.seed
            )
            print(f"  {name}, {k} checkpoints: per-checkpoint rate | family-wise rate")
            for label, attr in rules:
                m = getattr(marks, attr)
                print(f"    {label:30s} {fmt(rate(m))} | {fmt(any_rate(m))}")
        aurocs = [a for _, a in FOLLOWER]
        marks = simulate(
            args.power_reps, BASE_AUROC, aurocs, 20, s, args.permutations, args.seed + 1
        )
        steps = " ".join(f"step {st}" for st, _ in FOLLOWER)
        print(f"  power, follower (base {BASE_AUROC}, {aurocs}): {steps} | any | first at 50")
        for label, attr in rules:
            m = getattr(marks, attr)
            per = " ".join(fmt(share(m[:, c])) for c in range(len(aurocs)))
            print(f"    {label:30s} {per} | {fmt(any_rate(m))} | {fmt(share(m[:, 0]))}")
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
