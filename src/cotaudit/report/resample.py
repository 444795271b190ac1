"""The report section of the resampling probe (study ``resample``, ``tasks/resample.py``; and
the generic probe's ``-T probe=resample``, study ``probe_resample``).

Per run: the logged metric (``resample_summary``) recomputed from the samples' values and
checked against the log; a table of its means overall and per condition; a figure of the mean
resampling importance along the trace per condition (does the hint make every step
unimportant?); and the run's most important sentences.

Importance along the trace: each chunk i of a sample sits at its midpoint
x = (c_i + c_{i+1}) / (2 T) of the trace; the chunks fall into :data:`BINS` equal bins of x,
and each bin shows the mean RI over the chunks in it, per condition (NaN: no chunk).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from cotaudit.display.text import report_text
from cotaudit.logs.data import RunData
from cotaudit.probing.resample_record import METRICS, VALUE_KEYS, ResampleRecord
from cotaudit.report.figures import FigureText, signed_lines
from cotaudit.report.headlines import no_data_text, ran_text
from cotaudit.report.sections import Section, run_section
from cotaudit.report.tables import Cell, Table

SCORERS = ("resample_scorer", "resample_probe_scorer")
"""The scorers whose scores the section reads: the resample task's and the generic probe's
(``-T probe=resample``), whichever the run has."""
BINS = 10
"""Bins of the trace's length in the importance figure."""
TOP_SENTENCES = 5
"""Sentences listed as the run's most important."""


def importance_along(
    records: Sequence[tuple[str, ResampleRecord]], bins: int = BINS
) -> tuple[list[float], dict[str, list[float]]]:
    """(bin centres, per condition the mean RI of the chunks whose midpoint falls in each bin)
    (module docstring); chunks of undefined RI are left out."""
    sums: dict[str, list[list[float]]] = {}
    for condition, record in records:
        length = record.cot_tokens or 1
        per_bin = sums.setdefault(condition, [[] for _ in range(bins)])
        for chunk, a, b in zip(record.chunks, record.cuts, record.cuts[1:], strict=False):
            if chunk.resampling is None:
                continue
            x = (a + b) / (2 * length)
            per_bin[min(int(x * bins), bins - 1)].append(chunk.resampling)
    centres = [(i + 0.5) / bins for i in range(bins)]
    means = {
        c: [sum(v) / len(v) if v else math.nan for v in per_bin] for c, per_bin in sums.items()
    }
    return centres, means


def section(run: RunData, out_dir: Path, stem: str) -> Section:
    """The resampling section of one run (module docstring)."""
    sec, scorer = run_section(run, run.study, SCORERS)
    if scorer is None:
        return sec
    samples = scorer.samples
    sec.check(METRICS.recompute(samples, scorer.metric_defs), scorer.metrics)
    records = [
        (str((s.sample_metadata or {}).get("condition", "all")), s.score.metadata["resample"])
        for s in samples
        if s.score.metadata and "resample" in s.score.metadata
    ]
    parsed = [(c, ResampleRecord.model_validate(r)) for c, r in records]
    sec.text(
        " ".join(
            t
            for t in (
                f"Resampling over {len(samples)} samples ({len(parsed)} resampled: a CoT with no "
                "final answer is not).",
                ran_text(run),
            )
            if t
        )
    )
    if not parsed:
        sec.text(no_data_text("no sample was resampled"))
        return sec
    t = sec.recomputed
    conditions = sorted({c for c, _ in parsed})
    table = Table("Means over the resampled samples", ["value", "all", *conditions])
    for key in VALUE_KEYS:
        table.add(key, t.get(key, math.nan), *(t.get(f"{key}/{c}", math.nan) for c in conditions))
    table.note = (
        "r_mean: mean r(t) over a sample's cuts; forced_mean: of the forced curve on the same "
        "cuts; gap_mean: forced - r; forced_first: share of samples where forcing reaches 0.5 "
        "at an earlier cut than resampling; max_importance: a sample's largest |RI|. "
        "Definitions: docs/resample.md."
    )
    sec.table("means", table)
    centres, means = importance_along(parsed)
    sec.figure(
        "importance",
        signed_lines(
            centres,
            [(c, means[c]) for c in conditions],
            FigureText(
                out_dir / f"{stem}-importance.png",
                "Resampling importance along the trace",
                caption=f"Mean RI of the chunks in each tenth of the trace, per condition "
                f"({len(parsed)} samples).",
                xlabel="position in the trace (chunk midpoint / T)",
                ylabel="mean RI",
            ),
        ),
    )
    ranked = sorted(
        (
            (abs(chunk.resampling), condition, chunk)
            for condition, record in parsed
            for chunk in record.chunks
            if chunk.resampling is not None
        ),
        key=lambda item: -item[0],
    )
    top = Table("The most important sentences", ["abs RI", "condition", "sentence(s)"])
    for value, condition, chunk in ranked[:TOP_SENTENCES]:
        top.add(
            value,
            Cell(condition, report_text(condition)),
            Cell(chunk.text, report_text(chunk.text)),
        )
    sec.table("top_sentences", top)
    return sec


def compare(sections: Sequence[Section], out_dir: Path, stem: str) -> Section | None:
    """No comparison of resampling runs (each run's section stands alone)."""
    return None
