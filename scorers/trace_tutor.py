"""Scorer and metrics of the context-masked TRACE tutor study.

Per sample (``Score.value``): TRACE AUC, Pass@10, first-pass (and whether it is censored), all-pass,
the two non-monotone flags (``pass_10_fail_100``: passes at 10%, fails at 100%, the study's sense;
``pass_early_fail_100``: passes at some f < 1, fails at 100%) and the 0% probe, each with the key
``visible`` and ``masked``; plus ``correct`` and ``length_tokens``. First come, for the log viewer,
``delta_context`` (AUC visible minus masked; None for question-only), the two AUCs and the fields of
:func:`cotaudit.studies.trace_tutor.scoring.viewer_fields`. A question-only sample has one curve, so
its ``*_masked`` values equal its ``*_visible`` values (the masked context *is* the question-only
prompt): the question-only curve is the baseline of both comparisons.

With the exact estimator (``-T estimator=exact`` or ``both``) every per-curve value of the exact
curves comes under its name with ``_exact`` (``auc_visible_exact``, ``delta_context_exact``,
``p_visible_exact``, ...); an exact-only run leads with ``delta_context_exact`` and has no
sampled values; with ``both``, ``exact_gap`` and ``exact_gap_abs`` are the mean of p_exact - p
and of |p_exact - p| over the explanation's probed cuts
(:func:`cotaudit.studies.trace_tutor.record.exact_gaps`).

Run level: the ``@metric`` factories generated from the study's metric table
(:data:`cotaudit.studies.trace_tutor.metrics.METRICS`), one per table and the compact set.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.scorer import Metric, Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState

from cotaudit.scorers.metric_table import inspect_metrics
from cotaudit.scorers.resample import beside_study_score
from cotaudit.studies.trace_tutor import stats as ts
from cotaudit.studies.trace_tutor.metrics import METRICS
from cotaudit.studies.trace_tutor.record import CurveEstimator, TutorProbe
from cotaudit.studies.trace_tutor.scoring import trace_tutor_score


@scorer(metrics=[])  # run-level metrics are attached by the task
def trace_tutor_scorer() -> Scorer:
    """Pass curves of the tutor explanation against the gold answer, key visible and masked
    (each estimator's that ran), computed by
    :func:`cotaudit.studies.trace_tutor.scoring.trace_tutor_score`."""

    async def score(state: TaskState, target: Target) -> Score:
        parts = trace_tutor_score(
            TutorProbe.from_store(state.store),
            str(state.metadata["condition"]),
            state.metadata.get("key"),
            str(state.metadata.get("pair_id", "")),
            int(target.text),
        )
        explanation = beside_study_score(state, parts.value, parts.metadata, parts.explanation)
        return Score(
            value=parts.value,
            answer=parts.answer,
            explanation=explanation,
            metadata=parts.metadata,
        )

    return score


# --------------------------------------------------------------------------------------------
# Records and run-level metrics
# --------------------------------------------------------------------------------------------


def records_from_log(
    log: EvalLog | str, estimator: CurveEstimator = "sampled"
) -> list[ts.TraceRecord]:
    """Trace records of a trace_tutor eval log (a path or a read log), their curves as
    ``estimator`` read them, for :func:`cotaudit.studies.trace_tutor.stats.run_summary` or
    :func:`~cotaudit.studies.trace_tutor.stats.problem_estimands`."""
    if isinstance(log, str):
        log = read_eval_log(log)
    out = []
    for sample in log.samples or []:
        for score in (sample.scores or {}).values():
            r = ts.record_from_score(score, sample.metadata, estimator)
            if r is not None:
                out.append(r)
    return out


METRIC_FUNCS = inspect_metrics(METRICS)
"""The ``@metric`` factory of every trace_tutor metric, by name
(:data:`cotaudit.studies.trace_tutor.metrics.METRICS`)."""

trace_table_ii = METRIC_FUNCS["trace_table_ii"]
trace_table_iii = METRIC_FUNCS["trace_table_iii"]
trace_table_iv = METRIC_FUNCS["trace_table_iv"]
trace_delta_context = METRIC_FUNCS["trace_delta_context"]
trace_zero_probe_drop = METRIC_FUNCS["trace_zero_probe_drop"]
trace_table_v = METRIC_FUNCS["trace_table_v"]
trace_anchoring = METRIC_FUNCS["trace_anchoring"]
trace_checkpoint_counts = METRIC_FUNCS["trace_checkpoint_counts"]
trace_compact = METRIC_FUNCS["trace_compact"]


def run_metrics(settings: Any) -> list[Metric]:
    """The run metrics a run with ``settings`` logs (:meth:`~cotaudit.scores.MetricTable.for_run`
    of :data:`cotaudit.studies.trace_tutor.metrics.METRICS`: ``all``, every full table of the
    curves ``estimator`` reads and the anchoring; ``compact``, the compact set), each with the
    options it takes from the settings."""
    return [METRIC_FUNCS[name](**options) for name, options in METRICS.for_run(settings)]
