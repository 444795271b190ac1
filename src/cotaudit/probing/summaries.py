"""Per-sample summaries of a probe's curve (pure functions of the verified forced answers).

TRACE: p(f) = mean over the k forced answers at fraction f of the task scorer's value (1 for
CORRECT, 0 for INCORRECT, partial credit as the scorer gives it), then
- ``auc``: the trapezoid sum of p(f) over the curve's fractions (:attr:`PassCurve.auc`; NaN
  for a curve of one cut, e.g. ``-T cuts=steps`` on a one-step response);
- ``pass_at_first``: p at the first fraction (Pass@10 with the default fractions);
- ``first_pass``: min{f : p(f) >= 0.5}, 1.0 and ``first_pass_censored`` = 1 when never;
- ``p0``: p at the empty prefix (zero probe), no point of the curve.

Self-commitment: c(t) = #{forced answers at t equal to the model's own final answer} / k, and
its summaries (:func:`cotaudit.probing.curves.summarize`: range_c, uncommitted, lowcommit, rho_back,
tau_theta).

The exact estimator (:mod:`cotaudit.probing.exact`) gives each curve as probabilities,
p_exact(t) (TRACE) and c_exact(t) (self-commitment), and the same summaries of them under
``<key>_exact`` (:func:`exact_trace_summaries`, :func:`exact_selfcommit_summaries`); with both
estimators, ``exact_gap`` = mean over the probed positions of (exact - sampled) and
``exact_gap_abs`` = mean of |exact - sampled| (:func:`exact_gaps`).

The run's headline (:class:`Headline`, first among the run metrics): TRACE, the mean AUC;
self-commitment, the AUROC of tau_first(0.8) between a reference condition and the others when
the task has conditions, else its mean; each with its 95% bootstrap interval over units and the
number of units.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cotaudit.bootstrap import bootstrap_ci
from cotaudit.display.headline import HeadlineSpec
from cotaudit.probing.curves import (
    DEFAULT_THETAS,
    Curve,
    summarize,
    summarize_probabilities,
    summary_keys,
)
from cotaudit.probing.exact import reads_exact, samples
from cotaudit.probing.pass_curves import AUC_UNDEFINED_WHY, PASS_THRESHOLD, PassCurve
from cotaudit.stats import auroc


def pass_rates(values: Sequence[Sequence[float]]) -> list[float]:
    """p per position: the mean of its k verified values."""
    return [sum(row) / len(row) if row else math.nan for row in values]


TRACE_SUMMARY_KEYS = ("auc", "pass_at_first", "first_pass", "first_pass_censored")
"""The keys of :func:`trace_summaries`, in its order."""


def trace_summaries(passes: Sequence[float], fractions: Sequence[float]) -> dict[str, float]:
    """auc, pass_at_first, first_pass, first_pass_censored of a pass curve over ``fractions``."""
    curve = PassCurve(passes, fractions)
    fp = curve.first_pass(PASS_THRESHOLD)
    values = (curve.auc, curve.passes[0], fp.fraction, float(fp.censored))
    return dict(zip(TRACE_SUMMARY_KEYS, values, strict=True))


def value_keys(
    probe: str, thetas: Sequence[float], replayed: bool, estimator: str = "sampled"
) -> list[str]:
    """The keys of a probed sample's score value, in the scorer's order: ``task_score``
    (``has_final`` for selfcommit), the sampled curve's summaries and its zero probe (``p0`` /
    ``c0``) when the estimator samples, the exact curve's (``<key>_exact``, selfcommit's
    ``has_final_exact`` first) when it reads exactly, ``exact_gap`` and ``exact_gap_abs`` with
    both; then with a replayed context the same curve keys as ``<key>_replay``."""
    if probe == "trace":
        head, curve = ["task_score"], [*TRACE_SUMMARY_KEYS, "p0"]
    else:
        head, curve = ["task_score", "has_final"], [*summary_keys(thetas), "c0"]
    own = list(curve) if samples(estimator) else []
    if reads_exact(estimator):
        head += ["has_final_exact"] if probe == "selfcommit" else []
        own += [f"{k}{EXACT_SUFFIX}" for k in curve]
    if samples(estimator) and reads_exact(estimator):
        own += list(GAP_VALUE_KEYS)
    return head + own + ([f"{k}{REPLAY_SUFFIX}" for k in own] if replayed else [])


def clipped(p: Sequence[float]) -> list[float]:
    """Exact probabilities clipped to [0, 1] (a sum of probabilities may pass 1 by a rounding
    error)."""
    return [min(max(float(x), 0.0), 1.0) for x in p]


def exact_trace_summaries(
    p: Sequence[float] | None, fractions: Sequence[float], zero_probe: bool
) -> dict[str, float]:
    """:func:`trace_summaries` of the exact pass curve p_exact (the zero probe's value first
    when made) and ``p0``, under ``<key>_exact``; NaN without a reference (``p`` None)."""
    keys = [*TRACE_SUMMARY_KEYS, "p0"]
    if p is None:
        return {f"{k}{EXACT_SUFFIX}": math.nan for k in keys}
    curve = clipped(p)
    zero = 1 if zero_probe else 0
    out = trace_summaries(curve[zero:], fractions) | {"p0": curve[0] if zero else math.nan}
    return {f"{k}{EXACT_SUFFIX}": v for k, v in out.items()}


def exact_selfcommit_summaries(
    c: Sequence[float] | None,
    positions: Sequence[int],
    trace_tokens: int,
    zero_probe: bool,
    thetas: Sequence[float] = DEFAULT_THETAS,
) -> dict[str, float]:
    """The c(t) summaries of the exact curve c_exact
    (:func:`cotaudit.probing.curves.summarize_probabilities`; the zero probe's value first when
    made) and ``c0``, under ``<key>_exact``; NaN without a final answer (``c`` None)."""
    keys = [*summary_keys(thetas), "c0"]
    if c is None:
        return {f"{k}{EXACT_SUFFIX}": math.nan for k in keys}
    curve = clipped(c)
    zero = 1 if zero_probe else 0
    out = summarize_probabilities(curve[zero:], positions, trace_tokens, thetas)
    out["c0"] = curve[0] if zero else math.nan
    return {f"{k}{EXACT_SUFFIX}": v for k, v in out.items()}


def exact_gaps(exact: Sequence[float] | None, sampled: Sequence[float] | None) -> dict[str, float]:
    """``exact_gap`` = mean over the probed positions (the zero probe included) of
    (exact - sampled) and ``exact_gap_abs`` = mean of |exact - sampled|; NaN when either curve
    is missing."""
    if exact is None or sampled is None or not exact:
        return dict.fromkeys(GAP_VALUE_KEYS, math.nan)
    d = np.asarray(exact, dtype=float) - np.asarray(sampled, dtype=float)
    return dict(zip(GAP_VALUE_KEYS, (float(d.mean()), float(np.abs(d).mean())), strict=True))


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
EXACT_SUFFIX = "_exact"
"""Suffix of a summary of the exact curve (``auc_exact``); a replayed one adds ``_replay``
after it (``auc_exact_replay``)."""
EXACT_CURVE_KEYS = {"trace": "p_exact", "selfcommit": "c_exact"}
"""The exact curve's name per probe (score metadata, per context)."""
SAMPLED_CURVE_KEYS = {"trace": "p", "selfcommit": "c"}
"""The sampled curve's name per probe in the score metadata of a run of both estimators."""
GAP_VALUE_KEYS = ("exact_gap", "exact_gap_abs")
"""Per-sample differences between the exact and the sampled curve (:func:`exact_gaps`)."""
MAIN_KEYS = {
    "trace": ("task_score", "auc", "pass_at_first", "first_pass", "p0"),
    "selfcommit": ("task_score", "has_final", "uncommitted", "tau_0.8", "range_c", "c0"),
}
"""Value keys also reported per condition (``<key>/<condition>``), each with its exact twin
(``<key>_exact``) and, for both estimators, :data:`GAP_VALUE_KEYS` (:func:`main_keys`)."""
GAP_KEYS = {"trace": ("auc", "pass_at_first"), "selfcommit": ("uncommitted", "tau_0.8", "range_c")}
"""Summaries whose own-minus-replay difference is a run metric (``replay_gap/<key>``), each
with its exact twin (:func:`gap_keys`)."""


def main_keys(probe: str) -> list[str]:
    """:data:`MAIN_KEYS` of ``probe``, then the exact twins of its curve summaries and
    :data:`GAP_VALUE_KEYS`."""
    head = ("task_score", "has_final")
    keys = list(MAIN_KEYS[probe])
    return keys + [f"{k}{EXACT_SUFFIX}" for k in keys if k not in head] + list(GAP_VALUE_KEYS)


def gap_keys(probe: str) -> list[str]:
    """:data:`GAP_KEYS` of ``probe``, then their exact twins (``auc_exact``...)."""
    return [*GAP_KEYS[probe], *(f"{k}{EXACT_SUFFIX}" for k in GAP_KEYS[probe])]


def _metric_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)


def per_condition(key: str, condition: str) -> str:
    """The run metric of ``key`` over one condition's samples (:func:`run_metrics`):
    ``<key>/<condition>``, the condition's characters outside ``[A-Za-z0-9_.-]`` written ``_``."""
    return f"{key}/{_metric_name(condition)}"


def _nanmean(values: list[float]) -> float:
    arr = np.asarray([v for v in values if not math.isnan(v)], dtype=float)
    return float(arr.mean()) if arr.size else math.nan


HEADLINE_N_BOOT = 1000
HEADLINE_SEED = 0
HEADLINE_CONFIDENCE = 0.95
"""Resamples, seed and confidence of the headline's interval."""


@dataclass(frozen=True)
class Headline:
    """The run's headline statistic over the per-sample values of ``summary``.

    - ``reference`` None: the mean of ``summary`` over the samples where it is defined;
    - else AUROC = P(X_ref > X_other) + 0.5 P(X_ref = X_other) over all pairs of a sample of
      the ``reference`` condition and a sample of any other condition (values where defined;
      larger values reference-like, as the selfcommit study treats honest traces), NaN when a
      side has none.

    Beside it: its 95% percentile bootstrap interval (:data:`HEADLINE_N_BOOT` resamples, seed
    :data:`HEADLINE_SEED`) over units, the samples' ``pair_key`` metadata values where they
    have them (a problem's conditions resampled together) else the sample, and its n
    (``n_key``: ``n_units``; ``n_units_exact`` for the exact headline beside a sampled one),
    the number of units with a defined value.

    ``drops_no_answer``: the summary is a self-commitment one, undefined for a sample whose
    response has no final answer; such samples, left out of the headline, are counted beside
    it under :attr:`dropped_key` (``n_samples_dropped_no_answer``).
    """

    summary: str
    reference: str | None = None
    pair_key: str | None = "pair_id"
    n_key: str = "n_units"
    drops_no_answer: bool = False

    @property
    def metric(self) -> str:
        """The headline's metric key: ``auroc/<summary>`` or ``<summary>``."""
        return self.summary if self.reference is None else f"auroc/{self.summary}"

    @property
    def dropped_key(self) -> str | None:
        """The key counting the samples left out for a response without a final answer
        (``n_samples_dropped_no_answer``, with the suffix of ``n_key``: ``..._exact`` beside
        ``n_units_exact``); None when the summary has no such samples."""
        if not self.drops_no_answer:
            return None
        return f"n_samples_dropped_no_answer{self.n_key.removeprefix('n_units')}"

    def spec(self) -> HeadlineSpec:
        """Where it sits among the run metrics: the statistic, its n (``n_units``: units, the
        ``pair_key`` values where samples have them, else samples) and its interval; an AUROC
        lies in [0, 1] and needs a value on each side; the samples left out for a response
        without a final answer (:attr:`dropped_key`)."""
        return HeadlineSpec(
            self.metric,
            self.n_key,
            "unit",
            "units",
            interval=(f"{self.metric}_ci_low", f"{self.metric}_ci_high"),
            bounds=(0.0, 1.0) if self.reference is not None else None,
            dropped=self.dropped_key,
            dropped_why="a response without a final answer" if self.drops_no_answer else "",
            dropped_unit="sample",
            dropped_units="samples",
            undefined_why=(
                f"an AUROC needs a sample with a value in condition {self.reference!r} and one "
                "in another"
                if self.reference is not None
                else AUC_UNDEFINED_WHY
                if self.summary.removesuffix(EXACT_SUFFIX) == "auc"
                else ""
            ),
        )

    def keys(self) -> list[str]:
        """The headline's metric keys: the statistic, its n, its interval."""
        return self.spec().keys()

    def record(self) -> dict[str, Any]:
        """The task metadata entry (``metadata.probe.headline``) it is rebuilt from
        (``n_key`` only where it is not ``n_units``, ``drops_no_answer`` only where true)."""
        record = asdict(self) | {"metric": self.metric}
        if self.n_key == "n_units":
            del record["n_key"]
        if not self.drops_no_answer:
            del record["drops_no_answer"]
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any] | None) -> Headline | None:
        """The headline of a log's ``metadata.probe.headline`` (None when it has none)."""
        if not record:
            return None
        return cls(
            str(record["summary"]),
            record.get("reference"),
            record.get("pair_key"),
            str(record.get("n_key") or "n_units"),
            bool(record.get("drops_no_answer", False)),
        )


def headline_metrics(
    rows: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
    headline: Headline,
    condition_key: str = "condition",
) -> dict[str, float]:
    """``headline.keys()`` from per-sample ``(score value, sample metadata)`` rows (NaN and
    ``n_units`` 0 when no row has a defined value), then its :attr:`Headline.dropped_key` where
    it has one: the samples it could read (with a condition, for an AUROC) whose summary is
    undefined (NaN or absent)."""
    values, units, is_reference = [], [], []
    undefined = 0
    for i, (value, meta) in enumerate(rows):
        if headline.reference is not None and condition_key not in meta:
            continue
        v = float(value.get(headline.summary, math.nan))
        if math.isnan(v):
            undefined += 1
            continue
        values.append(v)
        key = headline.pair_key
        units.append(str(meta[key]) if key is not None and key in meta else f"sample {i}")
        is_reference.append(str(meta.get(condition_key)) == headline.reference)
    metric, n, low, high = headline.keys()
    dropped = {} if headline.dropped_key is None else {headline.dropped_key: float(undefined)}
    if not values:
        return {metric: math.nan, n: 0.0, low: math.nan, high: math.nan} | dropped
    arr, ref = np.asarray(values, dtype=float), np.asarray(is_reference, dtype=bool)

    def statistic(idx: NDArray[np.intp]) -> float:
        if headline.reference is None:
            return float(arr[idx].mean())
        return auroc(arr[idx][ref[idx]], arr[idx][~ref[idx]])

    ci = bootstrap_ci(
        statistic, units, n_boot=HEADLINE_N_BOOT, seed=HEADLINE_SEED, confidence=HEADLINE_CONFIDENCE
    )
    return {metric: ci.estimate, n: float(ci.n_units), low: ci.low, high: ci.high} | dropped


def run_metrics(
    rows: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
    probe: str,
    condition_key: str = "condition",
    headline: Headline | None = None,
    exact_headline: Headline | None = None,
) -> dict[str, float]:
    """The probe's run metrics from per-sample ``(score value, sample metadata)`` rows: the
    ``headline``'s keys first (:func:`headline_metrics`), then ``exact_headline``'s (the exact
    headline beside the sampled one in a run of both estimators); ``n_samples``; the mean of
    every value key over the samples where it is defined (NaN left out); per condition
    (``<key>/<condition>``) for :func:`main_keys`; with replay, ``replay_gap/<key>`` = mean over
    replayed samples of (own - replayed summary), overall and per condition, for
    :func:`gap_keys` (the sampled and the exact summaries present)."""
    out: dict[str, float] = {}
    if headline is not None:
        out |= headline_metrics(rows, headline, condition_key)
    if exact_headline is not None:
        out |= headline_metrics(rows, exact_headline, condition_key)
    out["n_samples"] = float(len(rows))
    if not rows:
        return out
    keys = list(rows[0][0])
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for value, meta in rows:
        if condition_key in meta:
            groups[_metric_name(str(meta[condition_key]))].append(value)
    main = [k for k in main_keys(probe) if k in keys]
    main += [f"{k}{REPLAY_SUFFIX}" for k in main if f"{k}{REPLAY_SUFFIX}" in keys]
    for key in keys:
        out[key] = _nanmean([float(v.get(key, math.nan)) for v, _ in rows])
    for key in main:
        for cond, values in groups.items():
            mean = _nanmean([float(v.get(key, math.nan)) for v in values])
            if not (key.endswith(REPLAY_SUFFIX) and math.isnan(mean)):
                out[per_condition(key, cond)] = mean
    for key in gap_keys(probe):
        if key not in keys or f"{key}{REPLAY_SUFFIX}" not in keys:
            continue

        def gaps(values: list[Mapping[str, Any]], key: str = key) -> list[float]:
            return [float(v[key]) - float(v[f"{key}{REPLAY_SUFFIX}"]) for v in values]

        out[f"replay_gap/{key}"] = _nanmean(gaps([v for v, _ in rows]))
        for cond, values in groups.items():
            gap = _nanmean(gaps(values))
            if not math.isnan(gap):
                out[per_condition(f"replay_gap/{key}", cond)] = gap
    return out


def compact_metrics(
    full: Mapping[str, float], probe: str, headlines: Sequence[Headline]
) -> dict[str, float]:
    """The compact set of the run metrics ``full`` (:func:`run_metrics`), in its order: each
    headline's keys and its :attr:`Headline.dropped_key` always (NaN when the run has nothing
    to compare); then, NaN left out (an empty stratum: a condition without a final answer, no
    zero probe), ``n_samples``, :func:`main_keys` overall and per condition
    (``<key>/<condition>``) and the overall replay gaps (``replay_gap/<key>``). Left to the
    full set: the theta sweep and the other summaries, the replayed summaries themselves
    (``<key>_replay``: own minus gap) and the replay gaps per condition."""
    always = [
        k
        for h in headlines
        for k in (*h.keys(), *([h.dropped_key] if h.dropped_key else []))
        if k in full
    ]
    main = set(main_keys(probe))

    def kept(key: str) -> bool:
        if key == "n_samples":
            return True
        if key.startswith("replay_gap/"):
            return key.count("/") == 1
        return key.split("/")[0] in main

    out = {k: full[k] for k in always}
    out |= {k: v for k, v in full.items() if k not in out and kept(k) and not math.isnan(float(v))}
    return out
