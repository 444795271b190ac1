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
Each verdict other than "ok" also goes into the log's tags (``auroc/tau_0.8: too few (n = 1)``,
``auc: not computed``): the viewer shows a log's tags in its title area, beside the metrics,
where a colleague opening the log would otherwise see a bare ``1.0``.
"""

from __future__ import annotations

import logging
import math
import sys
from collections.abc import Mapping
from typing import Any

from inspect_ai.hooks import Hooks, TaskEnd
from inspect_ai.log import (
    EvalLog,
    LogEdit,
    MetadataEdit,
    ProvenanceData,
    TagsEdit,
    edit_eval_log,
    read_eval_log,
    read_eval_log_async,
)

from cotaudit.display.headline import (
    RAN_KEY,
    HeadlineNote,
    assess,
    cut_text,
    ran_line,
    ran_record,
    specs_of,
)
from cotaudit.display.text import visible

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
    from cotaudit.logs.read import run_from_log
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


def headline_notes(log: EvalLog) -> list[HeadlineNote]:
    """Each headline the log's task metadata lists, read from its logged metrics
    (:func:`cotaudit.display.headline.assess`; a NaN cluster F1 with the clustering's reason);
    [] for a task without headlines or a log without results."""
    specs = specs_of(log.eval.metadata)
    if not specs or log.results is None:
        return []
    metrics = logged_metrics(log)
    reasons: Mapping[str, str] = {}
    if any(s.metric.endswith("_f1") and math.isnan(metrics.get(s.metric, math.nan)) for s in specs):
        reasons = cluster_reasons(log)
    return [assess(s, metrics, reasons.get(s.metric)) for s in specs]


async def annotate(log: EvalLog, notes: list[HeadlineNote]) -> dict[str, Any] | None:
    """Write into the log file, in one edit (provenance ``cotaudit``): each headline's verdict
    that is not "ok" as a tag (``HeadlineNote.tag``: the viewer's title area shows a log's
    tags beside the metrics), and, when ``--limit`` / ``--sample-id`` cut the task's samples,
    what ran (:func:`cotaudit.display.headline.ran_record`; problems: the distinct ``pair_id``
    of the samples run) into the log's metadata under ``RAN_KEY``. Returns what ran (None when
    every sample ran); ``log`` gets the same tags and metadata."""
    from cotaudit.scorers.cluster_contrast import AUTHOR, write_replacing

    tags = [n.tag for n in notes if n.tag]
    cut = cut_text(log.eval.config.limit, log.eval.config.sample_id)
    total = int(log.eval.dataset.samples or 0)
    was_cut = cut is not None and log.results is not None and log.results.total_samples < total
    if not was_cut and not tags:
        return None
    full = await read_eval_log_async(log.location)  # with earlier hooks' edits
    edits: list[LogEdit] = [TagsEdit(tags_add=tags)] if tags else []
    record = None
    if was_cut:
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
        edits.append(MetadataEdit(metadata_set={RAN_KEY: record}))
    reason = "the headlines' verdicts"
    reason += f"; what ran: {cut} cut the task's samples" if was_cut else ""
    edited = edit_eval_log(full, edits, ProvenanceData(author=AUTHOR, reason=reason))
    await write_replacing(edited, log.location)
    log.log_updates = edited.log_updates
    log.recompute_tags_and_metadata()
    return record


def headline_lines(log: EvalLog, ran: Mapping[str, Any] | None = None) -> list[str]:
    """The lines :class:`HeadlineHook` prints for ``log``: one per headline, then ``ran`` (a
    :func:`cotaudit.display.headline.ran_record`) in words; [] for a task without headlines."""
    return lines_of(log, headline_notes(log), ran)


def lines_of(
    log: EvalLog, notes: list[HeadlineNote], ran: Mapping[str, Any] | None = None
) -> list[str]:
    """:func:`headline_lines` of notes already read."""
    label = f"{log.eval.task} ({log.eval.model})"
    lines = [f"{label}: {n.line}" for n in notes]
    if notes and ran:
        lines.append(f"{label}: {ran_line(ran)}")
    return lines


class HeadlineHook(Hooks):
    """For a finished cotaudit task: its headline verdicts as tags and what ran when Inspect's
    options cut its samples (:func:`annotate`), then :func:`headline_lines` to stderr."""

    async def on_task_end(self, data: TaskEnd) -> None:
        log = data.log
        if log.status != "success" or not specs_of(log.eval.metadata):
            return
        notes = headline_notes(log)
        ran = None
        if log.location and "://" not in log.location:
            try:
                ran = await annotate(log, notes)
            except Exception as e:  # the headlines are still worth printing
                logger.warning("headline: could not annotate %s: %s", log.location, e)
        for line in lines_of(log, notes, ran):  # the task's name comes from the log
            print(visible(line), file=sys.stderr, flush=True)


__all__ = [
    "HeadlineHook",
    "cluster_reasons",
    "headline_lines",
    "logged_metrics",
    "annotate",
    "headline_notes",
    "lines_of",
]
