"""Two-condition statistics over per-sample summaries, and small helpers shared by the studies.

Orientation: larger values are "negative-class-like" (for selfcommit: honest-like), so every
summary is used as it stands.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

TIE_TOLERANCE = 1e-9
"""Two values whose difference is at most this are equal (a tie) in every comparison of the
studies' statistics: the mean of shares over epochs or probes carries float rounding
(``(0.7 + 0.1) / 2`` is 0.39999999999999997, ``(0.6 + 0.2) / 2`` is 0.4), while any two
different shares of fewer than 10^4 draws, or trapezoid areas over the studies' fractions,
differ by far more."""


def tied(x: Any, y: Any) -> Any:
    """|x - y| <= :data:`TIE_TOLERANCE` (elementwise on arrays)."""
    return np.abs(np.asarray(x, dtype=float) - np.asarray(y, dtype=float)) <= TIE_TOLERANCE


def greater(x: Any, y: Any) -> Any:
    """x - y > :data:`TIE_TOLERANCE`: x exceeds y by more than rounding (elementwise)."""
    return np.asarray(x, dtype=float) - np.asarray(y, dtype=float) > TIE_TOLERANCE


def auroc(positive: Sequence[float], negative: Sequence[float]) -> float:
    """AUROC = P(X_pos > X_neg) + 0.5 P(X_pos = X_neg) (Mann-Whitney), over all
    (positive, negative) pairs of values, equal meaning within :data:`TIE_TOLERANCE`; NaN if
    a class is empty."""
    pos = np.asarray(positive, dtype=float)
    neg = np.asarray(negative, dtype=float)
    if pos.size == 0 or neg.size == 0:
        return float("nan")
    wins = greater(pos[:, None], neg[None, :]).sum()
    ties = tied(pos[:, None], neg[None, :]).sum()
    return float((wins + 0.5 * ties) / (pos.size * neg.size))


def auroc_tie_share(positive: Sequence[float], negative: Sequence[float]) -> float:
    """P(X_pos = X_neg): the share of (positive, negative) pairs of values that tie (within
    :data:`TIE_TOLERANCE`), i.e. the pairs :func:`auroc` counts as one half each; NaN if a class
    is empty."""
    pos = np.asarray(positive, dtype=float)
    neg = np.asarray(negative, dtype=float)
    if pos.size == 0 or neg.size == 0:
        return float("nan")
    return float(tied(pos[:, None], neg[None, :]).sum() / (pos.size * neg.size))


def paired_wins(a: Sequence[float], b: Sequence[float]) -> tuple[int, int, int]:
    """(wins, ties, n) over the n pairs (a_i, b_i): wins = #{a_i > b_i}, ties = #{a_i = b_i},
    equal meaning within :data:`TIE_TOLERANCE` (the losses are n - wins - ties)."""
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    return int(np.sum(greater(x, y))), int(np.sum(tied(x, y))), int(x.size)


def best_threshold_accuracy(positive: Sequence[float], negative: Sequence[float]) -> float:
    """max over thresholds h of the accuracy of "x >= h -> positive class" (x >= h within
    :data:`TIE_TOLERANCE`: a value that ties h is called positive).

    Thresholds range over every observed value and +inf (all called negative).
    """
    pos = np.asarray(positive, dtype=float)
    neg = np.asarray(negative, dtype=float)
    n = pos.size + neg.size
    if pos.size == 0 or neg.size == 0:
        return float("nan")
    thresholds = np.append(np.unique(np.concatenate([pos, neg])), np.inf)
    at_least = pos[None, :] - thresholds[:, None] >= -TIE_TOLERANCE
    below = greater(thresholds[:, None], neg[None, :])
    correct = at_least.sum(1) + below.sum(1)
    return float(correct.max() / n)


def median(values: Iterable[float]) -> float:
    """Median, NaN for no values."""
    arr = np.asarray(list(values), dtype=float)
    return float(np.median(arr)) if arr.size else float("nan")


def or_nan(v: Any) -> float:
    """``v`` as a float, NaN for None (strict JSON in logs writes NaN as null)."""
    return math.nan if v is None else float(v)


def select(
    table: Mapping[str, Any], keys: Iterable[str], keep_nan: bool | Collection[str] = True
) -> dict[str, float]:
    """``{k: float(table[k])}`` in the order of ``keys``. ``keep_nan=True``: every key, NaN
    where ``table`` lacks it (a metric's fixed key set); ``False``: NaN values and absent keys
    left out (a compact set shows no ``nan`` rows); a collection: its keys always there (NaN if
    absent, e.g. on the empty score list the live display computes metrics on), the others only
    when they are numbers."""
    out: dict[str, float] = {}
    for k in keys:
        kept = keep_nan if isinstance(keep_nan, bool) else k in keep_nan
        value = float(table.get(k, math.nan))
        if kept or not math.isnan(value):
            out[k] = value
    return out


def ratio(numerator: int | Fraction, denominator: int) -> float:
    """numerator / denominator as the double nearest the exact rational (so 1/5 is ``0.2``).

    Summaries of fractions of k are computed in integers and divided once here, instead of
    subtracting or averaging floats (``1.0 - 0.8`` is ``0.19999999999999996``).
    """
    if denominator == 0:
        raise ZeroDivisionError("ratio: denominator is 0")
    return float(Fraction(numerator) / denominator)


def mean_ratio(numerators: Sequence[int], denominator: int) -> float:
    """mean_i (numerators[i] / denominator), exactly: sum(numerators) / (n * denominator)."""
    if not numerators:
        return math.nan
    return ratio(sum(numerators), denominator * len(numerators))


def holm_adjusted(p_values: Sequence[float]) -> list[float]:
    """Holm (1979) step-down adjusted p-values, in the order given.

    Over the ``m`` p-values that are not NaN, sorted ``p_(1) <= ... <= p_(m)`` (ties kept in
    input order), the adjusted value of the ``i``-th smallest is

        p~_(i) = min(1, max_{j <= i} (m - j + 1) p_(j)).

    Rejecting every hypothesis with ``p~ <= alpha`` is Holm's step-down procedure, which keeps
    the family-wise error rate (the chance of any false rejection among the ``m``) at most
    ``alpha`` whatever the dependence between the tests (S. Holm, "A simple sequentially
    rejective multiple test procedure", Scand. J. Statist. 6:65-70, 1979). A NaN p-value (a
    test that could not be run) is returned as NaN and is not counted in the family ``m``.
    """
    values = [float(p) for p in p_values]
    for p in values:
        if not math.isnan(p) and not 0.0 <= p <= 1.0:
            raise ValueError(f"a p-value must lie in [0, 1], got {p}")
    defined = sorted(
        (i for i, p in enumerate(values) if not math.isnan(p)), key=lambda i: values[i]
    )
    m = len(defined)
    out = [math.nan] * len(values)
    running = 0.0
    for rank, i in enumerate(defined):
        running = max(running, (m - rank) * values[i])
        out[i] = min(1.0, running)
    return out
