"""The headline statistics of a cotaudit run, said in words when the task ends.

Inspect prints every metric value with three decimals (a count of 1 reads ``1.000``) and ``nan``
for a statistic that cannot be computed, without a word on whether it means anything. When a
task whose metadata lists headlines (:data:`cotaudit.display.headline.HEADLINES_KEY`) ends,
:class:`HeadlineHook` prints one line per headline to stderr, beside Inspect's summary: the
statistic, its interval and its n as an integer, and whether it is too small to mean anything
or why it cannot be computed (:func:`cotaudit.display.headline.assess`; the reason a cluster F1
is NaN comes from re-clustering the logged scores). A run that ``--limit`` or ``--sample-id``
cut gets one more line saying how many of the task's samples and problems ran, also written into
the log's metadata (``ran``: Inspect logs the task arguments as given, e.g. ``problems: 50``).
"""

from __future__ import annotations

import logging
import math
import sys
from collections.abc import Mapping
from typing import Any

from inspect_ai.hooks import Hooks, TaskEnd, hooks
from inspect_ai.log import (
    EvalLog,
    MetadataEdit,
    ProvenanceData,
    edit_eval_log,
    read_eval_log,
    read_eval_log_async,
)

from cotaudit.display.headline import RAN_KEY, assess, cut_text, ran_line, ran_record, specs_of

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


async def record_ran(log: EvalLog) -> dict[str, Any] | None:
    """When ``--limit`` / ``--sample-id`` cut the task's samples, write what ran
    (:func:`cotaudit.display.headline.ran_record`; problems: the distinct ``pair_id`` of the samples
    run) into the log's metadata under ``RAN_KEY`` and return it; None when every sample ran
    or the log is not a local file that was written."""
    from cotaudit.scorers.cluster_contrast import AUTHOR, write_replacing

    cut = cut_text(log.eval.config.limit, log.eval.config.sample_id)
    total = int(log.eval.dataset.samples or 0)
    if cut is None or log.results is None or log.results.total_samples >= total:
        return None
    full = await read_eval_log_async(log.location)  # with earlier hooks' edits
    given = log.eval.task_args.get("problems")
    pairs = {(s.metadata or {}).get("pair_id") for s in full.samples or []}
    counted = isinstance(given, int) and bool(pairs) and None not in pairs
    record = ran_record(
        full.results.total_samples if full.results else 0,
        total,
        cut,
        len(pairs) if counted else None,
        given if counted else None,
    )
    edited = edit_eval_log(
        full,
        [MetadataEdit(metadata_set={RAN_KEY: record})],
        ProvenanceData(author=AUTHOR, reason=f"what ran: {cut} cut the task's samples"),
    )
    await write_replacing(edited, log.location)
    log.log_updates = edited.log_updates
    log.recompute_tags_and_metadata()
    return record


def headline_lines(log: EvalLog, ran: Mapping[str, Any] | None = None) -> list[str]:
    """The lines :class:`HeadlineHook` prints for ``log``: one per headline, then ``ran`` (a
    :func:`cotaudit.display.headline.ran_record`) in words; [] for a task without headlines."""
    specs = specs_of(log.eval.metadata)
    if not specs or log.results is None:
        return []
    metrics = logged_metrics(log)
    reasons: Mapping[str, str] = {}
    if any(s.metric.endswith("_f1") and math.isnan(metrics.get(s.metric, math.nan)) for s in specs):
        reasons = cluster_reasons(log)
    label = f"{log.eval.task} ({log.eval.model})"
    lines = [f"{label}: {assess(s, metrics, reasons.get(s.metric)).line}" for s in specs]
    if ran:
        lines.append(f"{label}: {ran_line(ran)}")
    return lines


@hooks(
    name="headline",
    description="Says each cotaudit task's headline statistics with their n when it ends.",
)
class HeadlineHook(Hooks):
    """For a finished cotaudit task: record what ran when Inspect's options cut its samples
    (:func:`record_ran`), then print :func:`headline_lines` to stderr."""

    async def on_task_end(self, data: TaskEnd) -> None:
        log = data.log
        if log.status != "success" or not specs_of(log.eval.metadata):
            return
        ran = None
        if log.location and "://" not in log.location:
            try:
                ran = await record_ran(log)
            except Exception as e:  # the headlines are still worth printing
                logger.warning("headline: could not record what ran in %s: %s", log.location, e)
        for line in headline_lines(log, ran):
            print(line, file=sys.stderr, flush=True)


__all__ = [
    "HeadlineHook",
    "cluster_reasons",
    "headline_lines",
    "logged_metrics",
    "record_ran",
]
