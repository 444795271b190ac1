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
import re
from collections import defaultdict
from collections.abc import Mapping
from typing import Any, Sequence

import numpy as np

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


REPLAY_SUFFIX = "_replay"
MAIN_KEYS = {
    "trace": ("task_score", "auc", "pass_at_first", "first_pass", "p0"),
    "selfcommit": ("task_score", "has_final", "uncommitted", "tau_0.8", "range_c", "c0"),
}
"""Value keys also reported per condition (``<key>/<condition>``)."""
GAP_KEYS = {"trace": ("auc", "pass_at_first"), "selfcommit": ("uncommitted", "tau_0.8", "range_c")}
"""Summaries whose own-minus-replay difference is a run metric (``replay_gap/<key>``)."""


def _metric_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)


def _nanmean(values: list[float]) -> float:
    arr = np.asarray([v for v in values if not math.isnan(v)], dtype=float)
    return float(arr.mean()) if arr.size else math.nan


def run_metrics(
    rows: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
    probe: str,
    condition_key: str = "condition",
) -> dict[str, float]:
    """The probe's run metrics from per-sample ``(score value, sample metadata)`` rows: the
    mean of every value key over the samples where it is defined (NaN left out); per condition
    (``<key>/<condition>``) for :data:`MAIN_KEYS`; with replay, ``replay_gap/<key>`` = mean over
    replayed samples of (own - replayed summary), overall and per condition; ``n_samples``."""
    out: dict[str, float] = {"n_samples": float(len(rows))}
    if not rows:
        return out
    keys = list(rows[0][0])
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for value, meta in rows:
        if condition_key in meta:
            groups[_metric_name(str(meta[condition_key]))].append(value)
    main = [k for k in MAIN_KEYS[probe] if k in keys]
    main += [f"{k}{REPLAY_SUFFIX}" for k in main if f"{k}{REPLAY_SUFFIX}" in keys]
    for key in keys:
        out[key] = _nanmean([float(v.get(key, math.nan)) for v, _ in rows])
    for key in main:
        for cond, values in groups.items():
            mean = _nanmean([float(v.get(key, math.nan)) for v in values])
            if not (key.endswith(REPLAY_SUFFIX) and math.isnan(mean)):
                out[f"{key}/{cond}"] = mean
    for key in GAP_KEYS[probe]:
        if f"{key}{REPLAY_SUFFIX}" not in keys:
            continue

        def gaps(values: list[dict[str, Any]], key: str = key) -> list[float]:
            return [float(v[key]) - float(v[f"{key}{REPLAY_SUFFIX}"]) for v in values]

        out[f"replay_gap/{key}"] = _nanmean(gaps([v for v, _ in rows]))
        for cond, values in groups.items():
            gap = _nanmean(gaps(values))
            if not math.isnan(gap):
                out[f"replay_gap/{key}/{cond}"] = gap
    return out
