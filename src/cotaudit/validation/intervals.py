"""AUROC intervals that respect the problem (unit), the paired difference of two AUROCs, and
g-mean^2 at a threshold chosen on other rows.

Notation: ``M`` positive and ``N`` negative samples with oriented values ``x_i`` and ``y_j``
(larger = more positive-like), each sample in one unit (a problem; ``K`` units, ``K_10`` of them
holding a positive and ``K_01`` a negative). ``psi(x, y) = 1`` if ``x > y``, ``1/2`` if
``x = y`` (within :data:`cotaudit.stats.TIE_TOLERANCE`), else 0.

- **AUROC** ``A = (1 / MN) sum_i sum_j psi(x_i, y_j)`` (:func:`cotaudit.stats.auroc`).
- **Placements** (DeLong, DeLong & Clarke-Pearson 1988): ``V10_i = (1/N) sum_j psi(x_i, y_j)``,
  ``V01_j = (1/M) sum_i psi(x_i, y_j)``; per unit ``k`` their sums ``V10_k``, ``V01_k`` and
  class counts ``m_k``, ``n_k``.
- **Clustered variance** (Obuchowski 1997, Biometrics 53:567, which is DeLong's when every unit
  holds one sample)::

      S10 = K_10 / (K_10 - 1) * sum_k (V10_k - m_k A)^2
      S01 = K_01 / (K_01 - 1) * sum_k (V01_k - n_k A)^2
      S11 = K / (K - 1) * sum_k (V10_k - m_k A) (V01_k - n_k A)
      Var_c(A) = S10 / M^2 + S01 / N^2 + 2 S11 / (M N)

- **Newcombe's variance as a function of the AUROC** (Newcombe 2006, Stat Med 25:559, method
  5: Hanley & McNeil 1982 with ``Q1 = t/(2 - t)``, ``Q2 = 2t^2/(1 + t)`` and both class sizes
  replaced by ``n* = (m + n)/2``)::

      V_N(t; m, n) = t (1 - t) [1 + (n* - 1) ((1 - t)/(2 - t) + t/(1 + t))] / (m n)

- **Design effect** ``D = Var_c(A) / V_N(A; M, N)``: how far the units' correlation and the
  data's ties move the variance from Newcombe's independent-sample model (0 when ``A`` is 0 or
  1, or when every placement equals ``A``: the data then carry no estimate of it).
- **Variance used**: Newcombe's over the *units*, widened by the design effect when that is
  larger: ``V(t) = max(D * V_N(t; M, N), V_N(t; K_10, K_01))``. The floor counts each unit
  holding a class once (so samples of one problem never count as independent evidence), and
  the design effect widens it where the problem effect adds spread (e.g. a problem that moves
  its positive and its negative in opposite directions). The design effect alone, without the
  floor, under-covers at 10-50 samples per class near AUROC 0.9 and with tied values (its
  placement variance is estimated low there), so it only ever widens.
- **Interval** (:func:`auroc_interval`): the ``t`` in ``[0, 1]`` with ``(A - t)^2 <= z^2 V(t)``,
  ``z = Phi^-1((1 + c)/2)``: a score-type (Wilson-like) inversion, so the bounds stay in
  ``[0, 1]``, an estimate of 1 keeps 1 in the interval, and the width is positive for every
  finite sample (``V(t) > 0`` inside ``(0, 1)``). Bounds found by bisection to 1e-12. At
  ``A = 1`` with ``K_10 = K_01 = K`` the low bound solves ``(1 - t)^2 = z^2 V_N(t; K, K)``.
- **p-value** for ``H0: AUROC = 1/2`` against ``AUROC > 1/2`` (detection), with the same
  variance at the null: ``z0 = (A - 1/2) / sqrt(V(1/2))``, ``p = 1 - Phi(z0)``. A one-sided p
  below ``(1 - c)/2`` is the same event as the interval's low bound above 1/2.
- No interval (NaN bounds and p, the estimate kept) when fewer than 2 units hold a positive or
  fewer than 2 hold a negative: one problem says nothing about problem-to-problem variation.

Chosen by its coverage in ``bench/auroc_coverage.py`` against the percentile problem bootstrap
(:func:`cotaudit.bootstrap.bootstrap_ci`), Newcombe's interval over units alone, the design
effect alone, and a logit-scale Wald interval on ``Var_c``.

- **Paired difference** (:func:`paired_auroc_difference`): ``d = A_a - A_b`` of two
  statistics read on the same samples, by Zou & Donner's MOVER (method of variance estimates
  recovery; Zou & Donner 2008, Comput Stat Data Anal 52:1445; Newcombe 1998, Stat Med 17:873,
  method 10, is the same construction for paired proportions) from the two single intervals
  above, ``[l_a, u_a]`` and ``[l_b, u_b]``::

      low  = d - sqrt((A_a - l_a)^2 + (u_b - A_b)^2 - 2 r (A_a - l_a)(u_b - A_b))
      high = d + sqrt((u_a - A_a)^2 + (A_b - l_b)^2 - 2 r (u_a - A_a)(A_b - l_b))

  ``r``, the correlation of the two estimates, from the clustered placements (Obuchowski's
  covariance, DeLong's for one sample per unit), with ``a10_k``, ``a01_k``, ``b10_k``,
  ``b01_k`` the two statistics' unit residuals ``V10_k - m_k A`` and ``V01_k - n_k A``::

      Cov_c = K_10/(K_10-1) sum_k a10_k b10_k / M^2 + K_01/(K_01-1) sum_k a01_k b01_k / N^2
              + K/(K-1) sum_k (a10_k b01_k + a01_k b10_k) / (M N)
      r = min(Cov_c / sqrt(V_a V_b), 1 - 1/K_min)

  ``V_a = max(Var_c(A_a), V_N(A_a; K_10, K_01))``, the floored variance each single interval
  uses at its estimate (``r = 0`` where ``V_a V_b = 0``, e.g. an AUROC of 1: its placements
  carry no covariance); ``K_min = min(K_10, K_01)``. The cap keeps the width positive for every
  finite sample, also for two statistics that rank every sample alike (``r`` would be 1, and
  the bounds ``d -+ |arm_a - arm_b|``, zero at a symmetric interval). The cap is a choice, not
  an estimate; the simulation's cells with the two statistics' noise correlated 0.9 (``r``
  near the cap at 10-20 problems) keep their coverage.
- **Interval of the difference**: MOVER's bounds widened, where it is wider, by the Wald
  interval on the clustered (DeLong/Obuchowski) variance of the difference, and kept in
  ``[-1, 1]``::

      Var_c(d) = Var_c(A_a) + Var_c(A_b) - 2 Cov_c
      low  = max(-1, min(low_MOVER,  d - z sqrt(Var_c(d))))
      high = min( 1, max(high_MOVER, d + z sqrt(Var_c(d))))

  MOVER alone inherits each single interval's skew; with the two statistics strongly
  correlated (``r`` ~ 0.8) and one AUROC near 1 the skews cancel too much of an arm (a problem
  effect that moves positive and negative apart, 50-100 problems: 92.5% coverage, its low
  bound too high). The Wald interval alone is zero-width at an AUROC of 1 or at perfect ties
  and under-covers there (80%). Either covers where the other fails; the union costs width
  only where they disagree. An AUROC at 1 keeps its single interval's width (Newcombe's over
  the units), so the difference's interval has positive width for every finite sample.
- **p-value** for ``H0: A_a - A_b <= 0`` against ``> 0``: ``p = 1 - Phi(z*)``, ``z*`` the first
  critical value (searched upward from 0 on grids of 64 steps, 6 rounds) at which the low
  bound of the interval built with critical value ``z*`` (both single intervals and the
  Wald arm included) reaches 0; for ``d < 0``, ``p = Phi(z*)`` with ``z*`` where the high
  bound reaches 0; ``p = 1/2`` at ``d = 0``. Where the low bound falls as ``z`` grows (every
  case in the tests and the simulation's checks), ``p < (1 - c)/2`` is the same event as
  ``low > 0``.
- Chosen by its coverage in ``bench/auroc_coverage.py`` (difference grid) against the paired
  percentile problem bootstrap (``A*_a - A*_b`` on the same problem draws,
  :func:`resampled_aurocs`), the Wald interval alone, MOVER alone, and MOVER without the
  floor in ``r`` or the cap.
- **g-mean^2** (:func:`g_mean_squared`): ``TPR * TNR`` of the rule "positive when ``x >= h``",
  ``h`` chosen on selection rows and applied to evaluation rows.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cotaudit.bootstrap import Interval, resample_indices
from cotaudit.stats import greater, tied

CONFIDENCE = 0.95
METHOD = "newcombe-obuchowski"
"""The name of the AUROC interval method (stored with every interval)."""
MIN_UNITS = 2
"""An interval needs at least this many units holding a positive and holding a negative."""
_BISECTION_STEPS = 42
"""Bisection halvings: 2^-42 < 1e-12 of the unit interval."""
DIFFERENCE_METHOD = "mover-newcombe-obuchowski+delong-wald"
"""The name of the AUROC difference interval method (stored with every difference)."""
R_CAP = 1.0
"""The correlation of a difference's two AUROCs is capped at ``1 - R_CAP / K``."""
_Z_MAX = 12.0
"""The largest critical value the difference's p-value search tries (p ~ 2e-33)."""
_P_ROUNDS, _P_GRID = 6, 65
"""The p-value search: rounds of a grid of critical values, each 64 times finer."""


@dataclass(frozen=True)
class AurocInterval(Interval):
    """An AUROC, its interval and its one-sided p-value for ``AUROC = 1/2`` (module docstring).

    An :class:`cotaudit.bootstrap.Interval` (``n_units``: distinct units; ``n_boot`` and
    ``n_valid``: 0, no resampling) with the counts each number rests on. ``low``, ``high`` and
    ``p_value`` are NaN when a class rests on fewer than :data:`MIN_UNITS` units.
    """

    p_value: float = math.nan
    n_positive: int = 0
    n_negative: int = 0
    positive_units: int = 0
    negative_units: int = 0
    method: str = METHOD


def psi_matrix(positive: ArrayLike, negative: ArrayLike) -> NDArray[np.float64]:
    """``psi(x_i, y_j)`` for every positive ``i`` (rows) and negative ``j`` (columns)."""
    x = np.asarray(positive, dtype=float)[:, None]
    y = np.asarray(negative, dtype=float)[None, :]
    return np.where(greater(x, y), 1.0, np.where(tied(x, y), 0.5, 0.0))


def newcombe_variance(t: ArrayLike, m: ArrayLike, n: ArrayLike) -> NDArray[np.float64]:
    """``V_N(t; m, n)`` (module docstring), elementwise."""
    t = np.asarray(t, dtype=float)
    m = np.asarray(m, dtype=float)
    n = np.asarray(n, dtype=float)
    n_star = (m + n) / 2
    return t * (1 - t) * (1 + (n_star - 1) * ((1 - t) / (2 - t) + t / (1 + t))) / (m * n)


def _unit_residuals(
    psi: NDArray[np.float64],
    positive_unit: NDArray[np.intp],
    negative_unit: NDArray[np.intp],
    k: int,
) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
    """``(A, V10_k - m_k A, V01_k - n_k A)``, the per-unit residual sums over ``k`` units."""
    a = float(psi.mean())
    r10 = np.bincount(positive_unit, psi.mean(axis=1) - a, minlength=k).astype(float)
    r01 = np.bincount(negative_unit, psi.mean(axis=0) - a, minlength=k).astype(float)
    return a, r10, r01


def clustered_covariance(
    psi_a: NDArray[np.float64],
    psi_b: NDArray[np.float64],
    positive_unit: NDArray[np.intp],
    negative_unit: NDArray[np.intp],
) -> tuple[float, float, float]:
    """``(Var_c(A_a), Var_c(A_b), Cov_c(A_a, A_b))`` of two statistics on the same samples
    (module docstring; NaN when fewer than 2 units hold either class)."""
    m, n = psi_a.shape
    k = int(max(positive_unit.max(initial=-1), negative_unit.max(initial=-1)) + 1)
    k10 = np.unique(positive_unit).size
    k01 = np.unique(negative_unit).size
    if k10 < MIN_UNITS or k01 < MIN_UNITS:
        return math.nan, math.nan, math.nan
    k_all = np.unique(np.concatenate([positive_unit, negative_unit])).size
    _, a10, a01 = _unit_residuals(psi_a, positive_unit, negative_unit, k)
    _, b10, b01 = _unit_residuals(psi_b, positive_unit, negative_unit, k)

    def cov(
        x10: NDArray[np.float64],
        x01: NDArray[np.float64],
        y10: NDArray[np.float64],
        y01: NDArray[np.float64],
    ) -> float:
        s10 = k10 / (k10 - 1) * float(x10 @ y10)
        s01 = k01 / (k01 - 1) * float(x01 @ y01)
        s11 = k_all / (k_all - 1) * float(x10 @ y01 + x01 @ y10) / 2
        return s10 / m**2 + s01 / n**2 + 2 * s11 / (m * n)

    return (
        max(0.0, cov(a10, a01, a10, a01)),
        max(0.0, cov(b10, b01, b10, b01)),
        cov(a10, a01, b10, b01),
    )


def clustered_variance(
    psi: NDArray[np.float64], positive_unit: NDArray[np.intp], negative_unit: NDArray[np.intp]
) -> tuple[float, float]:
    """``(A, Var_c(A))`` from the ``psi`` matrix and each sample's unit index (module
    docstring; ``Var_c`` NaN when fewer than 2 units hold either class)."""
    var_c, _, _ = clustered_covariance(psi, psi, positive_unit, negative_unit)
    return float(psi.mean()), var_c


def _z(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return NormalDist().inv_cdf((1 + confidence) / 2)


def score_bounds(
    estimate: ArrayLike,
    scale: ArrayLike,
    m: ArrayLike,
    n: ArrayLike,
    z: ArrayLike,
    floor: tuple[ArrayLike, ArrayLike] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The bounds of ``{t : (A - t)^2 <= z^2 V(t)}`` around ``A = estimate``, elementwise
    (bisection on ``[0, A]`` and ``[A, 1]``), ``V(t) = scale V_N(t; m, n)``, or with ``floor =
    (m0, n0)`` ``V(t) = max(scale V_N(t; m, n), V_N(t; m0, n0))``."""
    a = np.asarray(estimate, dtype=float)
    s = np.asarray(scale, dtype=float)
    z = np.asarray(z, dtype=float)

    def variance(t: NDArray[np.float64]) -> NDArray[np.float64]:
        v = s * newcombe_variance(t, m, n)
        return v if floor is None else np.maximum(v, newcombe_variance(t, *floor))

    def inside(t: NDArray[np.float64]) -> NDArray[np.bool_]:
        return (a - t) ** 2 <= z * z * variance(t)

    bounds = []
    for outer in (np.zeros_like(a), np.ones_like(a)):
        out, inn = outer.copy(), a.copy()  # inside(inn) holds, inside(out) may not
        done = inside(out)
        for _ in range(_BISECTION_STEPS):
            mid = (out + inn) / 2
            ok = inside(mid)
            inn = np.where(ok, mid, inn)
            out = np.where(ok, out, mid)
        bounds.append(np.where(done, outer, (out + inn) / 2))
    return bounds[0], bounds[1]


def _unit_index(units: Sequence[Hashable]) -> NDArray[np.intp]:
    index: dict[Hashable, int] = {}
    return np.fromiter((index.setdefault(u, len(index)) for u in units), np.intp, len(units))


def auroc_interval(
    values: ArrayLike,
    positive: ArrayLike,
    units: Sequence[Hashable],
    confidence: float = CONFIDENCE,
) -> AurocInterval:
    """The AUROC of the positive rows over the others, its interval and one-sided p-value
    (module docstring). ``values`` oriented (larger = more positive-like), no NaN; ``units``:
    each row's problem. Empty class: all NaN."""
    v = np.asarray(values, dtype=float)
    pos = np.asarray(positive, dtype=bool)
    if not (v.shape == pos.shape == (len(units),)):
        raise ValueError(f"{v.size} values, {pos.size} flags and {len(units)} units")
    if np.isnan(v).any():
        raise ValueError("an AUROC interval needs values without NaN")
    z = _z(confidence)
    unit = _unit_index(units)
    k10 = np.unique(unit[pos]).size
    k01 = np.unique(unit[~pos]).size
    n_units = int(np.unique(unit).size)

    def result(a: float, low: float, high: float, p: float) -> AurocInterval:
        return AurocInterval(
            a, low, high, n_units, 0, 0, confidence, p, int(pos.sum()), int((~pos).sum()), k10, k01
        )

    nan = math.nan
    if not (pos.any() and (~pos).any()):
        return result(nan, nan, nan, nan)
    psi = psi_matrix(v[pos], v[~pos])
    a, var_c = clustered_variance(psi, unit[pos], unit[~pos])
    if math.isnan(var_c):
        return result(a, nan, nan, nan)
    m, n = psi.shape
    scale = design_effect(a, var_c, m, n)
    low, high = score_bounds(a, scale, m, n, z, floor=(k10, k01))
    sd0 = math.sqrt(
        max(scale * float(newcombe_variance(0.5, m, n)), float(newcombe_variance(0.5, k10, k01)))
    )
    p = 0.5 * math.erfc((a - 0.5) / sd0 / math.sqrt(2))
    return result(a, float(low), float(high), p)


def design_effect(a: float, var_c: float, m: int, n: int) -> float:
    """``D = Var_c(A) / V_N(A; M, N)``, 0 where ``V_N(A)`` is 0 (``A`` in {0, 1})."""
    v_n = float(newcombe_variance(a, m, n))
    return var_c / v_n if v_n > 0 else 0.0


@dataclass(frozen=True)
class Difference:
    """``A_a - A_b`` on the same samples, its interval (MOVER widened by the clustered Wald
    interval) and one-sided p-value for
    ``A_a - A_b > 0`` (module docstring). NaN bounds and p with fewer than 2 units holding
    either class. ``n_boot`` and ``n_valid`` are 0 (no resampling); ``correlation`` is the
    ``r`` the interval used."""

    estimate: float
    low: float
    high: float
    auroc_a: float
    auroc_b: float
    n_positive: int
    n_negative: int
    n_units: int
    n_boot: int
    n_valid: int
    confidence: float
    p_value: float = math.nan
    correlation: float = math.nan
    method: str = DIFFERENCE_METHOD


def resampled_aurocs(
    psi: NDArray[np.float64],
    positive_unit: NDArray[np.intp],
    negative_unit: NDArray[np.intp],
    n_units: int,
    n_boot: int,
    rng: np.random.Generator,
) -> NDArray[np.float64]:
    """``A*_b = sum_ij w_i w_j psi_ij / (sum_i w_i sum_j w_j)`` for ``n_boot`` problem
    resamples (``w`` the number of times a sample's unit was drawn; NaN for a resample that
    lacks a class), the units drawn by :func:`cotaudit.bootstrap.resample_indices`. Pass
    ``psi_a - psi_b`` for the paired bootstrap of a difference."""
    out = []
    for draws in resample_indices(n_units, n_boot, rng):
        flat = (draws + n_units * np.arange(len(draws))[:, None]).ravel()
        w = np.bincount(flat, minlength=draws.size).reshape(draws.shape).astype(float)
        wp, wn = w[:, positive_unit], w[:, negative_unit]
        total = wp.sum(1) * wn.sum(1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out.append(np.where(total > 0, ((wp @ psi) * wn).sum(1) / total, np.nan))
    return np.concatenate(out) if out else np.zeros(0)


def mover_bounds(
    a: ArrayLike,
    b: ArrayLike,
    interval_a: tuple[ArrayLike, ArrayLike],
    interval_b: tuple[ArrayLike, ArrayLike],
    r: ArrayLike,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Zou & Donner's MOVER bounds of ``a - b`` from the intervals ``(l_a, u_a)``,
    ``(l_b, u_b)`` and the correlation ``r`` of the two estimates, elementwise (module
    docstring)."""
    a, b, r = (np.asarray(v, dtype=float) for v in (a, b, r))
    la, ua = (np.asarray(v, dtype=float) for v in interval_a)
    lb, ub = (np.asarray(v, dtype=float) for v in interval_b)
    down_a, up_a, down_b, up_b = a - la, ua - a, b - lb, ub - b
    low = a - b - np.sqrt(np.maximum(0.0, down_a**2 + up_b**2 - 2 * r * down_a * up_b))
    high = a - b + np.sqrt(np.maximum(0.0, up_a**2 + down_b**2 - 2 * r * up_a * down_b))
    return low, high


def difference_correlation(
    cov: ArrayLike, var_a: ArrayLike, var_b: ArrayLike, n_units: ArrayLike
) -> NDArray[np.float64]:
    """``r = min(Cov_c / sqrt(V_a V_b), 1 - R_CAP / K)`` (0 where ``V_a V_b = 0``), ``V`` the
    floored variance each single interval uses at its estimate (module docstring)."""
    cov, var_a, var_b, k = (np.asarray(v, dtype=float) for v in (cov, var_a, var_b, n_units))
    denominator = np.sqrt(var_a * var_b)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(denominator > 0, cov / np.where(denominator > 0, denominator, 1.0), 0.0)
    return np.clip(r, -1.0, 1.0 - R_CAP / k)


def paired_auroc_difference(
    values_a: ArrayLike,
    values_b: ArrayLike,
    positive: ArrayLike,
    units: Sequence[Hashable],
    confidence: float = CONFIDENCE,
) -> Difference:
    """AUROC of statistic ``a`` minus that of ``b`` on the same rows (both oriented), its
    interval (MOVER widened by the clustered Wald interval) and one-sided p-value for
    ``A_a - A_b > 0`` (module docstring). Rows where either value is NaN are left out of both."""
    va = np.asarray(values_a, dtype=float)
    vb = np.asarray(values_b, dtype=float)
    pos = np.asarray(positive, dtype=bool)
    if not (va.shape == vb.shape == pos.shape == (len(units),)):
        raise ValueError(f"{va.size} and {vb.size} values, {pos.size} flags, {len(units)} units")
    z = _z(confidence)
    keep = ~(np.isnan(va) | np.isnan(vb))
    unit = _unit_index([u for u, k in zip(units, keep.tolist(), strict=True) if k])
    va, vb, pos = va[keep], vb[keep], pos[keep]
    k = int(unit.max(initial=-1) + 1)
    nan = math.nan
    counts = (int(pos.sum()), int((~pos).sum()), k)
    if not (counts[0] and counts[1]):
        return Difference(nan, nan, nan, nan, nan, *counts, 0, 0, confidence)
    psi_a = psi_matrix(va[pos], va[~pos])
    psi_b = psi_matrix(vb[pos], vb[~pos])
    pu, nu = unit[pos], unit[~pos]
    a, b = float(psi_a.mean()), float(psi_b.mean())
    k10, k01 = np.unique(pu).size, np.unique(nu).size
    if min(k10, k01) < MIN_UNITS:
        return Difference(a - b, nan, nan, a, b, *counts, 0, 0, confidence)
    var_a, var_b, cov = clustered_covariance(psi_a, psi_b, pu, nu)
    m, n = psi_a.shape
    scale_a, scale_b = design_effect(a, var_a, m, n), design_effect(b, var_b, m, n)
    r = float(
        difference_correlation(
            cov,
            max(var_a, float(newcombe_variance(a, k10, k01))),
            max(var_b, float(newcombe_variance(b, k10, k01))),
            min(k10, k01),
        )
    )

    sd = math.sqrt(max(0.0, var_a + var_b - 2 * cov))

    def bounds(zz: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        interval_a = score_bounds(np.full_like(zz, a), scale_a, m, n, zz, floor=(k10, k01))
        interval_b = score_bounds(np.full_like(zz, b), scale_b, m, n, zz, floor=(k10, k01))
        low, high = mover_bounds(a, b, interval_a, interval_b, r)
        low = np.maximum(-1.0, np.minimum(low, a - b - zz * sd))
        return low, np.minimum(1.0, np.maximum(high, a - b + zz * sd))

    (low,), (high,) = bounds(np.array([z]))
    p = mover_p_value(a - b, bounds)
    return Difference(
        a - b, float(low), float(high), a, b, *counts, 0, 0, confidence, p, r, DIFFERENCE_METHOD
    )


def mover_p_value(
    estimate: float,
    bounds: Callable[[NDArray[np.float64]], tuple[NDArray[np.float64], NDArray[np.float64]]],
) -> float:
    """One-sided p for ``H0: difference <= 0`` against ``> 0``: ``1 - Phi(z*)``, ``z*`` the
    first ``z`` (from 0) at which the low bound of the interval with critical value ``z``
    reaches 0; for an estimate below 0, ``Phi(z*)`` with ``z*`` where the high bound reaches 0;
    1/2 for an estimate of 0. ``bounds(z)`` gives the bounds for an array of ``z``."""
    if estimate == 0:
        return 0.5
    side = 0 if estimate > 0 else 1
    lo, hi = 0.0, _Z_MAX
    for _ in range(_P_ROUNDS):
        grid = np.linspace(lo, hi, _P_GRID)
        crossed = (bounds(grid)[side] <= 0) if side == 0 else (bounds(grid)[side] >= 0)
        if not crossed.any():
            lo = hi
            break
        first = int(np.argmax(crossed))
        lo, hi = float(grid[max(first - 1, 0)]), float(grid[first])
    z_star = (lo + hi) / 2
    tail = 0.5 * math.erfc(z_star / math.sqrt(2))
    return tail if side == 0 else 1 - tail


@dataclass(frozen=True)
class GMean:
    """g-mean^2 at a threshold chosen on selection rows, read on evaluation rows."""

    threshold: float
    selection_g_mean2: float
    tpr: float
    tnr: float
    g_mean2: float
    n_positive: int
    n_negative: int


def _rates(
    values: NDArray[np.float64], positive: NDArray[np.bool_], h: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    called = values[None, :] - h[:, None] >= 0
    tpr = called[:, positive].sum(1) / max(1, int(positive.sum()))
    tnr = (~called[:, ~positive]).sum(1) / max(1, int((~positive).sum()))
    return tpr, tnr


def g_mean_squared(
    selection_values: ArrayLike,
    selection_positive: ArrayLike,
    evaluation_values: ArrayLike,
    evaluation_positive: ArrayLike,
) -> GMean:
    """``TPR * TNR`` on the evaluation rows of "positive when ``x >= h``" (values oriented),
    ``h`` chosen on the selection rows.

    Candidates ``h``: the midpoints between adjacent distinct selection values, and one below
    the smallest and one above the largest (call all positive / all negative). ``h`` maximises
    the selection rows' ``TPR * TNR``; ties go to the lowest such ``h``. NaN values are left
    out; NaN throughout when a class is empty on either side.
    """
    sv = np.asarray(selection_values, dtype=float)
    sp = np.asarray(selection_positive, dtype=bool)
    ev = np.asarray(evaluation_values, dtype=float)
    ep = np.asarray(evaluation_positive, dtype=bool)
    sv, sp = sv[~np.isnan(sv)], sp[~np.isnan(sv)]
    ev, ep = ev[~np.isnan(ev)], ep[~np.isnan(ev)]
    nan = math.nan
    counts = (int(ep.sum()), int((~ep).sum()))
    if not (sp.any() and (~sp).any() and all(counts)):
        return GMean(nan, nan, nan, nan, nan, *counts)
    levels = np.unique(sv)
    candidates = np.concatenate(
        [[levels[0] - 1.0], (levels[:-1] + levels[1:]) / 2, [levels[-1] + 1.0]]
    )
    tpr, tnr = _rates(sv, sp, candidates)
    best = int(np.argmax(tpr * tnr))  # first maximiser: the lowest threshold
    h = float(candidates[best])
    [e_tpr], [e_tnr] = _rates(ev, ep, np.array([h]))
    return GMean(
        h, float(tpr[best] * tnr[best]), float(e_tpr), float(e_tnr), float(e_tpr * e_tnr), *counts
    )
