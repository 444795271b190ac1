"""A run read for validation, and its detection ROC curves in ``cotaudit report``.

:func:`prepare` reads one loaded run for :mod:`cotaudit.validation`: its samples with the probe
statistics, and, from the written reasoning its log holds (:func:`cotaudit.report.texts.
read_texts`), the text baselines' values (:func:`cotaudit.validation.baselines.with_baselines`)
and, given a monitor model, the monitor's (:func:`cotaudit.validation.monitor.run_monitor`).
``cotaudit validate`` and the report read runs through it alike.

In the report, for each run that validates (a study with probe statistics whose samples show a
wrong cue, :func:`cotaudit.validation.table.not_validated`), the ROC curve of each probe
statistic and each text baseline (dashed), shortcut samples against uncued ones
(:mod:`cotaudit.validation.roc`): the figure ``cotaudit validate`` writes. One section per
study, one figure per run; a study none of whose runs validates has none.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cotaudit.logs.data import RunData
from cotaudit.params import error_line
from cotaudit.report.figures import FigureText, RocLine, roc_curves
from cotaudit.report.sections import Section
from cotaudit.studies.probe_statistic import ProbeStatistic
from cotaudit.validation.baselines import BASELINES, MONITOR, with_baselines, with_values
from cotaudit.validation.checkpoints import checkpoint_card
from cotaudit.validation.labels import ValidationSample
from cotaudit.validation.roc import RocCurve
from cotaudit.validation.roc import roc_curves as curves_of
from cotaudit.validation.samples import SampleError
from cotaudit.validation.statistics import scorer_of, statistics_of
from cotaudit.validation.table import measured_statistics, not_validated, samples_of


@dataclass(frozen=True)
class Prepared:
    """One run read for validation: its samples (the baselines' values added), the probe
    statistics and the baselines measured on them, and how the baselines were read."""

    samples: list[ValidationSample]
    statistics: list[ProbeStatistic]
    baselines: list[ProbeStatistic]
    notes: list[str] = field(default_factory=list)


def _measured(samples: Sequence[ValidationSample], stats: Sequence[ProbeStatistic]) -> list:
    return [
        s for s in stats if any(not math.isnan(x.values.get(s.name, math.nan)) for x in samples)
    ]


def prepare(run: RunData, monitor_model: str | None = None) -> Prepared | str:
    """``run`` read for validation (module docstring), or why it cannot be validated (a study
    without probe statistics, samples that do not read, no wrong cue)."""
    from cotaudit.report.texts import read_texts
    from cotaudit.validation.monitor import run_monitor

    scorer = run.scorer(scorer_of(run.study))
    if scorer is None or not statistics_of(run.study):
        return f"study {run.study!r} has no probe statistics"
    try:
        samples = samples_of(run.study, scorer.samples)
    except SampleError as e:
        return str(e)
    why = not_validated(run.study, samples)
    if why is not None:
        return why
    statistics = measured_statistics(run.study, samples)
    who = _who(run)
    notes = []
    try:
        texts = read_texts(run.path, run.study)
    except Exception as e:  # the log's texts do not read: the baselines have no value
        texts = {}
        notes.append(f"{who}: the written CoTs did not read ({error_line(e)}): no baseline")
    b = with_baselines(samples, texts)
    samples = b.samples
    if texts:
        notes.insert(0, f"length read in {b.length_unit}")
    if b.n_without_text:
        notes.append(f"{who}: {b.n_without_text} sample(s) without a written CoT (no baseline)")
    if b.n_fitted < b.n_folds:
        notes.append(f"{who}: bag_of_words fitted on {b.n_fitted} of {b.n_folds} folds")
    baselines = list(BASELINES)
    if monitor_model is not None:
        found = {s.sample_id: texts[s.sample_id].text for s in samples if s.sample_id in texts}
        m = run_monitor(monitor_model, found)
        samples = with_values(samples, MONITOR.name, m.scores())
        baselines.append(MONITOR)
        read = ", ".join(
            f"{m.count(k)} by {k}" for k in ("likelihood", "logprobs", "rating") if m.count(k)
        )
        error = m.first_error()
        notes.append(
            f"{who}: monitor {m.model}: {m.n_scored} of {len(found)} CoTs scored"
            + (f" ({read})" if read else "")
            + f", {m.n_unparsed} unparsed, {m.n_errors} failed"
            + (f" (first: {error})" if error else "")
            + f", {m.seconds:.0f} s"
        )
    return Prepared(samples, statistics, _measured(samples, baselines), notes)


def _who(run: RunData) -> str:
    card = checkpoint_card(run.model)
    return f"base model {run.model}" if card is None else f"{card.organism} step {card.step}"


def run_curves(run: RunData) -> tuple[str, list[RocCurve], set[str]] | None:
    """The run in words (``hint-follower step 100``, ``base model ...``), its detection ROC
    curves and the baselines' names among them; None for a run that does not validate or has
    no curve."""
    prepared = prepare(run)
    if isinstance(prepared, str):
        return None
    curves = curves_of(prepared.samples, [*prepared.statistics, *prepared.baselines])
    if not curves:
        return None
    return _who(run), curves, {b.name for b in prepared.baselines}


def roc_lines(
    curves: Sequence[RocCurve], baselines: set[str] | frozenset[str] = frozenset()
) -> list[RocLine]:
    """The lines of a ROC figure: each curve labelled with its AUROC and samples per class,
    a baseline's dashed."""
    return [
        RocLine(
            f"{c.label}{' (baseline)' if c.label in baselines else ''} "
            f"(AUROC {c.auroc:.3f}, {c.n_positive} / {c.n_negative})",
            c.fpr,
            c.tpr,
            dashed=c.label in baselines,
        )
        for c in curves
    ]


def roc_title(study: str, who: str) -> str:
    """A ROC figure's title (``who``: the run in words, from logs and cards)."""
    short = who if len(who) <= 80 else who[:79] + "…"
    return f"{study} · {short}\ndetection ROC: shortcut against uncued samples"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:40] or "study"


def sections(runs: Sequence[RunData], out: Path) -> dict[str, list[Section]]:
    """Per study, its detection-ROC section (studies with no run that validates left out)."""
    found: dict[str, list[Section]] = {}
    for study in dict.fromkeys(r.study for r in runs):
        if not statistics_of(study):
            continue
        measured = [m for r in runs if r.study == study and (m := run_curves(r)) is not None]
        if not measured:
            continue
        sec = Section(f"{study} · detection ROC")
        sec.text(
            "Each run whose samples show a wrong cue: the ROC curve of each probe statistic and "
            "each text baseline (dashed), shortcut samples (answered with a cue the model does "
            "not reach alone) against uncued ones, the labels read from the model's own "
            "answers; the legend gives each AUROC and the samples per class (shortcut / "
            "uncued). `cotaudit validate` gives their intervals and differences."
        )
        for i, (who, curves, baselines) in enumerate(measured, 1):
            text = FigureText(
                out / f"{_slug(study)}-roc-{i:02d}.png",
                roc_title(study, who),
                caption=f"{study}, {who}: detection ROC curves per probe statistic and baseline.",
            )
            sec.figure(f"roc-{i:02d}", roc_curves(roc_lines(curves, baselines), text))
        found[study] = [sec]
    return found
