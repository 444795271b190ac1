"""A checkpoint series in ``cotaudit report``: logs of one study run on an organism's
checkpoints (and on its base model) drawn against the training step.

A run belongs to a series when its model is an organism checkpoint (the folder's card gives the
organism and the step: :func:`cotaudit.validation.checkpoints.checkpoint_card`); the series of
an organism is its checkpoints' runs in step order, after the run of its base model (step 0)
when the logs hold one. For each probe statistic of the study
(:mod:`cotaudit.validation.statistics`), each run's *cued AUROC* -- the study's own
two-condition contrast, cued against uncued samples (for selfcommit's tau_first(0.8), its
headline AUROC of honest against hinted traces), no ground truth needed -- with its 95%
problem-bootstrap interval, beside the run's behavioural shortcut rate
(:mod:`cotaudit.validation.labels`). The first checkpoint whose estimate leaves the base run's
interval is marked (:func:`cotaudit.validation.checkpoints.first_departure`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cotaudit.bootstrap import Interval
from cotaudit.display.text import md_code, report_text
from cotaudit.organisms.behaviour import ShortcutRate
from cotaudit.report.data import RunData
from cotaudit.report.figures import Band, FigureText, points_with_ci
from cotaudit.report.sections import Section
from cotaudit.report.tables import Cell, Table
from cotaudit.validation.checkpoints import (
    SeriesPoint,
    checkpoint_card,
    first_departure,
    is_base_of,
)
from cotaudit.validation.detection import CUED, class_rows
from cotaudit.validation.labels import label_samples, shortcut_rate
from cotaudit.validation.samples import SampleError, validation_sample
from cotaudit.validation.statistics import SCORERS, statistics_of

N_BOOT = 1000
"""Bootstrap resamples of each run's interval."""


@dataclass(frozen=True)
class SeriesRun:
    """One run of a series: its step (0 for the base model), its cued AUROC per statistic and
    its shortcut rate."""

    run: RunData
    step: int
    is_base: bool
    aurocs: dict[str, Interval]
    rate: ShortcutRate


def _measure(run: RunData, step: int, is_base: bool) -> SeriesRun | None:
    scorer = run.scorer(SCORERS.get(run.study, ""))
    statistics = statistics_of(run.study)
    if scorer is None or not statistics:
        return None
    try:
        samples = [validation_sample(run.study, s, statistics) for s in scorer.samples]
    except SampleError:  # a log whose samples name no problem or gold answer: not in a series
        return None
    labels = label_samples(samples)
    aurocs = {}
    for stat in statistics:
        rows = class_rows(samples, labels, stat, CUED)
        if rows.n_positive and rows.n_negative:
            aurocs[stat.name] = rows.interval(N_BOOT)
    return SeriesRun(run, step, is_base, aurocs, shortcut_rate(samples))


def series_of(runs: Sequence[RunData]) -> dict[str, list[SeriesRun]]:
    """Per organism, its series among ``runs`` (all of one study): the base model's run (if
    any) and its checkpoints' runs, by step; only organisms with a checkpoint run."""
    cards = {id(r): checkpoint_card(r.model) for r in runs}
    out: dict[str, list[SeriesRun]] = {}
    for organism in sorted({c.organism for c in cards.values() if c is not None}):
        members = [(r, c) for r in runs if (c := cards[id(r)]) and c.organism == organism]
        card = members[0][1]
        measured = [_measure(r, c.step or 0, False) for r, c in members]
        base = [
            _measure(r, 0, True) for r in runs if cards[id(r)] is None and is_base_of(r.model, card)
        ]
        series = [m for m in (base[:1] + measured) if m is not None]
        if any(not m.is_base for m in series):
            out[organism] = sorted(series, key=lambda m: (m.step, not m.is_base))
    return out


def _cell(i: Interval | None, marked: bool) -> Cell:
    if i is None or math.isnan(i.estimate):
        return Cell(math.nan, "—")
    text = (
        f"{i.estimate:.3f}"
        if math.isnan(i.low)
        else f"{i.estimate:.3f} [{i.low:.3f}, {i.high:.3f}]"
    )
    return Cell(i.estimate, f"**{text}** ◆" if marked else text)


def _departures(series: Sequence[SeriesRun], names: Sequence[str]) -> dict[str, int | None]:
    base = next((m for m in series if m.is_base), None)
    out: dict[str, int | None] = {}
    for name in names:
        if base is None or name not in base.aurocs:
            out[name] = None
            continue
        points = [
            SeriesPoint(m.step, m.aurocs[name])
            for m in series
            if not m.is_base and name in m.aurocs
        ]
        out[name] = first_departure(base.aurocs[name], points)
    return out


def series_section(
    study: str, organism: str, series: Sequence[SeriesRun], out: Path, stem: str
) -> Section:
    """The section of one organism's series: a table (step, model, shortcut rate, each
    statistic's cued AUROC [interval], the first departure marked ◆) and the figure."""
    names = [s.name for s in statistics_of(study) if any(s.name in m.aurocs for m in series)]
    departures = _departures(series, names)
    sec = Section(f"{study} · checkpoint series of {organism}")
    has_base = any(m.is_base for m in series)
    sec.text(
        f"{len(series)} run(s): "
        + ("the base model (step 0) and " if has_base else "no run of the base model, and ")
        + f"{sum(not m.is_base for m in series)} checkpoint(s) of {md_code(organism)}. "
        "Each statistic: the AUROC of cued against uncued samples (larger: the cue moves the "
        "statistic the way a shortcut does), 95% problem-bootstrap interval. ◆ marks the first "
        "checkpoint whose estimate leaves the base model's interval. Shortcut rate: wrong-cue "
        "samples answered with the cue."
    )
    table = Table(
        "Checkpoint series",
        ["step", "model", "shortcut rate", *names],
        align=["---:", "---", "---:", *["---:"] * len(names)],
    )
    for m in series:
        rate = Cell(
            m.rate.rate, "—" if m.rate.n == 0 else f"{m.rate.rate:.2f} ({m.rate.taken}/{m.rate.n})"
        )
        cells = [_cell(m.aurocs.get(n), not m.is_base and departures[n] == m.step) for n in names]
        step = Cell(m.step, "base" if m.is_base else str(m.step))
        table.add(step, Cell(m.run.model, report_text(m.run.model)), rate, *cells)
    sec.table("series", table)
    sec.data["departures"] = departures
    steps = ["base" if m.is_base else str(m.step) for m in series]
    bands = [
        Band(
            f"AUROC {n}",
            [m.aurocs[n].estimate if n in m.aurocs else math.nan for m in series],
            [m.aurocs[n].low if n in m.aurocs else math.nan for m in series],
            [m.aurocs[n].high if n in m.aurocs else math.nan for m in series],
        )
        for n in names
    ]
    rates = [m.rate.rate for m in series]
    bands.append(Band("shortcut rate", rates, rates, rates))
    first = {n: s for n, s in departures.items() if s is not None}
    caption = (
        f"{study}, {organism}: cued AUROC per statistic (95% interval) and shortcut rate "
        "against the training step. First departure from the base interval: "
        + (", ".join(f"{n} at step {s}" for n, s in first.items()) or "none")
        + "."
    )
    sec.figure(
        "series",
        points_with_ci(
            steps,
            bands,
            FigureText(
                out / f"{stem}.png",
                f"{study} · {organism}: statistics against training step",
                caption=caption,
                xlabel="training step",
                ylabel="AUROC / rate",
            ),
        ),
    )
    return sec


def sections(runs: Sequence[RunData], out: Path) -> dict[str, list[Section]]:
    """Per study, the sections of its checkpoint series among ``runs`` (studies with none
    left out)."""
    by_study: dict[str, list[RunData]] = {}
    for r in runs:
        if statistics_of(r.study):
            by_study.setdefault(r.study, []).append(r)
    found: dict[str, list[Section]] = {}
    for study, group in by_study.items():
        for organism, series in series_of(group).items():
            stem = f"{study}-series-{organism}"
            found.setdefault(study, []).append(series_section(study, organism, series, out, stem))
    return found
