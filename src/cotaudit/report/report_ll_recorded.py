"""The report section of report_ll runs over recorded transcript pairs (study
``report_ll_recorded``).

Per run: the logged metric (``report_ll_recorded``) recomputed from the per-pair scorings with
the run's own metric table (:data:`cotaudit.studies.report_ll.recorded.RECORDED_METRICS`) and
checked against the log; a table of D_h, D_c, DiD and their per-token forms, each mean [95% CI]
over units with its sign-flip p-value and n; and the pairs themselves (unit, D_h, D_c, DiD).
Comparison of runs: the DiD of each run side by side.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from cotaudit.display.text import report_text
from cotaudit.logs.data import RunData
from cotaudit.report.headlines import headline_text, no_data_text, ran_text
from cotaudit.report.sections import Section, run_section
from cotaudit.report.tables import Cell, Table, fmt
from cotaudit.studies.report_ll.recorded import (
    RECORDED_GROUP,
    RECORDED_METRICS,
    pair_records,
)
from cotaudit.studies.report_ll.stats import QUANTITIES, differences

SCORER = "report_ll_recorded_scorer"


def _interval(t: dict[str, float], q: str) -> str:
    g = f"{RECORDED_GROUP}/{q}"
    return f"{fmt(t[f'{g}/mean'])} [{fmt(t[f'{g}/ci_low'])}, {fmt(t[f'{g}/ci_high'])}]"


def section(run: RunData, out_dir: Path, stem: str) -> Section:
    """The recorded-pairs section of one run (module docstring)."""
    sec, scorer = run_section(run, run.study, [SCORER])
    if scorer is None:
        return sec
    samples = scorer.samples
    consistency = sec.check(RECORDED_METRICS.recompute(samples, scorer.metric_defs), scorer.metrics)
    records = pair_records(samples)
    sec.text(
        " ".join(
            t
            for t in (
                f"report_ll over {len(samples)} recorded transcript pairs "
                f"({len(records)} with valid scorings, {len({u for _, u, _ in records})} units).",
                ran_text(run),
            )
            if t
        )
    )
    sec.text(consistency.line())
    headline = headline_text(run, {**scorer.metrics, **sec.recomputed})
    if headline:
        sec.text(headline)
    if not records:
        sec.text(no_data_text("no pair has valid scorings"))
        return sec
    t = sec.recomputed
    table = Table("Differences over the pairs", ["quantity", "mean [95% CI]", "p", "n", "units"])
    for q in QUANTITIES:
        g = f"{RECORDED_GROUP}/{q}"
        table.add(
            q, Cell(t[f"{g}/mean"], _interval(t, q)), t[f"{g}/p"], t[f"{g}/n"], t[f"{g}/n_units"]
        )
    table.note = (
        "d_h = S(h, hack) - S(h, clean), d_c = S(c, hack) - S(c, clean), did = d_h - d_c (nats; "
        "per token: each S divided by its report's tokens); [...]: percentile bootstrap over "
        "units, p: sign-flip p-value. Definitions: docs/report_ll.md (Recorded transcripts)."
    )
    sec.table("differences", table)
    pairs = Table("Pairs", ["pair", "unit", "d_h", "d_c", "did"])
    for pair, unit, scorings in records:
        d = differences(scorings)
        pairs.add(
            Cell(pair, report_text(pair)),
            Cell(unit, report_text(unit)),
            d["d_h"],
            d["d_c"],
            d["did"],
        )
    sec.table("pairs", pairs)
    sec.data["did"] = t[f"{RECORDED_GROUP}/did/mean"]
    return sec


def compare(sections: Sequence[Section], out_dir: Path, stem: str) -> Section | None:
    """The DiD of each run, mean [95% CI] side by side."""
    secs = [s for s in sections if s.run is not None and "did" in s.data]
    if len(secs) < 2:
        return None
    comp = Section(f"{secs[0].run.study} · comparison of runs")  # type: ignore[union-attr]
    table = Table("DiD across runs", ["run", "did mean [95% CI]", "p", "units"])
    for s in secs:
        t, g = s.recomputed, f"{RECORDED_GROUP}/did"
        label = s.run.label or s.run.model  # type: ignore[union-attr]
        table.add(
            Cell(label, report_text(label)),
            Cell(t[f"{g}/mean"], _interval(t, "did")),
            t[f"{g}/p"],
            t[f"{g}/n_units"],
        )
    comp.table("comparison", table)
    return comp
