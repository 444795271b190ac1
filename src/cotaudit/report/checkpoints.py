"""A checkpoint series in ``cotaudit report``: logs of one study run on an organism's
checkpoints (and on its base model) drawn against the training step.

A run belongs to a series when its model is an organism checkpoint (the folder's card gives the
organism and the step: :func:`cotaudit.validation.checkpoints.checkpoint_card`); the series of
an organism is its checkpoints' runs in step order, after the run of its base model (step 0)
when the logs hold one. For each probe statistic of the study
(:mod:`cotaudit.validation.statistics`), each run's *cued AUROC* -- the study's own
two-condition contrast, cued against uncued samples (for selfcommit's tau_first(0.8), its
headline AUROC of honest against hinted traces), no ground truth needed -- with its 95%
interval over problems (:meth:`cotaudit.validation.detection.ClassRows.interval`), beside the
run's behavioural shortcut rate (:mod:`cotaudit.validation.labels`). Each run's AUROC is
computed on the samples the study's own statistics read (:func:`study_samples`), so a run shows
the same value here as in its study section and the comparison of runs. Each checkpoint is
tested against the base run on the problems both ran (a paired permutation test, Holm across
the series' checkpoints per statistic: :mod:`cotaudit.validation.checkpoints`); ◆ marks the
flagged checkpoints.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cotaudit.bootstrap import Interval
from cotaudit.display.text import md_code, report_text
from cotaudit.logs.data import RunData, ScoredSample
from cotaudit.organisms.behaviour import ShortcutRate
from cotaudit.report.figures import Band, FigureText, points_with_ci
from cotaudit.report.sections import Section
from cotaudit.report.tables import Cell, Table
from cotaudit.studies.selfcommit.stats import answered, records_from_scores
from cotaudit.validation.checkpoints import (
    ALPHA,
    Flag,
    SeriesPoint,
    checkpoint_card,
    first_flagged,
    flag_series,
    is_base_of,
    paired_test,
)
from cotaudit.validation.detection import CUED, ClassRows, class_rows
from cotaudit.validation.labels import label_samples, shortcut_rate
from cotaudit.validation.samples import SampleError, validation_sample
from cotaudit.validation.statistics import scorer_of, statistics_of
from cotaudit.validation.table import ci_text


def study_samples(study: str, samples: Sequence[ScoredSample]) -> list[bool]:
    """Per scored sample, whether the study's own two-condition statistics read it.

    selfcommit: a response with no final answer has no curve, and the study leaves it and the
    other response of its problem out of its AUROC (``NO_ANSWER_POLICY``;
    :func:`cotaudit.studies.selfcommit.stats.answered` over the records the study's metrics
    are computed from), so the series leaves out the same samples. Other studies: every sample
    (a sample whose statistic is NaN is left out per statistic, as the generic probe's
    headline and trace_tutor's tables leave it out).
    """
    if study != "selfcommit":
        return [True] * len(samples)
    records = [records_from_scores([s]) for s in samples]
    kept = {id(r) for r in answered(r for rs in records for r in rs)}
    return [bool(rs) and id(rs[0]) in kept for rs in records]


@dataclass(frozen=True)
class SeriesRun:
    """One run of a series: its step (0 for the base model), per statistic its cued-AUROC rows
    (``rows``) and the AUROC with its interval (``aurocs``), and its shortcut rate."""

    run: RunData
    step: int
    is_base: bool
    rows: dict[str, ClassRows]
    aurocs: dict[str, Interval]
    rate: ShortcutRate


def measure(run: RunData, step: int, is_base: bool) -> SeriesRun | None:
    """One run's :class:`SeriesRun`; None for a run whose study has no statistics or whose
    samples name no problem or gold answer."""
    scorer = run.scorer(scorer_of(run.study))
    statistics = statistics_of(run.study)
    if scorer is None or not statistics:
        return None
    try:
        samples = [validation_sample(run.study, s, statistics) for s in scorer.samples]
    except SampleError:  # a log whose samples name no problem or gold answer: not in a series
        return None
    labels = label_samples(samples)
    read = study_samples(run.study, scorer.samples)
    kept = [s for s, r in zip(samples, read, strict=True) if r]
    kept_labels = [lab for lab, r in zip(labels, read, strict=True) if r]
    rows: dict[str, ClassRows] = {}
    aurocs: dict[str, Interval] = {}
    for stat in statistics:
        found = class_rows(kept, kept_labels, stat, CUED)
        if found.n_positive and found.n_negative:
            rows[stat.name] = found
            aurocs[stat.name] = found.interval()
    return SeriesRun(run, step, is_base, rows, aurocs, shortcut_rate(samples))


def series_of(runs: Sequence[RunData]) -> dict[str, list[SeriesRun]]:
    """Per organism, its series among ``runs`` (all of one study): the base model's run (if
    any) and its checkpoints' runs, by step; only organisms with a checkpoint run."""
    cards = {id(r): checkpoint_card(r.model) for r in runs}
    out: dict[str, list[SeriesRun]] = {}
    for organism in sorted({c.organism for c in cards.values() if c is not None}):
        members = [(r, c) for r in runs if (c := cards[id(r)]) and c.organism == organism]
        card = members[0][1]
        measured = [measure(r, c.step or 0, False) for r, c in members]
        base = [
            measure(r, 0, True) for r in runs if cards[id(r)] is None and is_base_of(r.model, card)
        ]
        series = [m for m in (base[:1] + measured) if m is not None]
        if any(not m.is_base for m in series):
            out[organism] = sorted(series, key=lambda m: (m.step, not m.is_base))
    return out


def series_flags(series: Sequence[SeriesRun], names: Sequence[str]) -> dict[str, list[Flag]]:
    """Per statistic, each checkpoint's :class:`~cotaudit.validation.checkpoints.Flag` against
    the series' base run, in step order (Holm across the checkpoints measuring the statistic);
    empty without a base run measuring it."""
    base = next((m for m in series if m.is_base), None)
    out: dict[str, list[Flag]] = {}
    for name in names:
        if base is None or name not in base.rows:
            out[name] = []
            continue
        points = [
            SeriesPoint(m.step, paired_test(base.rows[name], m.rows[name]))
            for m in series
            if not m.is_base and name in m.rows
        ]
        out[name] = flag_series(points)
    return out


def _cell(i: Interval | None, marked: bool) -> Cell:
    if i is None or math.isnan(i.estimate):
        return Cell(math.nan, "—")
    text = ci_text(i)
    return Cell(i.estimate, f"**{text}** ◆" if marked else text)


def _p(p: float) -> str:
    return "—" if math.isnan(p) else f"{p:.3f}"


def _flag_cell(flag: Flag | None) -> Cell:
    if flag is None or math.isnan(flag.test.difference.estimate):
        return Cell(math.nan, "—")
    d = flag.test.difference
    text = f"{ci_text(d, sign=True)} (m={d.n_units}); p {_p(flag.test.p_value)}, "
    text += f"Holm {_p(flag.p_holm)}"
    return Cell(d.estimate, f"**{text}** ◆" if flag.flagged else text)


def _family_text(flags: dict[str, list[Flag]]) -> str:
    sizes = sorted({f.family for fs in flags.values() for f in fs})
    return " or ".join(str(k) for k in sizes) if sizes else "0"


def series_section(
    study: str, organism: str, series: Sequence[SeriesRun], out: Path, stem: str
) -> Section:
    """The section of one organism's series: a table (step, model, shortcut rate, each
    statistic's cued AUROC [interval], flagged checkpoints marked ◆), the table of each
    checkpoint's paired test against the base, and the figure."""
    names = [s.name for s in statistics_of(study) if any(s.name in m.aurocs for m in series)]
    flags = series_flags(series, names)
    flagged = {n: {f.step for f in fs if f.flagged} for n, fs in flags.items()}
    family = _family_text(flags)
    marker = (
        f"◆ marks a checkpoint flagged against the base model: a paired permutation test on "
        f"the problems both ran (swapping a problem's base and checkpoint samples), two-sided, "
        f"Holm-adjusted p <= {ALPHA} across the series' checkpoints of the statistic (family: "
        f"{family} checkpoint(s) per statistic)."
    )
    sec = Section(f"{study} · checkpoint series of {organism}")
    has_base = any(m.is_base for m in series)
    sec.text(
        f"{len(series)} run(s): "
        + ("the base model (step 0) and " if has_base else "no run of the base model, and ")
        + f"{sum(not m.is_base for m in series)} checkpoint(s) of {md_code(organism)}. "
        "Each statistic: the AUROC of cued against uncued samples (larger: the cue moves the "
        "statistic the way a shortcut does), over the samples the study's own AUROC reads, "
        "95% interval over problems. Shortcut rate: wrong-cue samples answered with the "
        "cue."
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
        cells = [_cell(m.aurocs.get(n), not m.is_base and m.step in flagged[n]) for n in names]
        step = Cell(m.step, "base" if m.is_base else str(m.step))
        table.add(step, Cell(m.run.model, report_text(m.run.model)), rate, *cells)
    table.note = marker
    sec.table("series", table)
    if has_base:
        tests = Table(
            "Checkpoints against the base model",
            ["step", *names],
            align=["---:", *["---:"] * len(names)],
        )
        by_step = {n: {f.step: f for f in fs} for n, fs in flags.items()}
        for m in series:
            if not m.is_base:
                tests.add(
                    Cell(m.step, str(m.step)), *(_flag_cell(by_step[n].get(m.step)) for n in names)
                )
        tests.note = (
            "Each cell: checkpoint minus base AUROC on the m problems both ran [95% paired "
            "problem-bootstrap interval]; p: two-sided paired permutation p-value; Holm: "
            "adjusted across the statistic's checkpoints; ◆: flagged (Holm p <= "
            f"{ALPHA})."
        )
        sec.table("tests", tests)
    departures = {n: first_flagged(fs) for n, fs in flags.items()}
    sec.data["departures"] = departures
    sec.data["flags"] = flags
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
        f"against the training step. First checkpoint flagged against the base (paired "
        f"permutation test, Holm across {family} checkpoint(s), p <= {ALPHA}): "
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
