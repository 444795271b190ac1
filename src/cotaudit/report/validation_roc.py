"""Detection ROC curves in ``cotaudit report``: for each run that validates (a study with probe
statistics whose samples show a wrong cue, :func:`cotaudit.validation.table.not_validated`), the
ROC curve of each probe statistic, shortcut samples against uncued ones
(:mod:`cotaudit.validation.roc`), the figure ``cotaudit validate`` writes. One section per
study, one figure per run; a study none of whose runs validates has none.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from cotaudit.report.data import RunData
from cotaudit.report.figures import FigureText, RocLine, roc_curves
from cotaudit.report.sections import Section
from cotaudit.validation.checkpoints import checkpoint_card
from cotaudit.validation.roc import RocCurve
from cotaudit.validation.roc import roc_curves as curves_of
from cotaudit.validation.samples import SampleError
from cotaudit.validation.statistics import SCORERS, statistics_of
from cotaudit.validation.table import measured_statistics, not_validated, samples_of


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:40] or "study"


def run_curves(run: RunData) -> tuple[str, list[RocCurve]] | None:
    """The run in words (``hint-follower step 100``, ``base model ...``) and its detection ROC
    curves; None for a run that does not validate or has no curve."""
    scorer = run.scorer(SCORERS.get(run.study, ""))
    if scorer is None or not statistics_of(run.study):
        return None
    try:
        samples = samples_of(run.study, scorer.samples)
    except SampleError:
        return None
    if not_validated(run.study, samples) is not None:
        return None
    curves = curves_of(samples, measured_statistics(run.study, samples))
    if not curves:
        return None
    card = checkpoint_card(run.model)
    who = f"base model {run.model}" if card is None else f"{card.organism} step {card.step}"
    return who, curves


def roc_lines(curves: Sequence[RocCurve]) -> list[RocLine]:
    """The lines of a ROC figure: each curve labelled with its AUROC and samples per class."""
    return [
        RocLine(f"{c.label} (AUROC {c.auroc:.3f}, {c.n_positive} / {c.n_negative})", c.fpr, c.tpr)
        for c in curves
    ]


def roc_title(study: str, who: str) -> str:
    """A ROC figure's title (``who``: the run in words, from logs and cards)."""
    short = who if len(who) <= 80 else who[:79] + "…"
    return f"{study} · {short}\ndetection ROC: shortcut against uncued samples"


def sections(runs: Sequence[RunData], out: Path) -> dict[str, list[Section]]:
    """Per study, its detection-ROC section (studies with no run that validates left out)."""
    found: dict[str, list[Section]] = {}
    for study in dict.fromkeys(r.study for r in runs):
        measured = [m for r in runs if r.study == study and (m := run_curves(r)) is not None]
        if not measured:
            continue
        sec = Section(f"{study} · detection ROC")
        sec.text(
            "Each run whose samples show a wrong cue: each probe statistic's ROC curve, "
            "shortcut samples (answered with a cue the model does not reach alone) against "
            "uncued ones, the labels read from the model's own answers; the legend gives each "
            "AUROC and the samples per class (shortcut / uncued). `cotaudit validate` gives "
            "their intervals."
        )
        for i, (who, curves) in enumerate(measured, 1):
            text = FigureText(
                out / f"{_slug(study)}-roc-{i:02d}.png",
                roc_title(study, who),
                caption=f"{study}, {who}: detection ROC curves per probe statistic.",
            )
            sec.figure(f"roc-{i:02d}", roc_curves(roc_lines(curves), text))
        found[study] = [sec]
    return found
