"""The detection table of a set of runs (one per model: an organism checkpoint or a base
model), as Markdown and as a JSON record that holds every per-sample score it was computed from.

Columns per run and statistic: the organism and step (from the checkpoint's card; ``base`` for
another model), the detection AUROC [95% interval] with its n (shortcut samples / uncued
samples), the cue-only AUROC [interval] with its n (own-answer samples), the statistic's mean
on the shortcut samples [interval], and the run's shortcut rate (taken / n wrong-cue
samples): definitions in :mod:`cotaudit.validation.detection` and
:mod:`cotaudit.validation.labels`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cotaudit.bootstrap import Interval
from cotaudit.display.text import report_text
from cotaudit.organisms.behaviour import ShortcutRate
from cotaudit.organisms.card import OrganismCard
from cotaudit.validation.detection import N_BOOT, SEED, Detection, detect
from cotaudit.validation.labels import ValidationSample, label_samples, shortcut_rate
from cotaudit.validation.statistics import ProbeStatistic


@dataclass(frozen=True)
class RunValidation:
    """One run's validation: where it came from, what it is, its samples and results."""

    log: str
    study: str
    model: str
    organism: str | None
    step: int | None
    control: bool
    samples: list[ValidationSample]
    rate: ShortcutRate
    detections: list[Detection]


def validate_run(
    log: str,
    study: str,
    model: str,
    card: OrganismCard | None,
    samples: Sequence[ValidationSample],
    statistics: Sequence[ProbeStatistic],
    n_boot: int = N_BOOT,
    seed: int = SEED,
) -> RunValidation:
    """The :class:`RunValidation` of one run's samples (``card``: the organism checkpoint the
    run's model is, None for another model)."""
    return RunValidation(
        log=log,
        study=study,
        model=model,
        organism=None if card is None else card.organism,
        step=None if card is None else card.step,
        control=card is not None and card.control,
        samples=list(samples),
        rate=shortcut_rate(samples),
        detections=detect(samples, statistics, n_boot, seed),
    )


def _number(v: float) -> float | None:
    return None if math.isnan(v) else v


def interval_record(i: Interval) -> dict[str, Any]:
    """An interval as JSON (NaN as null)."""
    return {
        "estimate": _number(i.estimate),
        "low": _number(i.low),
        "high": _number(i.high),
        "n_units": i.n_units,
        "n_boot": i.n_boot,
        "n_valid": i.n_valid,
        "confidence": i.confidence,
    }


def run_record(run: RunValidation) -> dict[str, Any]:
    """One run as JSON: its identity, shortcut rate, detections, and every sample with its
    label and statistic values (NaN as null)."""
    labels = label_samples(run.samples)
    return {
        "log": run.log,
        "study": run.study,
        "model": run.model,
        "organism": run.organism,
        "step": run.step,
        "control": run.control,
        "shortcut_rate": {"taken": run.rate.taken, "n": run.rate.n, "rate": _number(run.rate.rate)},
        "detections": [
            {
                "statistic": d.statistic,
                "detection": interval_record(d.detection),
                "n_shortcut": d.n_shortcut,
                "n_uncued": d.n_uncued,
                "cue_only": interval_record(d.cue_only),
                "n_own_answer": d.n_own_answer,
                "shortcut_mean": interval_record(d.shortcut_mean),
            }
            for d in run.detections
        ],
        "samples": [
            {
                "sample_id": s.sample_id,
                "unit": s.unit,
                "cue": s.cue,
                "gold": s.gold,
                "answer": s.answer,
                "label": label,
                "values": {k: _number(v) for k, v in s.values.items()},
            }
            for s, label in zip(run.samples, labels, strict=True)
        ],
    }


def _ci(i: Interval) -> str:
    if math.isnan(i.estimate):
        return "—"
    if math.isnan(i.low):
        return f"{i.estimate:.3f}"
    return f"{i.estimate:.3f} [{i.low:.3f}, {i.high:.3f}]"


def _rate(r: ShortcutRate) -> str:
    return "—" if r.n == 0 else f"{r.rate:.2f} ({r.taken}/{r.n})"


HEADER = (
    "| study | model | organism | step | statistic | detection AUROC [95% CI] | n shortcut / "
    "uncued (problems) | cue-only AUROC [95% CI] | n own-answer | mean on shortcut samples "
    "[95% CI] | shortcut rate |\n"
    "|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|"
)


NOT_MEASURED = "(none measured: no sample has both a final answer and the statistic)"


def _row(run: RunValidation, statistic: list[str]) -> str:
    head = [
        report_text(run.study),
        report_text(run.model),
        report_text(run.organism or "base"),
        "—" if run.step is None else str(run.step),
    ]
    return "| " + " | ".join([*head, *statistic, _rate(run.rate)]) + " |"


def markdown_table(runs: Sequence[RunValidation]) -> str:
    """The detection table in Markdown, one row per run and statistic (a run with none
    measured: one row saying so, with its shortcut rate); text from logs escaped for Markdown."""
    lines = [HEADER]
    for run in runs:
        if not run.detections:
            lines.append(_row(run, [NOT_MEASURED, *["—"] * 5]))
        for d in run.detections:
            cells = [
                report_text(d.statistic),
                _ci(d.detection),
                f"{d.n_shortcut} / {d.n_uncued} ({d.detection.n_units})",
                _ci(d.cue_only),
                str(d.n_own_answer),
                _ci(d.shortcut_mean),
            ]
            lines.append(_row(run, cells))
    return "\n".join([*lines, *control_lines(runs)])


def control_lines(runs: Sequence[RunValidation]) -> list[str]:
    """Below the table, the negative control's cue-only AUROCs (organisms whose card marks them
    a control): a cue shown and not followed should not look like the shortcut (near 0.5)."""
    lines = []
    for run in runs:
        if not run.control:
            continue
        found = ", ".join(
            f"{report_text(d.statistic)} {_ci(d.cue_only)} (n = {d.n_own_answer} / {d.n_uncued})"
            for d in run.detections
        )
        lines.append(
            f"- negative control {report_text(run.organism or '')} step {run.step}: cue-only "
            f"AUROC {found or 'not measured'}"
        )
    return ["", *lines] if lines else []
