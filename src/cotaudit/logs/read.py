"""A read Inspect ``EvalLog`` as :class:`~cotaudit.logs.data.RunData`: the run's fields, its
scorers' metric definitions and values, and the per-sample scores. The log is read by its
attributes only (no Inspect import): the scorers that reread a log during a run (the headline,
the cluster contrast) and the report share this one reading."""

from __future__ import annotations

import math
from typing import Any

from cotaudit.display.headline import cut_text
from cotaudit.logs.data import MetricDef, RunData, ScoreData, ScoredSample, ScorerRun
from cotaudit.studies.metrics import full_metrics_of


def _short_metric_name(name: str) -> str:
    return name.rsplit("/", 1)[-1]


def _float(v: Any) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def with_full_tables(defs: list[MetricDef]) -> list[MetricDef]:
    """``defs`` followed by the full-set metrics each compact metric selects from
    (:func:`cotaudit.studies.metrics.full_metrics_of`), each once: the report recomputes every table
    from the per-sample scores of a compact log too."""
    out = list(defs)
    names = {d.name for d in out}
    for d in defs:
        for name, options in full_metrics_of(d.name, d.options):
            if name not in names:
                out.append(MetricDef(name, options))
                names.add(name)
    return out


def run_from_log(log: Any, path: str = "") -> RunData:
    """:class:`RunData` of a read ``EvalLog``.

    Scores are taken from the log's epoch reductions, in their stored order (the order the
    metrics received them); without reductions, from the samples. Each score carries its sample's
    metadata, as Inspect's ``SampleScore`` does.
    """
    spec = log.eval
    metadata = dict(spec.metadata or {})
    task = spec.task.rsplit("/", 1)[-1]
    sample_meta: dict[str, dict[str, Any]] = {}
    for s in log.samples or []:
        sample_meta.setdefault(str(s.id), dict(s.metadata or {}))

    scorers: dict[str, ScorerRun] = {}
    for info in spec.scorers or []:
        defs = [
            MetricDef(_short_metric_name(m.name), dict(m.options or {}))
            for m in (info.metrics or [])
            if hasattr(m, "name")
        ]
        scorers[info.name] = ScorerRun(info.name, with_full_tables(defs), {}, [])
    if log.results is not None:
        for eval_score in log.results.scores or []:
            name = eval_score.scorer or eval_score.name
            run = scorers.setdefault(name, ScorerRun(name, [], {}, []))
            run.metrics.update({k: _float(m.value) for k, m in eval_score.metrics.items()})

    reductions = {r.scorer: r for r in (log.reductions or [])}
    for name, run in scorers.items():
        if name in reductions:
            for s in reductions[name].samples:
                run.samples.append(
                    ScoredSample(
                        sample_id=s.sample_id,
                        score=ScoreData(s.value, s.metadata, s.answer, s.explanation),
                        sample_metadata=sample_meta.get(str(s.sample_id), {}),
                    )
                )
        else:
            for s in log.samples or []:
                score = (s.scores or {}).get(name)
                if score is None:
                    continue
                run.samples.append(
                    ScoredSample(
                        sample_id=s.id,
                        score=ScoreData(
                            score.value, score.metadata, score.answer, score.explanation
                        ),
                        sample_metadata=dict(s.metadata or {}),
                    )
                )

    error = None
    if getattr(log, "error", None) is not None:
        error = str(getattr(log.error, "message", log.error)).splitlines()[0][:200]
    return RunData(
        path=str(path or log.location or ""),
        task=task,
        study=str(metadata.get("study") or task),
        model=str(spec.model),
        status=str(log.status),
        created=str(spec.created),
        task_args=dict(spec.task_args or {}),
        task_metadata=metadata,
        epochs=int(getattr(spec.config, "epochs", None) or 1),
        n_samples=len(sample_meta),
        scorers=scorers,
        error=error,
        log_metadata=dict(getattr(log, "metadata", None) or {}),
        task_samples=getattr(spec.dataset, "samples", None),
        task_version=int(getattr(spec, "task_version", 0) or 0),
        cut=cut_text(getattr(spec.config, "limit", None), getattr(spec.config, "sample_id", None)),
    )
