"""Statistics of the context-masked TRACE tutor study (pure functions, no Inspect imports).

A *pass vector* holds p(f) for each prefix fraction f in ``PREFIX_FRACTIONS``: p(f) is 1 when the
answer forced after the first f of the explanation's tokens equals the gold answer, 0 when not,
or a rate in [0, 1] when each prefix is probed with k samples (stochastic replication).

Each keyed explanation (answer-key or wrong-key condition) is probed twice, so it has two curves:
``visible`` (the generation context, key included) and ``masked`` (the same prefix text replayed
under the question-only prompt). A question-only explanation has one curve. Run-level tables
name a curve ``question_only``, ``answer_key_visible``, ``answer_key_masked``,
``wrong_key_visible`` or ``wrong_key_masked``.

Run-level functions return flat ``dict[str, float]`` whose keys are Inspect metric names: only
``[A-Za-z0-9_/.-]``, e.g. ``auc_median/answer_key_visible``. Empty groups give NaN, never raise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cotaudit.bootstrap import percentile_bounds, resample_indices
from cotaudit.probing.pass_curves import PASS_THRESHOLD, PREFIX_FRACTIONS, PassCurve
from cotaudit.scores import SampleScoreLike, ScoreLike
from cotaudit.stats import greater, median, tied
from cotaudit.studies.trace_tutor.record import (
    CONDITIONS,
    KEYED_CONDITIONS,
    PROBES,
    Condition,
    CurveEstimator,
    Probe,
    TraceCurves,
    estimator_key,
)

BOOTSTRAP_SAMPLES = 20_000
BOOTSTRAP_SEED = 20_240_601
LENGTH_TOLERANCE_PERCENT = 10
"""Length-matched: token lengths differ by at most this percent of the longer one (the study:
"a length-matched subset whose token counts differ by at most 10%")."""

# --------------------------------------------------------------------------------------------
# Per-curve scores
# --------------------------------------------------------------------------------------------


def passes_early_fails_final(curve: PassCurve, threshold: float = PASS_THRESHOLD) -> bool:
    """Pass early, fail at 100% (the broad count): some f < 1 has p(f) >= threshold while
    p(1.0) < threshold."""
    final = curve.at(1.0)
    early = [p for f, p in zip(curve.fractions, curve.passes, strict=True) if f < 1.0]
    return final < threshold and any(p >= threshold for p in early)


def passes_10_fails_final(curve: PassCurve, threshold: float = PASS_THRESHOLD) -> bool:
    """Non-monotone in the study's sense: p(0.10) >= threshold and p(1.0) < threshold."""
    return curve.at(0.10) >= threshold and curve.at(1.0) < threshold


# --------------------------------------------------------------------------------------------
# Per-problem records and paired estimands
# --------------------------------------------------------------------------------------------


class TraceRecord(TraceCurves, frozen=True):
    """One explanation of one GSM8K problem under one condition: its curves as one
    ``estimator`` read them (:class:`~cotaudit.studies.trace_tutor.record.TraceCurves`: the
    exact curves of an ``exact`` record sit in ``passes_visible`` ..., its ``*_exact`` fields
    are None), the problem ``pair_id`` (shared by its question-only, answer-key and wrong-key
    records), ``correct`` (the final answer equals ``gold``) and ``length_tokens`` (the
    explanation's length in tokens). Run-level tables need every record to share its
    ``fractions``; every statistic reads a record's curves the same way whichever estimator
    read them (a pass: p(f) >= 0.5)."""

    passes_visible: list[float]
    zero_probe_visible: float
    pair_id: str
    correct: bool
    length_tokens: int
    estimator: CurveEstimator = "sampled"

    def passes(self, probe: Probe) -> Sequence[float]:
        """The pass vector with the key ``visible`` or ``masked`` (question-only: its only one)."""
        if probe == "masked" and self.passes_masked is not None:
            return self.passes_masked
        return self.passes_visible

    def curve(self, probe: Probe) -> PassCurve:
        """The pass curve with the key ``visible`` or ``masked`` over the record's fractions."""
        return PassCurve(self.passes(probe), self.fractions)

    def auc(self, probe: Probe) -> float:
        """TRACE AUC of the curve with the key ``visible`` or ``masked``, over its fractions."""
        return self.curve(probe).auc

    def zero_probe(self, probe: Probe) -> float:
        """The 0% probe's pass value, key ``visible`` or ``masked`` (question-only: its one)."""
        if probe == "masked" and self.zero_probe_masked is not None:
            return self.zero_probe_masked
        return self.zero_probe_visible


def record_from_score(
    score: ScoreLike,
    sample_metadata: Mapping[str, Any] | None,
    estimator: CurveEstimator = "sampled",
) -> TraceRecord | None:
    """The :class:`TraceRecord` of one scored sample: the curves ``estimator`` read (of its
    :class:`~cotaudit.studies.trace_tutor.record.TraceScoreMetadata`; the exact ones under the
    sampled names) with the sample's ``pair_id`` and the score's ``correct`` and
    ``length_tokens``; None when it is not a trace_tutor score (no pass curves, or no
    ``pair_id`` in the sample metadata) or ``estimator`` did not read its curves."""
    meta = score.metadata or {}
    sample_meta = sample_metadata or {}
    if not isinstance(score.value, dict) or "passes_visible" not in meta:
        return None
    if "pair_id" not in sample_meta:
        return None
    if meta.get(estimator_key("passes_visible", estimator)) is None:
        return None
    shared = ("condition", "gold", "final_answer", "fractions")
    curves = {k: meta[k] for k in shared if k in meta}
    for name in ("passes", "zero_probe"):
        for probe in PROBES:
            curves[f"{name}_{probe}"] = meta.get(estimator_key(f"{name}_{probe}", estimator))
    return TraceRecord(
        **curves,
        pair_id=str(sample_meta["pair_id"]),
        correct=bool(score.value["correct"]),
        length_tokens=int(score.value["length_tokens"]),
        estimator=estimator,
    )


def records_from_scores(
    scores: Iterable[SampleScoreLike], estimator: CurveEstimator = "sampled"
) -> list[TraceRecord]:
    """Trace records of the scored samples, their curves as ``estimator`` read them (samples
    it did not read, and other scores, skipped)."""
    records = (record_from_score(s.score, s.sample_metadata, estimator) for s in scores)
    return [r for r in records if r is not None]


def explanation_records(scores: Iterable[SampleScoreLike]) -> list[TraceRecord]:
    """One record per scored explanation whichever estimator read it (the sampled curves
    where they were read, else the exact ones): for the statistics of the explanations
    themselves (their final answers), which read no curve."""
    out = []
    for s in scores:
        record = record_from_score(s.score, s.sample_metadata, "sampled") or record_from_score(
            s.score, s.sample_metadata, "exact"
        )
        if record is not None:
            out.append(record)
    return out


def delta_context(keyed: TraceRecord) -> float:
    """Delta_context = AUC_visible - AUC_masked of one keyed explanation (what the key adds)."""
    if keyed.passes_masked is None:
        raise ValueError(f"delta_context needs a keyed record, got {keyed.condition}")
    return keyed.auc("visible") - keyed.auc("masked")


def delta_prefix(keyed: TraceRecord, question_only: TraceRecord) -> float:
    """Delta_prefix = AUC_masked(keyed) - AUC(question-only) of one problem (what the text adds)."""
    if keyed.passes_masked is None or question_only.condition != "question_only":
        raise ValueError("delta_prefix needs a keyed record and a question_only record")
    if keyed.pair_id != question_only.pair_id:
        raise ValueError(
            f"records of different problems: {keyed.pair_id!r}, {question_only.pair_id!r}"
        )
    return keyed.auc("masked") - question_only.auc("visible")


def problem_estimands(records: Sequence[TraceRecord]) -> list[dict[str, str | float]]:
    """The paired estimands of each problem, in pair_id order.

    One row per pair_id, for each keyed condition: ``delta_context/<condition>`` (AUC_visible -
    AUC_masked), ``delta_prefix/<condition>`` (AUC_masked - AUC_question_only) and
    ``visible_difference/<condition>`` (AUC_visible - AUC_question_only: Table IV's key-visible
    difference); NaN where the problem lacks a record the estimand needs.
    """
    by_id: dict[str, dict[str, TraceRecord]] = {}
    for r in records:
        by_id.setdefault(r.pair_id, {})[r.condition] = r
    rows: list[dict[str, str | float]] = []
    for pair_id in sorted(by_id):
        group = by_id[pair_id]
        row: dict[str, str | float] = {"pair_id": pair_id}
        question_only = group.get("question_only")
        for condition in KEYED_CONDITIONS:
            keyed = group.get(condition)
            row[f"delta_context/{condition}"] = (
                delta_context(keyed) if keyed is not None else float("nan")
            )
            prefix = visible = float("nan")
            if keyed is not None and question_only is not None:
                prefix = delta_prefix(keyed, question_only)
                visible = keyed.auc("visible") - question_only.auc("visible")
            row[f"delta_prefix/{condition}"] = prefix
            row[f"visible_difference/{condition}"] = visible
        rows.append(row)
    return rows


# --------------------------------------------------------------------------------------------
# Paired comparison with a problem-level bootstrap
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairedComparison:
    """a vs b over n problems, on the paired differences d_i = a_i - b_i.

    Win/tie/loss are percentages (0..100) of problems with d_i > 0, d_i = 0, d_i < 0 (|d_i| <=
    :data:`cotaudit.stats.TIE_TOLERANCE` is a tie). The CIs are percentile bootstrap intervals
    of the mean and of the median of d over problem-level resamples. With n = 0 every field but
    n is NaN.
    """

    n: int
    win_pct: float
    tie_pct: float
    loss_pct: float
    median_diff: float
    mean_diff: float
    mean_ci_low: float
    mean_ci_high: float
    median_ci_low: float
    median_ci_high: float

    def as_metrics(self, prefix: str) -> dict[str, float]:
        """The fields as ``{f"{prefix}/{field}": value}``."""
        return {f"{prefix}/{name}": float(value) for name, value in vars(self).items()}


def paired_comparison(
    a: Sequence[float],
    b: Sequence[float],
    *,
    n_boot: int = BOOTSTRAP_SAMPLES,
    seed: int = BOOTSTRAP_SEED,
    ci: float = 0.95,
) -> PairedComparison:
    """Compare paired scores a_i, b_i of the same problems (a wins when a_i > b_i).

    Bootstrap: draw ``n_boot`` resamples of n problem indices with replacement from
    ``numpy.random.default_rng(seed)``; the CI is the [(1-ci)/2, (1+ci)/2] quantiles (numpy's
    default linear interpolation) of the resampled mean and median of d. Deterministic for fixed
    inputs, n_boot and seed.
    """
    a_arr, b_arr = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a_arr.ndim != 1 or a_arr.shape != b_arr.shape:
        raise ValueError(
            f"paired scores need equal 1-d lengths, got {a_arr.shape} and {b_arr.shape}"
        )
    if n_boot < 1 or not 0 < ci < 1:
        raise ValueError(f"need n_boot >= 1 and 0 < ci < 1, got n_boot={n_boot}, ci={ci}")
    d = a_arr - b_arr
    n = d.size
    if n == 0:
        return PairedComparison(0, *([float("nan")] * 9))
    boot_means, boot_medians = _bootstrap_mean_median(d, n_boot, seed)
    mean_low, mean_high = percentile_bounds(boot_means, ci)
    median_low, median_high = percentile_bounds(boot_medians, ci)
    return PairedComparison(
        n=n,
        win_pct=100.0 * np.count_nonzero(greater(a_arr, b_arr)) / n,
        tie_pct=100.0 * np.count_nonzero(tied(a_arr, b_arr)) / n,
        loss_pct=100.0 * np.count_nonzero(greater(b_arr, a_arr)) / n,
        median_diff=float(np.median(d)),
        mean_diff=float(np.mean(d)),
        mean_ci_low=float(mean_low),
        mean_ci_high=float(mean_high),
        median_ci_low=float(median_low),
        median_ci_high=float(median_high),
    )


def _bootstrap_mean_median(d: np.ndarray, n_boot: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean and median of d over ``n_boot`` problem-level resamples
    (:func:`cotaudit.bootstrap.resample_indices`)."""
    rng = np.random.default_rng(seed)
    means, medians = [], []
    for idx in resample_indices(d.size, n_boot, rng):
        resamples = d[idx]
        means.append(resamples.mean(axis=1))
        medians.append(np.median(resamples, axis=1))
    return np.concatenate(means), np.concatenate(medians)


# --------------------------------------------------------------------------------------------
# Subsets of pairs
# --------------------------------------------------------------------------------------------


def both_correct(a: TraceRecord, b: TraceRecord) -> bool:
    """Both original responses are correct."""
    return a.correct and b.correct


def length_matched(length_a: int, length_b: int) -> bool:
    """Lengths within 10% of the longer explanation: 100 |la - lb| <= 10 max(la, lb), boundary
    included, exact in integers.

    The tolerance is a share of the *longer* of the two: 100 vs 111 is matched (11 <= 11.1),
    though 11 is more than 10% of the shorter; 90 vs 100 and 100 vs 110 are matched (10 <= 10,
    10 <= 11), 89 vs 100 is not (11 > 10).
    """
    return 100 * abs(length_a - length_b) <= LENGTH_TOLERANCE_PERCENT * max(length_a, length_b)


# --------------------------------------------------------------------------------------------
# Run-level tables
# --------------------------------------------------------------------------------------------


def _mean(values: Iterable[float]) -> float:
    v = np.asarray(list(values), dtype=float)
    return float(np.mean(v)) if v.size else float("nan")


def _of(records: Sequence[TraceRecord], condition: Condition) -> list[TraceRecord]:
    return [r for r in records if r.condition == condition]


CURVE_PARTS: dict[str, tuple[Condition, Probe]] = {
    "question_only": ("question_only", "visible"),
    **{f"{c}_{p}": (c, p) for c in KEYED_CONDITIONS for p in PROBES},
}
"""The study's five pass curves by name, each with its records' condition and probe:
``question_only`` (its one curve, probed visible), then ``<keyed condition>_<probe>``."""

CURVES = tuple(CURVE_PARTS)
"""The names of :data:`CURVE_PARTS`, in order."""


def _curves(records: Sequence[TraceRecord]) -> Iterator[tuple[str, list[PassCurve]]]:
    """(curve name, its records' pass curves) for the five curves of the study (:data:`CURVES`)."""
    for curve, (condition, probe) in CURVE_PARTS.items():
        yield curve, [r.curve(probe) for r in _of(records, condition)]


def percent_label(fraction: float) -> str:
    """10 for 0.10, 12.5 for 0.125 (no trailing zeros): a prefix fraction in metric keys and
    table headers."""
    return f"{round(fraction * 100, 4):g}"


def shared_fractions(records: Sequence[TraceRecord]) -> tuple[float, ...]:
    """The prefix fractions all ``records`` were probed at (the paper's F when there are none).

    Raises ValueError when records of different fractions are mixed: their curves' checkpoints,
    and so the tables' columns, do not line up.
    """
    found = {tuple(r.fractions) for r in records}
    if len(found) > 1:
        raise ValueError(f"records probed at different prefix fractions: {sorted(found)}")
    return found.pop() if found else PREFIX_FRACTIONS


def _pass_at_10_or_nan(curve: PassCurve) -> float:
    return curve.at(0.10) if any(np.isclose(f, 0.10) for f in curve.fractions) else float("nan")


def table_ii(
    records: Sequence[TraceRecord],
    *,
    first_pass_average: Callable[[Iterable[float]], float] | None = None,
) -> dict[str, float]:
    """Per condition: n, original accuracy, median explanation length; per curve: median AUC, mean
    Pass@10, median first-pass.

    Keys: ``n/<condition>``, ``accuracy/<condition>``, ``length_tokens_median/<condition>`` (the
    explanation's length T in tokens), ``auc_median/<curve>``,
    ``pass_at_10_mean/<curve>``, ``first_pass_median/<curve>`` (the :func:`lower_median` of the
    first-pass fractions, a checkpoint; censored curves count as 1.0; ``first_pass_average``
    replaces it, e.g. :func:`cotaudit.stats.median`: the midpoint median, see
    :mod:`cotaudit.studies.trace_tutor.versions`).
    Pass@10 is NaN when the records were not probed at 0.10.
    """
    first_pass_average = first_pass_average or lower_median
    shared_fractions(records)
    out: dict[str, float] = {}
    for condition in CONDITIONS:
        group = _of(records, condition)
        out[f"n/{condition}"] = len(group)
        out[f"accuracy/{condition}"] = _mean(r.correct for r in group)
        out[f"length_tokens_median/{condition}"] = median(r.length_tokens for r in group)
    for curve, curves in _curves(records):
        out[f"auc_median/{curve}"] = median(c.auc for c in curves)
        out[f"pass_at_10_mean/{curve}"] = _mean(_pass_at_10_or_nan(c) for c in curves)
        out[f"first_pass_median/{curve}"] = first_pass_average(
            c.first_pass().fraction for c in curves
        )
    return out


def lower_median(values: Iterable[float]) -> float:
    """The lower median: the ceil(n/2)-th smallest of n values (sorted[(n - 1) // 2]), NaN for
    none. For odd n it is the median; for even n the smaller of the two middle values, so a
    median of checkpoints is a checkpoint (0.25 for [0.1, 0.25, 0.5, 1.0], where the midpoint
    median would give 0.375)."""
    v = np.sort(np.asarray(list(values), dtype=float))
    return float(v[(v.size - 1) // 2]) if v.size else float("nan")


def table_iii(records: Sequence[TraceRecord]) -> dict[str, float]:
    """Mean pass rate per checkpoint (0% probe and each f in F) for each curve.

    Keys: ``pass_rate/<curve>/<percent>``, percent in 0, 10, 25, 50, 75, 100 (the records'
    fractions in percent).
    """
    fractions = shared_fractions(records)
    out: dict[str, float] = {}
    zero_probes = {
        curve: [r.zero_probe(probe) for r in _of(records, condition)]
        for curve, (condition, probe) in CURVE_PARTS.items()
    }
    for curve, curves in _curves(records):
        out[f"pass_rate/{curve}/0"] = _mean(zero_probes[curve])
        for i, f in enumerate(fractions):
            out[f"pass_rate/{curve}/{percent_label(f)}"] = _mean(c.passes[i] for c in curves)
    return out


def _by_problem(records: Sequence[TraceRecord]) -> dict[tuple[str, str], TraceRecord]:
    """Records by (pair_id, condition); raises ValueError on a duplicate (so that each problem is
    one unit of the bootstrap)."""
    by_id: dict[tuple[str, str], TraceRecord] = {}
    for r in records:
        if (r.pair_id, r.condition) in by_id:
            raise ValueError(f"duplicate record for problem {r.pair_id!r}, condition {r.condition}")
        by_id[(r.pair_id, r.condition)] = r
    return by_id


def question_only_pairs(
    records: Sequence[TraceRecord], condition: Condition
) -> list[tuple[TraceRecord, TraceRecord]]:
    """(``condition`` record, question-only record) of each problem that has both, by pair_id."""
    by_id = _by_problem(records)
    return [
        (keyed, by_id[(keyed.pair_id, "question_only")])
        for keyed in _of(records, condition)
        if (keyed.pair_id, "question_only") in by_id
    ]


def table_iv(
    records: Sequence[TraceRecord], *, n_boot: int = BOOTSTRAP_SAMPLES, seed: int = BOOTSTRAP_SEED
) -> dict[str, float]:
    """Answer-key vs question-only AUC, paired by problem (``paired_comparison`` fields).

    For probe ``visible`` (AUC_visible vs AUC_question_only) and ``masked`` (Delta_prefix), on
    subsets ``all`` pairs, ``both_correct`` and ``length_matched`` (of the two explanations).
    Problems lacking either record are left out. Keys:
    ``answer_key_vs_question_only/<probe>/<subset>/<field>``.
    """
    shared_fractions(records)
    pairs = question_only_pairs(records, "answer_key")
    subsets = {
        "all": pairs,
        "both_correct": [(k, q) for k, q in pairs if both_correct(k, q)],
        "length_matched": [
            (k, q) for k, q in pairs if length_matched(k.length_tokens, q.length_tokens)
        ],
    }
    out: dict[str, float] = {}
    for probe in PROBES:
        for subset, chosen in subsets.items():
            comparison = paired_comparison(
                [k.auc(probe) for k, _ in chosen],
                [q.auc("visible") for _, q in chosen],
                n_boot=n_boot,
                seed=seed,
            )
            out.update(comparison.as_metrics(f"answer_key_vs_question_only/{probe}/{subset}"))
    return out


HEADLINE_CONDITION = "answer_key"
"""The condition of the headline: the answer-key explanations."""

DELTA_CONTEXT = "delta_context"
"""The headline's short name: ``delta_context/<field>`` is ``visible_vs_masked/answer_key/<its
field>`` (:data:`HEADLINE_FIELDS`), short enough for the viewer's title bar."""

HEADLINE_FIELDS = {
    "mean": "mean_diff",
    "n": "n",
    "ci_low": "mean_ci_low",
    "ci_high": "mean_ci_high",
}
"""The headline's fields: short name -> the field of ``visible_vs_masked/answer_key``."""


def delta_context_table(
    records: Sequence[TraceRecord], *, n_boot: int = BOOTSTRAP_SAMPLES, seed: int = BOOTSTRAP_SEED
) -> dict[str, float]:
    """Key visible vs key masked AUC of each keyed condition, paired within each explanation.

    The mean difference is the mean Delta_context. Keys: ``visible_vs_masked/<condition>/<field>``,
    then the headline's under their short names (``delta_context/mean`` = the mean
    Delta_context of the answer-key explanations, ``delta_context/n``, ``delta_context/ci_low``,
    ``delta_context/ci_high``: :data:`HEADLINE_FIELDS`).
    """
    shared_fractions(records)
    out = _visible_vs_masked(records, TraceRecord.auc, "visible_vs_masked", n_boot, seed)
    full = f"visible_vs_masked/{HEADLINE_CONDITION}"
    return out | {f"{DELTA_CONTEXT}/{s}": out[f"{full}/{f}"] for s, f in HEADLINE_FIELDS.items()}


def _visible_vs_masked(
    records: Sequence[TraceRecord],
    value: Callable[[TraceRecord, Probe], float],
    prefix: str,
    n_boot: int,
    seed: int,
) -> dict[str, float]:
    """:func:`paired_comparison` of ``value(r, "visible")`` vs ``value(r, "masked")`` over each
    keyed condition's records, as metrics ``<prefix>/<condition>/<field>``."""
    out: dict[str, float] = {}
    for condition in KEYED_CONDITIONS:
        group = _of(records, condition)
        comparison = paired_comparison(
            [value(r, "visible") for r in group],
            [value(r, "masked") for r in group],
            n_boot=n_boot,
            seed=seed,
        )
        out.update(comparison.as_metrics(f"{prefix}/{condition}"))
    return out


def table_v(records: Sequence[TraceRecord]) -> dict[str, float]:
    """First-pass histogram per curve: counts in bins 10, 25, 50, 75, 100 and none (censored).

    Keys: ``first_pass_count/<curve>/<bin>`` (bins: the records' fractions in percent, and none).
    """
    fractions = shared_fractions(records)
    out: dict[str, float] = {}
    for curve, curves in _curves(records):
        labels = [percent_label(f) for f in fractions] + ["none"]
        counts = dict.fromkeys(labels, 0)
        for c in curves:
            fp = c.first_pass()
            counts["none" if fp.censored else percent_label(fp.fraction)] += 1
        out.update({f"first_pass_count/{curve}/{label}": n for label, n in counts.items()})
    return out


def wrong_key_anchoring(records: Sequence[TraceRecord]) -> dict[str, float]:
    """Among incorrect wrong-key responses: how many end with exactly gold+1 (the key), another
    wrong integer, or no parsed answer (final_answer None: no boxed integer); and per condition,
    the responses with no parsed answer.

    Keys: ``wrong_key_anchoring/{incorrect,key,other_wrong,unparsed}``, ``key_pct`` = 100 key /
    incorrect (NaN when none is incorrect), and ``no_answer/<condition>`` (correct or not: a
    response with no answer is incorrect, so ``no_answer/wrong_key`` = ``unparsed``).
    """
    incorrect = [r for r in _of(records, "wrong_key") if not r.correct]
    unparsed = sum(r.final_answer is None for r in incorrect)
    key = sum(r.final_answer == r.gold + 1 for r in incorrect)
    return {
        "wrong_key_anchoring/incorrect": len(incorrect),
        "wrong_key_anchoring/key": key,
        "wrong_key_anchoring/key_pct": 100.0 * key / len(incorrect) if incorrect else math.nan,
        "wrong_key_anchoring/other_wrong": len(incorrect) - key - unparsed,
        "wrong_key_anchoring/unparsed": unparsed,
        **{
            f"no_answer/{condition}": sum(r.final_answer is None for r in _of(records, condition))
            for condition in CONDITIONS
        },
    }


def zero_probe_drop_table(
    records: Sequence[TraceRecord], *, n_boot: int = BOOTSTRAP_SAMPLES, seed: int = BOOTSTRAP_SEED
) -> dict[str, float]:
    """The 0%-probe drop of each keyed condition: d_i = p0_visible - p0_masked of problem i (the
    answer forced before any explanation text, with the key shown minus with it masked), paired
    within the explanation, with the problem-level bootstrap of ``paired_comparison``.

    ``mean_diff`` is the mean drop (= pass_rate/<condition>_visible/0 - ..._masked/0) and
    ``mean_ci_low``/``mean_ci_high`` its 95% CI. Keys: ``zero_probe_drop/<condition>/<field>``.
    """
    shared_fractions(records)
    _by_problem(records)
    return _visible_vs_masked(records, TraceRecord.zero_probe, "zero_probe_drop", n_boot, seed)


def pass_at_10_discordance(records: Sequence[TraceRecord]) -> dict[str, float]:
    """Keyed explanations that pass at 10% with the key visible but not masked, and the reverse
    (pass: p(0.10) >= 0.5). NaN when the records were not probed at 0.10.

    Keys: ``pass_at_10_visible_not_masked/<condition>`` and
    ``pass_at_10_masked_not_visible/<condition>``.
    """
    fractions = shared_fractions(records)
    out: dict[str, float] = {}
    for condition in KEYED_CONDITIONS:
        visible_only = masked_only = float("nan")
        if any(np.isclose(f, 0.10) for f in fractions):
            at_10 = [
                [r.curve(p).at(0.10) >= PASS_THRESHOLD for p in PROBES]
                for r in _of(records, condition)
            ]
            visible_only = sum(v and not m for v, m in at_10)
            masked_only = sum(m and not v for v, m in at_10)
        out[f"pass_at_10_visible_not_masked/{condition}"] = visible_only
        out[f"pass_at_10_masked_not_visible/{condition}"] = masked_only
    return out


def identical_pass_vectors(records: Sequence[TraceRecord]) -> dict[str, float]:
    """Problems whose keyed explanation, replayed with the key masked, has the same pass/fail
    vector over all checkpoints of F (five by default; the 0% probe not included) as the
    question-only explanation of the same problem.

    Keys: ``identical_pass_vectors/<condition>_masked_vs_question_only/count`` and ``.../n_pairs``
    (problems with both records).
    """
    shared_fractions(records)
    out: dict[str, float] = {}
    for condition in KEYED_CONDITIONS:
        pairs = question_only_pairs(records, condition)
        same = sum(k.curve("masked").passed() == q.curve("visible").passed() for k, q in pairs)
        name = f"identical_pass_vectors/{condition}_masked_vs_question_only"
        out[f"{name}/count"] = same
        out[f"{name}/n_pairs"] = len(pairs)
    return out


def all_pass_counts(records: Sequence[TraceRecord]) -> dict[str, float]:
    """Curves that pass at every checkpoint of F (all five by default):
    ``all_pass_count/<curve>``."""
    shared_fractions(records)
    return {
        f"all_pass_count/{curve}": sum(all(c.passed()) for c in curves)
        for curve, curves in _curves(records)
    }


def non_monotone_counts(records: Sequence[TraceRecord]) -> dict[str, float]:
    """Two counts of curves that pass early and fail at 100%, per curve:

    ``pass_10_fail_100/<curve>``: p(0.10) passes and p(1.0) fails (the study's non-monotone);
    ``pass_early_fail_100/<curve>``: some f < 1 passes and p(1.0) fails (broader). NaN for the
    first when not probed at 0.10.
    """
    fractions = shared_fractions(records)
    probed = any(np.isclose(f, 0.10) for f in fractions)
    out: dict[str, float] = {}
    for curve, curves in _curves(records):
        out[f"pass_10_fail_100/{curve}"] = (
            sum(passes_10_fails_final(c) for c in curves) if probed else float("nan")
        )
        out[f"pass_early_fail_100/{curve}"] = sum(passes_early_fails_final(c) for c in curves)
    return out


def checkpoint_counts(records: Sequence[TraceRecord]) -> dict[str, float]:
    """The study's count analyses: Pass@10 discordance, identical masked vs question-only pass
    vectors, all-pass and the two non-monotone counts (one dict)."""
    return {
        **pass_at_10_discordance(records),
        **identical_pass_vectors(records),
        **all_pass_counts(records),
        **non_monotone_counts(records),
    }


def run_summary(
    records: Sequence[TraceRecord], *, n_boot: int = BOOTSTRAP_SAMPLES, seed: int = BOOTSTRAP_SEED
) -> dict[str, float]:
    """All run-level tables in one dict: Tables II-V, Delta_context, the 0%-probe drop, anchoring
    and the checkpoint counts."""
    return {
        **table_ii(records),
        **table_iii(records),
        **table_iv(records, n_boot=n_boot, seed=seed),
        **delta_context_table(records, n_boot=n_boot, seed=seed),
        **zero_probe_drop_table(records, n_boot=n_boot, seed=seed),
        **table_v(records),
        **wrong_key_anchoring(records),
        **checkpoint_counts(records),
    }
