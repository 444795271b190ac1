"""The headline statistics of a cotaudit run, said in words when the task ends.

Inspect prints every metric value with three decimals (a count of 1 reads ``1.000``) and ``nan``
for a statistic that cannot be computed, without a word on whether it means anything. When a
task whose metadata lists headlines (:data:`cotaudit.headline.HEADLINES_KEY`) ends,
:class:`HeadlineHook` prints one line per headline to stderr, beside Inspect's summary: the
statistic, its interval and its n as an integer, and whether it is too small to mean anything
or why it cannot be computed (:func:`cotaudit.headline.assess`; the reason a cluster F1 is NaN
comes from re-clustering the logged scores). A run that ``--limit`` or ``--sample-id`` cut gets
one more line saying how many of the task's samples ran.
"""

from __future__ import annotations

import logging
import math
import sys
from collections.abc import Mapping

from inspect_ai.hooks import Hooks, TaskEnd, hooks
from inspect_ai.log import EvalLog, read_eval_log

from cotaudit.headline import assess, cut_text, extent_line, specs_of

logger = logging.getLogger(__name__)


def logged_metrics(log: EvalLog) -> dict[str, float]:
    """Every metric value of the log's results by key (the first score holding a key wins)."""
    out: dict[str, float] = {}
    for score in (log.results.scores if log.results else None) or []:
        for key, m in score.metrics.items():
            out.setdefault(key, float(m.value))
    return out


def cluster_reasons(log: EvalLog) -> dict[str, str]:
    """Why each NaN cluster F1 of the log is NaN, by its metric key (``<prefix>_f1``), from
    the clustering recomputed on the logged scores (the log is read whole when ``log`` has no
    samples); {} when it cannot be recomputed (no samples logged)."""
    from cotaudit.report.loader import run_from_log
    from cotaudit.scorers.cluster_contrast import cluster_runs

    try:
        full = log if log.samples else read_eval_log(log.location)
        if not full.samples:  # --no-log-samples: nothing to re-cluster
            return {}
        runs = cluster_runs(run_from_log(full, log.location))
    except Exception as e:  # the line then says only what the metrics show
        logger.warning("headline: could not recompute the clustering of %s: %s", log.location, e)
        return {}
    return {f"{r.metric}_f1": why for r in runs if (why := r.result.why_undefined())}


def headline_lines(log: EvalLog) -> list[str]:
    """The lines :class:`HeadlineHook` prints for ``log``: one per headline, then what ran
    when Inspect's options cut the task's samples; [] for a task without headlines."""
    specs = specs_of(log.eval.metadata)
    if not specs or log.results is None:
        return []
    metrics = logged_metrics(log)
    reasons: Mapping[str, str] = {}
    if any(s.metric.endswith("_f1") and math.isnan(metrics.get(s.metric, math.nan))
           for s in specs):
        reasons = cluster_reasons(log)
    label = f"{log.eval.task} ({log.eval.model})"
    lines = [f"{label}: {assess(s, metrics, reasons.get(s.metric)).line}" for s in specs]
    extent = extent_line(
        log.results.total_samples, int(log.eval.dataset.samples or 0),
        cut_text(log.eval.config.limit, log.eval.config.sample_id),
    )
    if extent:
        lines.append(f"{label}: {extent}")
    return lines


@hooks(
    name="headline",
    description="Says each cotaudit task's headline statistics with their n when it ends.",
)
class HeadlineHook(Hooks):
    """Print :func:`headline_lines` of a finished cotaudit task to stderr."""

    async def on_task_end(self, data: TaskEnd) -> None:
        if data.log.status != "success":
            return
        for line in headline_lines(data.log):
            print(line, file=sys.stderr, flush=True)


__all__ = ["HeadlineHook", "cluster_reasons", "headline_lines", "logged_metrics"]
