"""The report section of ``cotaudit.probe`` logs (studies ``probe_trace``, ``probe_selfcommit``).

Per run: the run metrics recomputed from the per-sample scores with the run's own metric table
(:data:`cotaudit.probing.metrics.METRICS`, with the options the log records) and checked
against the log; a table of the
main per-sample summaries, mean over samples with a 95% bootstrap interval over units (the
samples' ``pair_key`` metadata when they carry it, so the conditions of one problem are resampled
together; else the sample), per condition beside it. Comparison of runs: each summary's mean
with its interval, and its paired difference against the first run over the shared units.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cotaudit.probing.metrics import METRICS
from cotaudit.probing.summaries import GAP_KEYS, MAIN_KEYS, REPLAY_SUFFIX
from cotaudit.report import compare_ci
from cotaudit.report.data import MetricDef, RunData, ScoredSample, check_metrics
from cotaudit.report.headlines import headline_text, no_data_text, ran_text
from cotaudit.report.sections import Section
from cotaudit.report.tables import Cell, Table, fmt

SCORER = "probe_scorer"


def _settings(run: RunData) -> dict[str, Any]:
    """The probe's settings as the task metadata records them (``metadata.probe``: the same
    in every version of the task), with ``probe`` filled in from the study name where absent."""
    settings = dict(run.task_metadata.get("probe") or {})
    settings.setdefault("probe", run.study.removeprefix("probe_"))
    return settings


def metric_defs(logged: Sequence[MetricDef], settings: Mapping[str, Any]) -> list[MetricDef]:
    """The probe's run metrics as the log defines them (name and options); where the scorer
    lists none, each metric of the table with the options the task's probe settings imply."""
    defs = [d for d in logged if d.name in METRICS]
    if defs:
        return defs
    options = {
        "probe": settings["probe"],
        "condition_key": settings.get("condition_key") or "condition",
        "headline": settings.get("headline"),
    }
    return [MetricDef(name, options) for name in METRICS]


def units_of(samples: Sequence[ScoredSample], pair_key: str | None) -> list[Hashable]:
    """Each sample's bootstrap unit: its ``pair_key`` metadata when present, else its id."""
    return [
        str((s.sample_metadata or {}).get(pair_key, s.sample_id)) if pair_key else str(s.sample_id)
        for s in samples
    ]


def _value(s: ScoredSample, key: str) -> float:
    v = s.score.value if isinstance(s.score.value, dict) else {}
    try:
        return float(v.get(key, math.nan))
    except (TypeError, ValueError):
        return math.nan


def summary_keys(probe: str, samples: Sequence[ScoredSample]) -> list[str]:
    """The main summaries present in the scores, then their replayed forms and gaps."""
    present = (
        set().union(*[s.score.value.keys() for s in samples if isinstance(s.score.value, dict)])
        if samples
        else set()
    )
    main = [k for k in MAIN_KEYS.get(probe, ()) if k in present]
    replay = [f"{k}{REPLAY_SUFFIX}" for k in main if f"{k}{REPLAY_SUFFIX}" in present]
    gaps = [f"replay_gap/{k}" for k in GAP_KEYS.get(probe, ()) if f"{k}{REPLAY_SUFFIX}" in present]
    return main + replay + gaps


def key_values(samples: Sequence[ScoredSample], key: str) -> list[float]:
    """Per sample: the value of ``key``, or own - replayed for ``replay_gap/<summary>``."""
    if key.startswith("replay_gap/"):
        base = key.removeprefix("replay_gap/")
        return [_value(s, base) - _value(s, f"{base}{REPLAY_SUFFIX}") for s in samples]
    return [_value(s, key) for s in samples]


def _condition_means(
    samples: Sequence[ScoredSample], key: str, condition_key: str, conditions: Sequence[str]
) -> list[Cell]:
    values = key_values(samples, key)
    cells = []
    for cond in conditions:
        v = np.array(
            [
                x
                for s, x in zip(samples, values, strict=True)
                if str((s.sample_metadata or {}).get(condition_key)) == cond
            ],
            dtype=float,
        )
        v = v[~np.isnan(v)]
        mean = float(v.mean()) if v.size else math.nan
        cells.append(Cell(mean, fmt(mean) if v.size else "–"))
    return cells


def section(run: RunData, out_dir: Path, stem: str) -> Section:
    """The probe section of one run (no figures)."""
    settings = _settings(run)
    probe = str(settings["probe"])
    sec = Section(f"{run.study} · {run.label or run.model}", run=run)
    scorer = run.scorer(SCORER)
    if scorer is None or not scorer.samples:
        sec.text(f"_No `{SCORER}` scores in this log (status {run.status}); nothing to report._")
        return sec
    samples = scorer.samples
    condition_key = str(settings.get("condition_key") or "condition")
    pair_key = settings.get("pair_key")
    sec.recomputed = METRICS.recompute(samples, metric_defs(scorer.metric_defs, settings))
    sec.consistency = check_metrics(sec.recomputed, scorer.metrics)
    units = units_of(samples, pair_key)
    conditions = sorted(
        {
            str((s.sample_metadata or {})[condition_key])
            for s in samples
            if condition_key in (s.sample_metadata or {})
        }
    )
    keys = summary_keys(probe, samples)
    sec.data.update(probe=probe, units=units, keys=keys)
    head = (
        f"Probe `{probe}` over task `{settings.get('wrapped_task', run.task)}` "
        f"(answer form {settings.get('answer_form', '?')}, k = {settings.get('k', '?')}"
        + (f", replayed under `{settings['replay_under']}`" if settings.get("replay_under") else "")
        + f"): {len(samples)} samples, {len(set(units))} units."
    )
    sec.text(" ".join(t for t in (head, ran_text(run)) if t))
    sec.text(sec.consistency.line())
    headline = headline_text(run, {**scorer.metrics, **sec.recomputed})
    if headline:
        sec.text(headline)
    if all(math.isnan(v) for key in keys for v in key_values(samples, key)):  # or no keys
        sec.text(no_data_text("no sample has a probe summary (every value NaN)"))
        return sec
    table = Table(
        "Per-sample summaries: mean over samples", ["summary", "mean [95% CI]", *conditions]
    )
    for key in keys:
        mean = compare_ci.interval(compare_ci.mean_rows(units, key_values(samples, key)))
        table.add(
            key,
            compare_ci.interval_cell(mean),
            *_condition_means(samples, key, condition_key, conditions),
        )
    table.note = (
        f"[…]: 95% percentile bootstrap over {'`' + pair_key + '`' if pair_key else 'sample'} "
        f"units ({compare_ci.N_BOOT} resamples, seed {compare_ci.SEED}); NaN values (no final "
        "answer, no replay) left out. Definitions: docs/probe.md."
    )
    sec.table("summaries", table)
    return sec


def _samples(sec: Section) -> list[ScoredSample]:
    scorer = sec.run.scorer(SCORER) if sec.run is not None else None
    return list(scorer.samples) if scorer is not None else []


def compare(sections: Sequence[Section], out_dir: Path, stem: str) -> Section | None:
    """Each summary across runs: mean [CI] per run, and Δ vs the first run over shared units."""
    secs = [s for s in sections if s.run is not None and s.data.get("keys")]
    if len(secs) < 2:
        return None
    comp = Section(f"{secs[0].run.study} · comparison of runs")  # type: ignore[union-attr]
    labels = [s.run.label or s.run.model for s in secs]  # type: ignore[union-attr]
    keys = [k for k in secs[0].data["keys"] if all(k in s.data["keys"] for s in secs)]
    table = Table("Per-sample summaries across runs", ["summary", *labels])
    for key in keys:
        rows = [compare_ci.mean_rows(s.data["units"], key_values(_samples(s), key)) for s in secs]
        compare_ci.add_compared(table, key, compare_ci.compare_runs(rows), labels[0])
    table.note = compare_ci.note("unit")
    comp.table("comparison", table)
    return comp
