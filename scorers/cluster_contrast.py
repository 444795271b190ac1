"""The cluster contrast, written into the Inspect log so the log viewer shows it.

Inspect metrics return numbers only, so the contrast (which samples sit in which cluster, the
ones nearest each centroid, the features that differ most) is written after the run, with
Inspect's own log-editing functions, each edit carrying provenance ``cotaudit``:

- per sample, with ``inspect_ai.log.edit_score``: ``Score.metadata["cluster_contrast"]``, a list
  of point notes (:func:`cotaudit.cluster.contrast.point_notes`), and one line per note at the
  end of the score's explanation. The scorer's original score stays in ``Score.history``.
- per log, with ``inspect_ai.log.edit_eval_log``: ``log.metadata["cluster_contrast"]``, per
  cluster metric its summary (:func:`cotaudit.cluster.contrast.summary_text`), clusters, feature
  ranking, and, when a contrast model was named, its description of what distinguishes the two
  clusters' texts, with the exact prompt.

:class:`ClusterContrastHook` does this when a cotaudit task ends (tasks opt in through their
``cluster_contrast_options`` metadata; ``-T contrast_model=...`` adds the description);
``cotaudit contrast LOG...`` does it for existing logs. The clustering is recomputed from the
scores the metric saw, with the metric's own options, so it is the clustering behind the logged
F1 (the bootstrap is skipped: the interval is read from the logged metrics).
"""

from __future__ import annotations

import logging
import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from inspect_ai.hooks import Hooks, TaskEnd
from inspect_ai.log import (
    EvalLog,
    EvalSample,
    MetadataEdit,
    ProvenanceData,
    edit_eval_log,
    edit_score,
    read_eval_log_async,
    write_eval_log_async,
)
from inspect_ai.model import (
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
    get_model,
)
from inspect_ai.scorer import ScoreEdit

import cotaudit.cluster.metrics  # noqa: F401  (registers the generic cluster F1 with the contrast)
from cotaudit.cluster.contrast import (
    CLUSTER_METRICS,
    CONTRAST_MAX_TOKENS,
    CONTRAST_SYSTEM,
    RESULT_KEY,
    ClusterMetric,
    ClusterRun,
    Noted,
    contrast_prompt,
    noted_score,
)
from cotaudit.cluster.f1 import DEFAULT_PREFIX, metric_keys
from cotaudit.logs.data import RunData
from cotaudit.logs.read import run_from_log
from cotaudit.params import parse_contrast_model
from cotaudit.prerequisite import task_created

logger = logging.getLogger(__name__)

OPTIONS_KEY = "cluster_contrast_options"
"""Task metadata key by which a task opts in:
``{"contrast_model": str | None, "n_nearest": int}``."""
AUTHOR = "cotaudit"


def contrast_options(contrast_model: str | None, n_nearest: int = 3) -> dict[str, Any]:
    """The task metadata entry (under ``OPTIONS_KEY``) that opts a task in; ``contrast_model``
    as ``-T contrast_model`` gives it (checked by
    :func:`cotaudit.params.parse_contrast_model`). Opting in registers cotaudit's hooks
    (:func:`cotaudit.prerequisite.task_created`), so any task that carries the entry, a user's
    own included, gets its log annotated."""
    task_created()
    return {
        OPTIONS_KEY: {
            "contrast_model": parse_contrast_model(contrast_model),
            "n_nearest": n_nearest,
        }
    }


def cluster_runs(run: RunData) -> list[ClusterRun]:
    """Every cluster metric of a read log that is registered with
    :func:`cotaudit.cluster.contrast.register_cluster_metric` (the generic cluster F1 of
    :mod:`cotaudit.cluster.metrics`, report_ll's report clustering), recomputed from the scores
    it saw."""
    out: list[ClusterRun] = []
    for scorer in run.scorers.values():
        for d in scorer.metric_defs:
            kind = CLUSTER_METRICS.get(d.name)
            if kind is None:
                continue
            c = kind.recompute(scorer.samples, {**d.options, "n_boot": 0})
            keys = zip(metric_keys(DEFAULT_PREFIX), metric_keys(c.prefix), strict=True)
            logged = {k: scorer.metrics[p] for k, p in keys if p in scorer.metrics}
            out.append(ClusterRun(scorer.name, c.prefix, c.result, c.negative_class, logged, kind))
    return out


async def annotate_log(
    location: str | Path,
    contrast_model: str | Model | None = None,
    n_nearest: int = 3,
) -> EvalLog | None:
    """Write the cluster contrast into the log at ``location`` (see the module docstring).

    Returns the edited log, or None when there is nothing to annotate (no samples in the log,
    or no cluster metric). Re-running replaces the earlier notes. A contrast model that fails is
    recorded in the log (``error``) and logged as a warning; the notes are written regardless.
    The file is replaced atomically when it is local.
    """
    location = str(location)
    log = await read_eval_log_async(location)
    if not log.samples:
        return None
    runs = cluster_runs(run_from_log(log, location))
    if not runs:
        return None
    samples: dict[str, list[EvalSample]] = defaultdict(list)
    for s in log.samples:
        samples[str(s.id)].append(s)
    noted: dict[tuple[str, str], list[Noted]] = defaultdict(list)
    summaries: dict[str, dict[str, Any]] = {}
    for cr in runs:
        contrast = cr.result.contrast(n_nearest)
        for sample_id, items in cr.notes(n_nearest).items():
            noted[(cr.scorer, sample_id)].extend(items)
        summaries[cr.metric] = cr.summary(contrast)
        if contrast_model is not None and contrast["clusters"]:
            texts = {
                name: [
                    _point_text(samples.get(cr.kind.sample_of(str(p)), []), str(p), cr.kind)
                    for p in contrast["clusters"][name]["nearest_ids"]
                ]
                for name in ("positive", "negative")
            }
            summaries[cr.metric]["contrast_model"] = await describe_contrast(
                contrast_model, contrast, texts
            )
    _note_scores(log, list(dict.fromkeys(cr.scorer for cr in runs)), noted)
    log = edit_eval_log(
        log,
        [MetadataEdit(metadata_set={RESULT_KEY: summaries})],
        ProvenanceData(author=AUTHOR, reason="contrastive cluster F1: cluster contrast"),
    )
    await write_replacing(log, location)
    return log


def _note_scores(
    log: EvalLog, scorers: list[str], noted: Mapping[tuple[str, str], list[Noted]]
) -> None:
    """Edit each score of ``scorers`` that has notes, or had some, to carry them
    (:func:`cotaudit.cluster.contrast.noted_score`); the scorer's original score stays in
    ``Score.history``."""
    provenance = ProvenanceData(
        author=AUTHOR, reason="contrastive cluster F1: cluster of each sample (2-means)"
    )
    for sample in log.samples or []:
        for scorer in scorers:
            score = (sample.scores or {}).get(scorer)
            if score is None:
                continue
            edited = noted_score(
                score.metadata, score.explanation, noted.get((scorer, str(sample.id)), [])
            )
            if edited is None:
                continue
            explanation, metadata = edited
            edit = ScoreEdit(explanation=explanation, metadata=metadata, provenance=provenance)
            edit_score(log, sample.id, scorer, edit, recompute_metrics=False, epoch=sample.epoch)


async def describe_contrast(
    model: str | Model, contrast: Mapping[str, Any], texts: Mapping[str, Sequence[str]]
) -> dict[str, Any]:
    """Ask ``model`` what distinguishes the two clusters' texts (greedy, at most
    ``CONTRAST_MAX_TOKENS`` tokens): ``{"model", "prompt", "description"}``, or ``error`` in
    place of ``description`` when the model cannot be loaded or the call fails."""
    prompt = contrast_prompt(contrast, texts)
    out: dict[str, Any] = {"model": str(model), "prompt": prompt}
    try:
        output = await get_model(model).generate(
            [ChatMessageSystem(content=CONTRAST_SYSTEM), ChatMessageUser(content=prompt)],
            config=GenerateConfig(max_tokens=CONTRAST_MAX_TOKENS, temperature=0.0),
        )
    except Exception as e:  # the notes are still worth writing; say why there is no description
        logger.warning("cluster contrast: contrast model %s failed: %s", model, e)
        out["error"] = f"{type(e).__name__}: {e}"
        return out
    out["description"] = output.completion
    return out


def _point_text(samples: Sequence[EvalSample], point: str, kind: ClusterMetric) -> str:
    """The text behind a point: the sample's generated output, or for a part of a sample its
    text in the sample metadata (report_ll: ``metadata["reports"][kind]``)."""
    if not samples:
        return ""
    sample = samples[0]
    part = kind.kind_of(point)
    if part is not None:
        texts = (sample.metadata or {}).get(kind.point_kind_texts or "", {})
        return str(texts.get(part, ""))
    return sample.output.completion if sample.output is not None else ""


async def write_replacing(log: EvalLog, location: str) -> None:
    """Write ``log`` to ``location``; a local file via a sibling temporary file and a rename, so
    an interrupted write never leaves a damaged log."""
    if "://" in location and not location.startswith("file://"):
        await write_eval_log_async(log, location)
        return
    path = Path(location.removeprefix("file://"))
    tmp = path.with_name(f".{path.stem}.contrast-tmp{path.suffix}")
    try:
        await write_eval_log_async(log, str(tmp))
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


class ClusterContrastHook(Hooks):
    """On the end of a task whose metadata holds ``cluster_contrast_options``, annotate its log
    (:func:`annotate_log`). Logs of other tasks, unfinished runs and runs without a log file are
    left untouched; the log-level summary is also mirrored into the ``EvalLog`` that ``eval()``
    returns."""

    async def on_task_end(self, data: TaskEnd) -> None:
        options = (data.log.eval.metadata or {}).get(OPTIONS_KEY)
        if options is None or data.log.status != "success" or not data.log.location:
            return
        edited = await annotate_log(
            data.log.location,
            contrast_model=options.get("contrast_model"),
            n_nearest=int(options.get("n_nearest", 3)),
        )
        if edited is not None:
            data.log.log_updates = edited.log_updates
            data.log.recompute_tags_and_metadata()


__all__ = [
    "OPTIONS_KEY",
    "ClusterContrastHook",
    "annotate_log",
    "cluster_runs",
    "contrast_options",
    "describe_contrast",
    "write_replacing",
]
