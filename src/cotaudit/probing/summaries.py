"""Per-sample summaries of a probe's curve (pure functions of the verified forced answers).

TRACE: p(f) = mean over the k forced answers at fraction f of the task scorer's value (1 for
CORRECT, 0 for INCORRECT, partial credit as the scorer gives it), then
- ``auc``: the trapezoid sum of p(f) over the curve's fractions (:func:`trace_auc`);
- ``pass_at_first``: p at the first fraction (Pass@10 with the default fractions);
- ``first_pass``: min{f : p(f) >= 0.5}, 1.0 and ``first_pass_censored`` = 1 when never;
- ``p0``: p at the empty prefix (zero probe), no point of the curve.

Self-commitment: c(t) = #{forced answers at t equal to the model's own final answer} / k, and
its summaries (:func:`cotaudit.curves.summarize`: range_c, uncommitted, lowcommit, rho_back,
tau_theta).
"""

from __future__ import annotations

import math
from typing import Sequence

from cotaudit.curves import DEFAULT_THETAS, Curve, summarize, summary_keys
from cotaudit.pass_curves import PASS_THRESHOLD, first_pass, trace_auc

TRACE_KEYS: tuple[str, ...] = ("auc", "pass_at_first", "first_pass", "first_pass_censored")


def pass_rates(values: Sequence[Sequence[float]]) -> list[float]:
    """p per position: the mean of its k verified values."""
    return [sum(row) / len(row) if row else math.nan for row in values]


def trace_summaries(passes: Sequence[float], fractions: Sequence[float]) -> dict[str, float]:
    """auc, pass_at_first, first_pass, first_pass_censored of a pass curve over ``fractions``."""
    fp = first_pass(passes, fractions, PASS_THRESHOLD)
    return {
        "auc": trace_auc(passes, fractions),
        "pass_at_first": float(passes[0]),
        "first_pass": fp.fraction,
        "first_pass_censored": float(fp.censored),
    }


def selfcommit_summaries(
    positions: Sequence[int],
    trace_tokens: int,
    matches: Sequence[int] | None,
    k: int,
    thetas: Sequence[float] = DEFAULT_THETAS,
) -> dict[str, float]:
    """The c(t) summaries; all NaN when there is no final answer to commit to (``matches``
    None)."""
    if matches is None:
        return dict.fromkeys(summary_keys(thetas), math.nan)
    return summarize(Curve(list(positions), trace_tokens, list(matches), k), thetas)
