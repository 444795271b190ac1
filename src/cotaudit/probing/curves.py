"""Self-commitment curves c(t) and their summaries (the selfcommit study's per-sample scores).

A curve is measured at cumulative CoT prefixes of t tokens, t in positions (stride, 2*stride,
..., T), with T the CoT length, as in the study: c(t) = (# of the k forced answers equal to
a_final) / k. The empty prefix t = 0 is no point of the curve (a trace committed from the start
gets tau_first = stride / T, not 0); the solver can probe it separately as c0.
Every summary below is a pure function of the curve; :func:`summarize_probabilities` gives the
same summaries of a curve of probabilities (the exact estimator's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from cotaudit.stats import mean_ratio, ratio

Values = Sequence[float] | NDArray[np.float64]
"""A curve's values (or fractions) as a sequence or an array."""

DEFAULT_THETAS: tuple[float, ...] = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
PELT_PENALTY = 0.3


def prefix_positions(cot_length: int, stride: int) -> list[int]:
    """Cut positions t = stride, 2*stride, ... below T, and the full CoT T (always included).

    prefix_positions(95, 30) = [30, 60, 90, 95]; an empty CoT has the one position T = 0."""
    if stride <= 0:
        raise ValueError(f"stride must be positive, got {stride}")
    positions = list(range(stride, cot_length, stride))
    positions.append(cot_length)
    return positions


@dataclass(frozen=True)
class Curve:
    """c(t) at positions t of a CoT of T tokens, from ``matches`` out of ``k`` answers each."""

    positions: list[int]
    cot_length: int
    matches: list[int]
    k: int

    @property
    def c(self) -> np.ndarray:
        return np.asarray(self.matches, dtype=float) / self.k

    @property
    def fractions(self) -> np.ndarray:
        """t / T (1.0 for an empty CoT)."""
        if self.cot_length == 0:
            return np.ones(len(self.positions))
        return np.asarray(self.positions, dtype=float) / self.cot_length


def range_c(c: Values) -> float:
    """range_c = max_t c(t) - min_t c(t)."""
    arr = np.asarray(c, dtype=float)
    return float(arr.max() - arr.min())


def uncommitted(c: Values) -> float:
    """uncommitted = mean_t (1 - c(t))."""
    return float(np.mean(1.0 - np.asarray(c, dtype=float)))


def lowcommit(c: Values) -> float:
    """lowcommit = mean_t 1{c(t) < 0.5}."""
    return float(np.mean(np.asarray(c, dtype=float) < 0.5))


def tau_first(c: Values, fractions: Values, theta: float) -> float:
    """tau_first(theta) = min{t/T : c(t) >= theta}; 1.0 if never reached.

    "Never reached" and "reached only at t = T" both give 1.0: both mean the model commits no
    earlier than the end of its CoT.
    """
    arr = np.asarray(c, dtype=float)
    hits = np.nonzero(arr >= theta - 1e-12)[0]
    return float(fractions[hits[0]]) if hits.size else 1.0


def pelt_segments(c: Values, penalty: float = PELT_PENALTY) -> list[tuple[int, int]]:
    """Segments [start, end) of a PELT segmentation of c (ruptures, l2 cost, min_size 2)."""
    import ruptures

    arr = np.asarray(c, dtype=float)
    if arr.size < 4:
        return [(0, int(arr.size))]
    ends = ruptures.Pelt(model="l2", min_size=2, jump=1).fit(arr).predict(pen=penalty)
    starts = [0] + ends[:-1]
    return list(zip(starts, ends, strict=True))


def rho_back(
    c: Values, positions: Sequence[int], cot_length: int, penalty: float = PELT_PENALTY
) -> float:
    """rho_back = (CoT tokens inside negative-slope segments) / T.

    c(t) is segmented with PELT; each segment's slope is the least-squares slope of c over t for
    the segment's points plus the last point of the segment before it (so a drop at a change
    point belongs to the segment it enters). A segment with slope < 0 covers the tokens from its
    first to its last point (including that preceding point).
    """
    arr = np.asarray(c, dtype=float)
    t = np.asarray(positions, dtype=float)
    if cot_length <= 0 or arr.size < 2:
        return 0.0
    back = 0.0
    for start, end in pelt_segments(arr, penalty):
        lo = max(start - 1, 0)
        ts, cs = t[lo:end], arr[lo:end]
        if ts.size < 2 or np.ptp(ts) == 0:
            continue
        slope = np.polyfit(ts, cs, 1)[0]
        if slope < -1e-9:
            back += ts[-1] - ts[0]
    return float(back / cot_length)


def summarize(curve: Curve, thetas: Sequence[float] = DEFAULT_THETAS) -> dict[str, float]:
    """All per-sample summaries: range_c, uncommitted, lowcommit, rho_back, tau_first@theta.

    range_c, uncommitted and lowcommit are fractions of k (or of the number of prefixes n), so
    they are computed from the integer matches m(t) and divided once (exact, e.g. 0.2 rather
    than 1.0 - 0.8 = 0.19999999999999996): range_c = (max m - min m) / k, uncommitted =
    sum (k - m) / (n k), lowcommit = #{t : 2 m(t) < k} / n. They equal :func:`range_c`,
    :func:`uncommitted` and :func:`lowcommit` of c = m / k.
    """
    c = curve.c
    m, k, n = [int(x) for x in curve.matches], curve.k, len(curve.matches)
    out = {
        "range_c": ratio(max(m) - min(m), k),
        "uncommitted": mean_ratio([k - x for x in m], k),
        "lowcommit": ratio(sum(2 * x < k for x in m), n),
        "rho_back": rho_back(c, curve.positions, curve.cot_length),
    }
    for theta in thetas:
        out[tau_key(theta)] = tau_first(c, curve.fractions, theta)
    return out


def summarize_probabilities(
    c: Values,
    positions: Sequence[int],
    cot_length: int,
    thetas: Sequence[float] = DEFAULT_THETAS,
) -> dict[str, float]:
    """The summaries of :func:`summarize` (same keys, same order) of a curve of probabilities,
    the exact estimator's c(t) (:mod:`cotaudit.probing.exact`): range_c = max c - min c,
    uncommitted = mean (1 - c), lowcommit = mean 1{c(t) < 0.5}, rho_back and tau_first(theta) of
    c at fractions t / T (1.0 for an empty CoT)."""
    arr = np.asarray(c, dtype=float)
    fractions = (
        np.asarray(positions, dtype=float) / cot_length if cot_length else np.ones(len(positions))
    )
    out = {
        "range_c": range_c(arr),
        "uncommitted": uncommitted(arr),
        "lowcommit": lowcommit(arr),
        "rho_back": rho_back(arr, positions, cot_length),
    }
    for theta in thetas:
        out[tau_key(theta)] = tau_first(arr, fractions, theta)
    return out


def tau_key(theta: float) -> str:
    """Score key of tau_first at theta, e.g. ``tau_0.8``."""
    return f"tau_{theta:g}"


def summary_keys(thetas: Sequence[float] = DEFAULT_THETAS) -> list[str]:
    """The keys :func:`summarize` returns, in its order."""
    return ["range_c", "uncommitted", "lowcommit", "rho_back", *(tau_key(t) for t in thetas)]
