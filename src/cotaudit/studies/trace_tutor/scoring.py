"""A probed sample's score in the context-masked TRACE tutor study: the per-curve summaries
of each estimator's curves (key visible and masked), the viewer's fields, the metadata and the
explanation, from the sample's record (:class:`cotaudit.studies.trace_tutor.record.TutorProbe`).
The scorer's module docstring (``cotaudit.scorers.trace_tutor``) lists the value's keys."""

from __future__ import annotations

from typing import Any

from cotaudit.display.text import cell_sparkline
from cotaudit.probing.pass_curves import PassCurve
from cotaudit.scores import ScoreParts
from cotaudit.studies.trace_tutor import stats as ts
from cotaudit.studies.trace_tutor.display import (
    TRACE_PRIMARY,
    SampledCurves,
    trace_curve_markdown,
    trace_curve_text,
    trace_exact_markdown,
)
from cotaudit.studies.trace_tutor.record import (
    CURVE_ESTIMATORS,
    CurveEstimator,
    TraceScoreMetadata,
    TutorProbe,
    estimator_key,
    exact_gaps,
    logged,
)

PROBES = ts.PROBES


def render_curves(rec: TutorProbe, meta: TraceScoreMetadata) -> str:
    """The p(f) curves. Sampled: a chart (a PNG image: p(f) against f per probe context, the
    0% probe apart, a dashed line at the pass threshold), then an aligned monospace block (a
    row per checkpoint, the 0% probe first: p(f) = matches/k exactly and the forced answers,
    per probe context) and a sparkline line per context
    (:func:`cotaudit.studies.trace_tutor.display.trace_curve_markdown`). Read exactly: the
    exact curves as curves, with the sampled ones beside them when both ran, and their
    covered mass (:func:`~cotaudit.studies.trace_tutor.display.trace_exact_markdown`). Markdown
    tables run their cells together in the log viewer, so the blocks are pre-formatted text."""
    parts = []
    sampled_curves = None
    if rec.probes is not None:
        sampled_curves = SampledCurves(
            rec.fractions,
            rec.positions,
            {n: rec.probes[n].model_dump() for n in PROBES if n in rec.probes},
            rec.k,
            ts.PASS_THRESHOLD,
        )
    if sampled_curves is not None and rec.p_exact is None:
        parts.append(trace_curve_markdown(sampled_curves))
    if rec.p_exact is not None and rec.covered_exact is not None:
        contexts: list[str] = [n for n in PROBES if n in rec.p_exact]
        sampled = (
            {n: rec.curve(n, "sampled") or [] for n in contexts} if rec.probes is not None else None
        )
        parts.append(
            trace_exact_markdown(
                rec.fractions,
                rec.positions,
                {n: rec.p_exact[n] for n in contexts},
                {n: rec.covered_exact[n] for n in contexts},
                sampled,
                ts.PASS_THRESHOLD,
                float(meta.exact_temperature or 1.0),
            )
        )
        if sampled_curves is not None:
            parts.append("Sampled answers:\n\n" + trace_curve_text(sampled_curves))
    return "\n\n".join(parts)


def viewer_fields(
    passes: dict[str, list[float]],
    condition: str,
    pair: str,
    final: int | None,
    gold: int,
    estimator: CurveEstimator = "sampled",
) -> dict[str, str]:
    """What the log viewer's sample table shows beside the numbers
    (:data:`cotaudit.studies.trace_tutor.display.TRACE_VIEWER_FIELDS` but ``correct``):
    condition, pair, the final answer and gold as text (``none`` when unparsed), then a p(f)
    sparkline per probe context over the fractions in at most
    :data:`cotaudit.display.text.CELL_SPARK_CHARS` characters (the masked one empty for
    question-only; after the text, so the sample header's first five scores are short;
    ``p_visible_exact`` ... for the exact curves). No statistic reads them."""
    return {
        "condition": condition,
        "pair": pair,
        "final_answer": "none" if final is None else str(final),
        "gold": str(gold),
        estimator_key("p_visible", estimator): cell_sparkline(passes["visible"]),
        estimator_key("p_masked", estimator): (
            cell_sparkline(passes["masked"]) if condition != "question_only" else ""
        ),
    }


def curve_values(
    passes: dict[str, list[float]],
    zero: dict[str, float],
    fractions: tuple[float, ...],
    estimator: CurveEstimator,
) -> dict[str, float | bool]:
    """The per-curve summaries of one estimator's curves (``passes`` and ``zero`` per probe
    context): AUC, Pass@10, first pass and whether it is censored, all-pass, the two
    non-monotone flags and the 0% probe, as ``<stat>_<context>`` (``..._exact`` for the exact
    curves)."""
    value: dict[str, float | bool] = {}
    for n in PROBES:
        curve = PassCurve(passes[n], fractions)
        fp = curve.first_pass()
        stats: dict[str, float | bool] = {
            "auc": curve.auc,
            "pass_at_10": curve.at(0.10),
            "first_pass": fp.fraction,
            "first_pass_censored": fp.censored,
            "all_pass": all(curve.passed()),
            "pass_10_fail_100": ts.passes_10_fails_final(curve),
            "pass_early_fail_100": ts.passes_early_fails_final(curve),
            "zero_probe": zero[n],
        }
        value |= {estimator_key(f"{k}_{n}", estimator): v for k, v in stats.items()}
    return value


def _curves_of(
    meta: TraceScoreMetadata, estimator: CurveEstimator
) -> tuple[dict[str, list[float]], dict[str, float]]:
    """(p(f), p(0)) per probe context as ``estimator`` read them; question-only: the masked
    context is its own prompt, so its masked curve is its visible one."""
    visible = getattr(meta, estimator_key("passes_visible", estimator))
    masked = getattr(meta, estimator_key("passes_masked", estimator))
    zero_visible = getattr(meta, estimator_key("zero_probe_visible", estimator))
    zero_masked = getattr(meta, estimator_key("zero_probe_masked", estimator))
    passes = {"visible": visible, "masked": masked if masked is not None else visible}
    zero = {
        "visible": zero_visible,
        "masked": zero_masked if zero_masked is not None else zero_visible,
    }
    return passes, zero


def _summary_text(
    value: dict[str, Any],
    delta: float | None,
    keyed: bool,
    estimator: CurveEstimator,
    temperature: float | None,
) -> str:
    """One line: AUC (and Delta_context), first pass, of one estimator's curves."""

    def k(name: str) -> str:
        return estimator_key(name, estimator)

    label = "" if estimator == "sampled" else f"exact (p at T = {temperature:g}): "
    return (
        label
        + f"AUC visible {value[k('auc_visible')]:.3f}"
        + (f", masked {value[k('auc_masked')]:.3f}, Δcontext {delta:+.3f}" if keyed else "")
        + f" · first pass {_first_pass_text(value, 'visible', estimator)}"
        + (f" visible, {_first_pass_text(value, 'masked', estimator)} masked" if keyed else "")
    )


def _first_pass_text(value: dict[str, Any], probe: str, estimator: CurveEstimator) -> str:
    if value[estimator_key(f"first_pass_censored_{probe}", estimator)]:
        return "none"
    return ts.percent_label(value[estimator_key(f"first_pass_{probe}", estimator)]) + "%"


def _estimator_values(
    meta: TraceScoreMetadata, condition: str, pair: str, gold: int
) -> tuple[dict[str, Any], dict[str, Any], dict[str, str], list[str]]:
    """Of each estimator that ran: its per-curve summaries (:func:`curve_values`), what the
    viewer shows first (Delta_context and the two AUCs), the viewer's fields
    (:func:`viewer_fields`) and the explanation's summary line; then the exact - sampled gaps
    (shown, and a line) when both ran."""
    keyed = condition in ts.KEYED_CONDITIONS
    value: dict[str, Any] = {}
    shown: dict[str, Any] = {}
    fields: dict[str, str] = {}
    summary = []
    for estimator in [e for e in CURVE_ESTIMATORS if meta.ran(e)]:
        passes, zero = _curves_of(meta, estimator)
        curve = curve_values(passes, zero, meta.fractions, estimator)
        value |= curve
        delta = getattr(meta, estimator_key("delta_context", estimator))
        shown |= {
            estimator_key(TRACE_PRIMARY, estimator): delta,
            **{
                estimator_key(f"auc_{n}", estimator): curve[estimator_key(f"auc_{n}", estimator)]
                for n in PROBES
            },
        }
        fields |= viewer_fields(passes, condition, pair, meta.final_answer, gold, estimator)
        summary.append(_summary_text(curve, delta, keyed, estimator, meta.exact_temperature))
    gaps = exact_gaps(meta)
    if gaps is not None:
        shown["exact_gap"], shown["exact_gap_abs"] = gaps
        summary.append(
            f"exact (p at T = {meta.exact_temperature or 1.0:g}) − sampled p: mean "
            f"{gaps[0]:+.3f}, mean |·| {gaps[1]:.3f} over the probed cuts (a greedy probe's "
            "p is its answer's 0 or 1, not an estimate of the probability at T = 1)"
        )
    return value, shown, fields, summary


def trace_tutor_score(
    rec: TutorProbe, condition: str, key: Any, pair: str, gold: int
) -> ScoreParts:
    """The sample's score: ``condition``, ``key`` and ``pair`` are its sample metadata's
    ``condition``, ``key`` and ``pair_id``. The value is what the viewer shows first, then the
    viewer's fields, then every estimator's summaries, ``correct`` and ``length_tokens``; the
    explanation a head line, a summary line per estimator, then the curves
    (:func:`render_curves`)."""
    meta = TraceScoreMetadata.of(rec, condition, key, gold)
    final = meta.final_answer
    correct = final is not None and final == gold
    value, shown, fields, summary = _estimator_values(meta, condition, pair, gold)
    value["correct"] = correct
    value["length_tokens"] = rec.length_tokens
    head = (
        f"**{condition}**"
        + (f" (key {key})" if condition in ts.KEYED_CONDITIONS else "")
        + f" · final answer {final if final is not None else 'unparsed'}, gold {gold}: "
        + ("correct" if correct else "incorrect")
        + f" · T = {rec.length_tokens} tokens"
        + (" (truncated)" if rec.truncated else "")
        + (f" · k = {rec.k}" if meta.ran("sampled") else "")
        + "\n\n"
        + "\n\n".join(summary)
    )
    return ScoreParts(
        value=shown | fields | value,
        answer=None if final is None else str(final),
        explanation=head + "\n\n" + render_curves(rec, meta),
        metadata=logged(meta),
    )
