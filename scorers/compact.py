"""Compact run-level metrics: the few numbers each study shows first (definitions and key lists:
:mod:`cotaudit.studies.<study>.metrics`).

Each metric runs the study's full metric on the same scores and keeps the compact keys, so a
compact value is the full table's value under the same name. ``-T metrics=all`` attaches the
full metrics instead.
"""

from __future__ import annotations

from inspect_ai.scorer import Metric, SampleScore, metric

from cotaudit.studies.report_ll import metrics as report_ll_metrics
from cotaudit.studies.selfcommit import metrics as selfcommit_metrics
from cotaudit.studies.trace_tutor import metrics as trace_metrics
from cotaudit.studies.trace_tutor.stats import BOOTSTRAP_SAMPLES, BOOTSTRAP_SEED


@metric
def selfcommit_headline(primary: str = "tau_0.8") -> Metric:
    """AUROC (honest vs hinted), paired wins and ties of the primary summary (tau_first at
    0.8), and the number of pairs: ``auroc/<primary>``, ``wins/...``, ``ties/...``, ``n_pairs``
    of the ``honest_vs_hinted`` table."""
    from cotaudit.scorers.selfcommit import honest_vs_hinted

    table = honest_vs_hinted()

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        return selfcommit_metrics.selfcommit_headline(table(scores), primary)

    return compute


@metric
def selfcommit_compact(primary: str = "tau_0.8") -> Metric:
    """The rest of the compact selfcommit set (:func:`cotaudit.studies.selfcommit.metrics.selfcommit_compact_keys`):
    medians, other summaries' AUROC, no-answer counts, the both-correct headline; NaN left out."""
    from cotaudit.scorers.selfcommit import honest_vs_hinted, honest_vs_hinted_both_correct

    table, both = honest_vs_hinted(), honest_vs_hinted_both_correct()

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        return selfcommit_metrics.selfcommit_compact(table(scores), both(scores), primary)

    return compute


@metric
def trace_compact(n_boot: int = BOOTSTRAP_SAMPLES, seed: int = BOOTSTRAP_SEED) -> Metric:
    """Headline mean Delta_context of the answer-key explanations with its CI, then the other
    compact trace keys (:func:`cotaudit.studies.trace_tutor.metrics.trace_compact_keys`); NaN left out but for the
    headline."""
    from cotaudit.scorers.trace_tutor import (
        trace_delta_context,
        trace_table_ii,
        trace_table_iv,
        trace_zero_probe_drop,
    )

    tables = [
        trace_delta_context(n_boot=n_boot, seed=seed),
        trace_table_iv(n_boot=n_boot, seed=seed),
        trace_zero_probe_drop(n_boot=n_boot, seed=seed),
        trace_table_ii(),
    ]

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        merged: dict[str, float] = {}
        for t in tables:
            merged.update(t(scores))
        return trace_metrics.trace_compact(merged)

    return compute


@metric
def report_ll_compact(
    band: float,
    controls: dict[str, dict] | None = None,
    n_resamples: int = 10_000,
    seed: int = 0,
    unit: str = "bug",
    cells: list[str] | None = None,
    discrimination_cell: str = report_ll_metrics.REPORT_LL_STUDY_CELL,
) -> Metric:
    """Headline plain/plain DiD of the first of ``cells`` (the run's (rendering, richness)
    cells, the study's first) with its CI and p-value, then the other compact report_ll keys
    (:func:`cotaudit.studies.report_ll.metrics.report_ll_compact_keys`); NaN left out but for the headline.
    ``controls``: the control families' declarations (family -> declaration); ``unit``: the
    independent unit every interval resamples; ``discrimination_cell``: the cell of the
    discrimination check."""
    from cotaudit.scorers.report_ll import (
        report_ll_controls,
        report_ll_discrimination,
        report_ll_overall,
        report_ll_register,
    )

    names = sorted(controls or {})
    run_cells = list(cells) if cells else [report_ll_metrics.REPORT_LL_STUDY_CELL]
    options = {"n_resamples": n_resamples, "seed": seed, "unit": unit}
    tables = [
        report_ll_overall(controls=names, cells=run_cells, **options),
        report_ll_register(controls=names, cells=run_cells, **options),
        report_ll_discrimination(band=band, controls=names, cell=discrimination_cell, **options),
    ]
    if controls:
        tables.append(report_ll_controls(controls=controls, **options))

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        merged: dict[str, float] = {}
        for t in tables:
            merged.update(t(scores))
        return report_ll_metrics.report_ll_compact(merged, run_cells)

    return compute
