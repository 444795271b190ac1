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

from cotaudit.display.text import md_code, report_text
from cotaudit.logs.data import MetricDef, RunData, ScoredSample
from cotaudit.probing.metrics import ATTACHED, METRICS, ProbeMetricOptions, score_rows
from cotaudit.probing.summaries import (
    EXACT_CURVE_KEYS,
    GAP_VALUE_KEYS,
    REPLAY_SUFFIX,
    SAMPLED_CURVE_KEYS,
    gap_keys,
    main_keys,
    per_condition,
    run_metrics,
)
from cotaudit.probing.trajectory import curve_over_steps
from cotaudit.report import compare_ci, figures
from cotaudit.report.headlines import headline_text, no_data_text, ran_text
from cotaudit.report.sections import Section, run_section
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
    lists none, the full metric (``probe_summary``) with the options the task's probe settings
    imply."""
    defs = [d for d in logged if d.name in METRICS]
    if defs:
        return defs
    options = ProbeMetricOptions(
        settings["probe"],
        settings.get("condition_key") or "condition",
        settings.get("headline"),
        settings.get("exact_headline") or None,
    )
    return [MetricDef(ATTACHED["all"], options.passed())]


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
    main = [k for k in main_keys(probe) if k in present]
    replay = [f"{k}{REPLAY_SUFFIX}" for k in main if f"{k}{REPLAY_SUFFIX}" in present]
    gaps = [
        f"replay_gap/{k}"
        for k in gap_keys(probe)
        if k in present and f"{k}{REPLAY_SUFFIX}" in present
    ]
    return main + replay + gaps


def key_values(samples: Sequence[ScoredSample], key: str) -> list[float]:
    """Per sample: the value of ``key``, or own - replayed for ``replay_gap/<summary>``."""
    if key.startswith("replay_gap/"):
        base = key.removeprefix("replay_gap/")
        return [_value(s, base) - _value(s, f"{base}{REPLAY_SUFFIX}") for s in samples]
    return [_value(s, key) for s in samples]


def _condition_means(means: Mapping[str, float], key: str, conditions: Sequence[str]) -> list[Cell]:
    """Per condition, ``key``'s run metric over its samples (:func:`per_condition` of the
    run's :func:`run_metrics`: the mean, NaN left out); a dash where none is defined."""
    cells = []
    for cond in conditions:
        mean = means.get(per_condition(key, cond), math.nan)
        cells.append(Cell(mean, "–" if math.isnan(mean) else fmt(mean)))
    return cells


def section(run: RunData, out_dir: Path, stem: str) -> Section:
    """The probe section of one run: the checked run metrics, the summaries table and the
    exact estimator's part (:func:`exact_section`)."""
    settings = _settings(run)
    probe = str(settings["probe"])
    sec, scorer = run_section(run, run.study, [SCORER])
    if scorer is None:
        return sec
    samples = scorer.samples
    condition_key = str(settings.get("condition_key") or "condition")
    pair_key = settings.get("pair_key")
    consistency = sec.check(
        METRICS.recompute(samples, metric_defs(scorer.metric_defs, settings)), scorer.metrics
    )
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
        f"Probe {md_code(probe)} over task {md_code(settings.get('wrapped_task', run.task))} "
        f"(answer form {report_text(settings.get('answer_form', '?'))}, k = "
        f"{report_text(settings.get('k', '?'))}"
        + (
            f", replayed under {md_code(settings['replay_under'])}"
            if settings.get("replay_under")
            else ""
        )
        + f"): {len(samples)} samples, {len(set(units))} units."
    )
    sec.text(" ".join(t for t in (head, ran_text(run)) if t))
    recorded = recorded_text(run)
    if recorded:
        sec.text(recorded)
    sec.text(consistency.line())
    headline = headline_text(run, {**scorer.metrics, **sec.recomputed})
    if headline:
        sec.text(headline)
    if all(math.isnan(v) for key in keys for v in key_values(samples, key)):  # or no keys
        sec.text(no_data_text("no sample has a probe summary (every value NaN)"))
        return sec
    table = Table(
        "Per-sample summaries: mean over samples", ["summary", "mean [95% CI]", *conditions]
    )
    means = run_metrics(score_rows(samples), probe, condition_key)
    for key in keys:
        mean = compare_ci.interval(compare_ci.mean_rows(units, key_values(samples, key)))
        table.add(
            key,
            compare_ci.interval_cell(mean),
            *_condition_means(means, key, conditions),
        )
    table.note = (
        f"[…]: 95% percentile bootstrap over {md_code(pair_key) if pair_key else 'sample'} "
        f"units ({compare_ci.N_BOOT} resamples, seed {compare_ci.SEED}); NaN values (no final "
        "answer, no replay) left out. Definitions: docs/probe.md."
    )
    sec.table("summaries", table)
    exact_section(sec, probe, samples, out_dir, stem)
    steps_section(sec, probe, samples, out_dir, stem)
    return sec


def recorded_text(run: RunData) -> str:
    """For a recorded log's probe (task metadata ``probe_log``): which log, written by which
    model, probed on which; a transfer probe when the two models differ. Empty otherwise."""
    record = run.task_metadata.get("probe_log")
    if not isinstance(record, dict):
        return ""
    writer, reader = str(record.get("recorded_model")), str(run.model)
    kind = (
        "a transfer probe: one model reads another's reasoning"
        if writer != reader
        else "the model that wrote it"
    )
    return (
        f"Recorded log {report_text(record.get('log'))} (task "
        f"{report_text(record.get('log_task'))}), written by {report_text(writer)}, probed on "
        f"{report_text(reader)} ({kind}); verified by the scorer "
        f"{report_text((record.get('scorer') or {}).get('name'))}. Nothing was regenerated."
    )


def sampled_curve(probe: str, sample: ScoredSample) -> list[float] | None:
    """The own prompt's sampled curve at every probed position (the zero probe included) from
    the score metadata: TRACE p = the mean of each cut's verification values; self-commitment
    c = the share of each cut's canonical answers equal to a_final (None without one, or when
    nothing was sampled)."""
    meta = sample.score.metadata or {}
    own = meta.get("own") or {}
    if probe == "trace":
        values = own.get("values")
        return None if values is None else [float(np.mean(row)) for row in values]
    canonical, a_final = own.get("canonical"), meta.get("a_final")
    if canonical is None or a_final is None:
        return None
    return [float(np.mean([a == a_final for a in row])) for row in canonical]


def steps_section(
    sec: Section, probe: str, samples: Sequence[ScoredSample], out_dir: Path, stem: str
) -> None:
    """Curves over steps, for the samples that are recorded trajectories (score metadata
    ``steps_done``): per sample, the own sampled curve at each number of complete steps
    (:func:`cotaudit.probing.trajectory.curve_over_steps`), as a table (the mean over samples
    per step beside it, n shown) and a figure of the first samples. Nothing for a run without
    trajectories."""
    label = "p" if probe == "trace" else "c"
    rows: list[tuple[str, dict[int, float]]] = []
    for s in samples:
        done = (s.score.metadata or {}).get("steps_done")
        curve = sampled_curve(probe, s)
        if done and curve is not None:
            rows.append((str(s.sample_id), curve_over_steps(done, curve)))
    if not rows:
        return
    width = max(max(c) for _, c in rows) + 1
    table = Table(
        f"Curves over steps: {label} after j complete steps",
        ["sample", *(f"j={j}" for j in range(width))],
    )
    for sample_id, by_step in rows:
        table.add(
            Cell(sample_id, report_text(sample_id)),
            *(Cell(by_step[j], fmt(by_step[j])) if j in by_step else "–" for j in range(width)),
        )
    means: list[Cell | str] = []
    for j in range(width):
        at_j = [c[j] for _, c in rows if j in c]
        means.append(
            Cell(float(np.mean(at_j)), f"{fmt(float(np.mean(at_j)))} (n={len(at_j)})")
            if at_j
            else "–"
        )
    table.add("mean", *means)
    table.note = (
        f"{label} at the last cut with j steps complete (with -T cuts=steps, the cut right "
        "after step j; j = 0 is the zero probe or a cut inside the first step); own prompt, "
        "sampled answers. Steps: docs/probe.md (Trajectories)."
    )
    sec.table("steps", table)
    shown = rows[:EXACT_FIGURE_SAMPLES]
    sec.figure(
        "step_curves",
        figures.line_panels(
            [(sample_id, list(c), [(f"own {label}", list(c.values()))]) for sample_id, c in shown],
            figures.FigureText(
                out_dir / f"{stem}_step_curves.png",
                f"{label} over recorded steps",
                caption=(
                    f"{label} after j complete steps for the first {len(shown)} of the "
                    f"{len(rows)} recorded trajectories. Definitions: docs/probe.md."
                ),
                xlabel="complete steps j",
                ylabel=label,
            ),
        ),
    )


EXACT_FIGURE_SAMPLES = 4
"""Samples drawn in the exact-curve figure (the first ones of the log)."""


def exact_curves(
    probe: str, sample: ScoredSample
) -> list[tuple[str, list[float], list[float], list[float] | None]]:
    """One sample's exact curves from its score metadata, per context with one: (context,
    t/T of each curve point, the exact curve, the sampled one in a run of both estimators, else
    None), the zero probe left out (no curve point)."""
    meta = sample.score.metadata or {}
    fractions = [float(f) for f in meta.get("fractions") or []]
    zero = len(meta.get("probed") or []) - len(meta.get("positions") or [])
    out = []
    for name in ("own", "replay"):
        ctx = meta.get(name) or {}
        exact = ctx.get(EXACT_CURVE_KEYS.get(probe, ""))
        if exact is None:
            continue
        sampled = ctx.get(SAMPLED_CURVE_KEYS.get(probe, ""))
        out.append(
            (
                name,
                fractions,
                [float(v) for v in exact[zero:]],
                None if sampled is None else [float(v) for v in sampled[zero:]],
            )
        )
    return out


def exact_section(
    sec: Section, probe: str, samples: Sequence[ScoredSample], out_dir: Path, stem: str
) -> None:
    """The exact estimator's curves of the first :data:`EXACT_FIGURE_SAMPLES` samples as a
    figure (a panel per sample: each context's exact curve, and its sampled one beside it in a
    run of both), and in a run of both the per-sample difference (mean over the probed
    positions of exact - sampled, and of |exact - sampled|) as a table, n shown. Nothing for a
    run without exact curves."""
    curves = [(s, exact_curves(probe, s)) for s in samples]
    with_exact = [(s, c) for s, c in curves if c]
    if not with_exact:
        return
    label = "p(t)" if probe == "trace" else "c(t)"
    panels = [
        (
            str(s.sample_id),
            c[0][1],
            [
                (f"{name} {kind}", y)
                for name, _, exact, sampled in c
                for kind, y in (("exact", exact), ("sampled", sampled))
                if y is not None
            ],
        )
        for s, c in with_exact[:EXACT_FIGURE_SAMPLES]
    ]
    shown = len(panels)
    sec.figure(
        "exact_curves",
        figures.line_panels(
            panels,
            figures.FigureText(
                out_dir / f"{stem}_exact_curves.png",
                f"exact {label} (teacher forcing)",
                caption=(
                    f"The exact estimator's {label}: P(a forced answer's canonical form is the "
                    f"reference) at each cut, for the first {shown} of the {len(with_exact)} "
                    "samples with an exact curve (sampled curves beside them in a run of both); "
                    "the 0% probe is left out. Definitions: docs/probe.md."
                ),
                xlabel="t / T",
                ylabel=label,
            ),
        ),
    )
    rows = [
        (s, name, len(exact), suffix)
        for s, c in with_exact
        for name, _, exact, sampled in c
        if sampled is not None
        for suffix in ["" if name == "own" else REPLAY_SUFFIX]
    ]
    if not rows:
        return
    table = Table(
        "Exact - sampled, per sample",
        ["sample", "prompt", "cuts", "mean (exact - sampled)", "mean |exact - sampled|"],
    )
    for s, name, n, suffix in rows:
        gap, gap_abs = (_value(s, f"{k}{suffix}") for k in GAP_VALUE_KEYS)
        table.add(str(s.sample_id), name, n, gap, gap_abs)
    table.note = (
        f"n = {len({str(s.sample_id) for s, *_ in rows})} samples, {len(rows)} curves; each "
        "difference is the mean over the curve's cuts (the 0% probe included) of the exact "
        "probability minus the sampled rate (value keys exact_gap, exact_gap_abs)."
    )
    sec.table("exact_gaps", table)


def compare(sections: Sequence[Section], out_dir: Path, stem: str) -> Section | None:
    """Each summary across runs: mean [CI] per run, and Δ vs the first run over shared units."""
    secs = [s for s in sections if s.run is not None and s.data.get("keys")]
    if len(secs) < 2:
        return None
    comp = Section(f"{secs[0].run.study} · comparison of runs")  # type: ignore[union-attr]
    labels = [s.run.label or s.run.model for s in secs]  # type: ignore[union-attr]
    keys = [k for k in secs[0].data["keys"] if all(k in s.data["keys"] for s in secs)]
    table = Table("Per-sample summaries across runs", ["summary", *labels])
    scored = [s.run.scored(SCORER) for s in secs if s.run is not None]
    for key in keys:
        rows = [
            compare_ci.mean_rows(s.data["units"], key_values(samples, key))
            for s, samples in zip(secs, scored, strict=True)
        ]
        compare_ci.add_compared(table, key, compare_ci.compare_runs(rows), labels[0])
    table.note = compare_ci.note("unit")
    comp.table("comparison", table)
    return comp
