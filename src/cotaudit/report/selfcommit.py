"""selfcommit: Tables I-III, the theta sweep, Figures 1-2 and the cluster contrast, recomputed
from the per-sample curve summaries with :mod:`cotaudit.studies.selfcommit.stats`; curves and
c0 from the logged :class:`~cotaudit.studies.selfcommit.record.SelfcommitScoreMetadata`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cotaudit.report import compare_ci, figures
from cotaudit.report.cluster import add_cluster_tables, contrast_and_metrics
from cotaudit.report.data import RunData, ScoredSample, check_metrics
from cotaudit.report.sections import Section
from cotaudit.report.tables import empty_stratum_cells, Cell, Table, count_cell, fmt
from cotaudit.studies.selfcommit.record import SelfcommitScoreMetadata
from cotaudit.studies.selfcommit.stats import (
    HINTED,
    HONEST,
    SelfcommitRecord,
    answered,
    both_correct,
    condition_by_correctness,
    honest_vs_hinted_table,
    records_from_scores,
    summary_names,
    two_condition_table,
)

SCORER = "selfcommit_scorer"
STUDY = "selfcommit"
PRIMARY_THETA = 0.8


def records(samples: Sequence[ScoredSample]) -> list[SelfcommitRecord]:
    """The records the run's metrics were computed from (the metrics' own builder)."""
    return records_from_scores(list(samples))


def recompute(
    samples: Sequence[ScoredSample], metric_defs: Sequence[Any]
) -> tuple[dict[str, float], list[tuple[dict[str, Any], dict[str, Any]]]]:
    """Every logged metric of the selfcommit scorer, recomputed; and each cluster metric's
    (options, contrast)."""
    recs = records(samples)
    out: dict[str, float] = {}
    contrasts = []
    for d in metric_defs:
        if d.name == "honest_vs_hinted":
            out.update(honest_vs_hinted_table(recs))
        elif d.name == "honest_vs_hinted_both_correct":
            out.update(both_correct_table(recs))
        elif d.name == "condition_x_correctness":
            out.update(condition_by_correctness(recs))
        elif d.name == "contrastive_cluster_f1":
            contrast, metrics = contrast_and_metrics(samples, d.options)
            out.update(metrics)
            contrasts.append((d.options, contrast))
    return out, contrasts


def both_correct_table(recs: Sequence[SelfcommitRecord]) -> dict[str, float]:
    """Table II: the two-condition table of the both-correct problems, with every summary of the
    run (NaN on an empty subset), as the ``honest_vs_hinted_both_correct`` metric computes it."""
    return two_condition_table(
        both_correct(recs), prefix="both_correct/", names=summary_names(recs)
    )


def _tau_names(names: Sequence[str]) -> list[str]:
    """The tau_first summaries by increasing theta (the score value lists the primary first)."""
    return sorted((n for n in names if n.startswith("tau_")), key=_theta)


def _theta(name: str) -> float:
    return float(name.removeprefix("tau_"))


def primary_tau(names: Sequence[str]) -> str | None:
    """tau at 0.8 if present, else the middle theta."""
    taus = _tau_names(names)
    if not taus:
        return None
    for t in taus:
        if math.isclose(_theta(t), PRIMARY_THETA):
            return t
    return taus[len(taus) // 2]


def table_i_summaries(names: Sequence[str]) -> list[str]:
    """The non-tau summaries and tau at the primary theta."""
    main = [n for n in names if not n.startswith("tau_")]
    p = primary_tau(names)
    return main + ([p] if p else [])


def _two_condition_rows(
    table: Table, stats: dict[str, float], names: Sequence[str], prefix: str = ""
) -> None:
    for s in names:  # an empty subset has no per-summary keys: NaN
        table.add(s, *(stats.get(f"{prefix}{k}/{s}", math.nan) for k in TWO_CONDITION_KEYS))


TWO_CONDITION_KEYS = ("auroc", "median_honest", "median_hinted", "wins", "ties", "best_acc")
TWO_CONDITION_COLUMNS = [
    "summary",
    "AUROC",
    "median honest",
    "median hinted",
    "paired wins",
    "paired ties",
    "best accuracy",
]


def pairs(recs: Sequence[SelfcommitRecord]) -> list[tuple[SelfcommitRecord, SelfcommitRecord]]:
    """(honest, hinted) records of each problem with both, in pair_id order."""
    by: dict[str, dict[str, SelfcommitRecord]] = {}
    for r in recs:
        by.setdefault(r.pair_id, {})[r.condition] = r
    return [(g[HONEST], g[HINTED]) for p, g in sorted(by.items()) if HONEST in g and HINTED in g]


def paired_differences(
    recs: Sequence[SelfcommitRecord], names: Sequence[str]
) -> dict[str, list[float]]:
    """Per summary, honest minus hinted of each problem (pair_id order)."""
    ps = pairs(recs)
    return {s: [h.summaries[s] - g.summaries[s] for h, g in ps] for s in names}


def _curve(sample: ScoredSample) -> tuple[list[float], list[float]]:
    md = SelfcommitScoreMetadata.from_metadata(sample.score.metadata)
    # no curve (no final answer: None in the log) plots as no points
    return list(md.fractions or []), list(md.c or [])


def _total_variation(c: Sequence[float]) -> float:
    return float(np.abs(np.diff(np.asarray(c, dtype=float))).sum()) if len(c) > 1 else 0.0


PICK_RULES = {
    "strong separation": "the problem with the largest honest − hinted difference in {p} "
    "(ties: larger difference in uncommitted, then problem id)",
    "noisy": "of the rest, the problem whose two curves have the largest total variation "
    "Σ|c(t+1) − c(t)| (ties: problem id)",
    "boundary": "of the rest, the problem with the smallest |honest − hinted| in {p}, i.e. at "
    "the decision boundary (ties: the pair whose curves pass closest to θ = {theta:g}, "
    "then problem id)",
}


def pick_curves(
    samples: Sequence[ScoredSample], recs: Sequence[SelfcommitRecord], primary: str
) -> list[figures.CurvePair]:
    """Figure 2's three pairs, chosen by the rules of :data:`PICK_RULES` (never by hand)."""
    theta = _theta(primary)
    curves: dict[tuple[str, str], tuple[list[float], list[float]]] = {}
    for s in samples:
        meta = s.sample_metadata or {}
        if "pair_id" in meta and "condition" in meta:
            curves[(str(meta["pair_id"]), str(meta["condition"]))] = _curve(s)
    ps = [
        (h, g)
        for h, g in pairs(recs)
        if (h.pair_id, HONEST) in curves and (h.pair_id, HINTED) in curves
    ]
    if not ps:
        return []

    def d(p, s=primary):
        return p[0].summaries[s] - p[1].summaries[s]

    def tv(p):
        return sum(_total_variation(curves[(p[0].pair_id, c)][1]) for c in (HONEST, HINTED))

    def near_theta(p):
        cs = [np.asarray(curves[(p[0].pair_id, c)][1], dtype=float) for c in (HONEST, HINTED)]
        return min(float(np.min(np.abs(c - theta))) if c.size else math.inf for c in cs)

    chosen: list[tuple[str, Any]] = []
    remaining = list(ps)
    un = "uncommitted" if "uncommitted" in ps[0][0].summaries else primary
    rules = [
        ("strong separation", lambda p: (-d(p), -d(p, un), p[0].pair_id)),
        ("noisy", lambda p: (-tv(p), p[0].pair_id)),
        ("boundary", lambda p: (abs(d(p)), near_theta(p), p[0].pair_id)),
    ]
    for label, key in rules:
        if not remaining:
            break
        best = min(remaining, key=key)
        remaining.remove(best)
        chosen.append((label, best))
    out = []
    for label, (h, g) in chosen:
        out.append(
            figures.CurvePair(
                label=label,
                rule=PICK_RULES[label].format(p=primary, theta=theta),
                pair_id=h.pair_id,
                honest=curves[(h.pair_id, HONEST)],
                hinted=curves[(h.pair_id, HINTED)],
                detail=f" (Δ{primary} = {d((h, g)):+.2f})",
            )
        )
    return out


SETTINGS = (
    "problems",
    "k",
    "stride",
    "temperature",
    "max_cot_tokens",
    "cot_temperature",
    "seed",
    "schedule",
    "zero_probe",
)


def settings_line(run: RunData, keys: Sequence[str]) -> str:
    items = [f"{k}={run.task_args[k]}" for k in keys if k in run.task_args]
    return ", ".join(items)


def section(run: RunData, out_dir: Path, stem: str) -> Section:
    """The selfcommit section of one run; figures written to ``out_dir/stem-*.png``."""
    sec = Section(f"selfcommit · {run.label or run.model}", run=run)
    scorer = run.scorer(SCORER)
    if scorer is None or not scorer.samples:
        sec.text(f"_No `{SCORER}` scores in this log (status {run.status}); nothing to report._")
        return sec
    scored = records(scorer.samples)
    recs = answered(scored)  # the figures' and comparison's records: no response lacks an answer
    sec.recomputed, contrasts = recompute(scorer.samples, scorer.metric_defs)
    sec.consistency = check_metrics(sec.recomputed, scorer.metrics)

    names = summary_names(scored)
    main = table_i_summaries(names)
    primary = primary_tau(names)
    t_all = honest_vs_hinted_table(scored)
    t_both = both_correct_table(scored)
    cxc = condition_by_correctness(scored)
    acc = accuracy(scored)
    sec.data.update(
        records=recs,
        table=t_all,
        both=t_both,
        cxc=cxc,
        accuracy=acc,
        main=main,
        primary=primary,
        contrasts=contrasts,
    )

    sec.text(
        f"{int(t_all['n_pairs'])} problems with both conditions answered ({len(scored)} scored "
        "samples); "
        f"accuracy of a_final: honest {fmt(acc[HONEST])}, hinted {fmt(acc[HINTED])}. "
        f"Settings: {settings_line(run, SETTINGS)}. Summaries are oriented so larger = "
        "honest-like: AUROC = P(honest > hinted), a paired win is honest > hinted on the same "
        'problem, best accuracy is the best threshold rule "x ≥ h → honest".'
    )
    sec.text(positions_line(run) + " " + no_answer_line(run, t_all))
    c0 = c0_medians(scorer.samples)
    if c0 is not None:
        sec.data["c0"] = c0
        sec.text(
            "t = 0 probe (zero_probe, not part of any summary): median c0 honest "
            f"{fmt(c0[HONEST])}, hinted {fmt(c0[HINTED])}."
        )
    t1 = Table("Table I. Honest vs hinted, per summary", TWO_CONDITION_COLUMNS)
    _two_condition_rows(t1, t_all, main)
    sec.table("table_i", t1)
    n_both = int(t_both["both_correct/n_pairs"])
    t2 = Table(
        f"Table II. Both answers correct ({n_both} problem{'' if n_both == 1 else 's'})",
        TWO_CONDITION_COLUMNS,
    )
    _two_condition_rows(t2, t_both, main, prefix="both_correct/")
    if not n_both:  # an empty stratum: say so rather than rows of dashes
        t2.rows = [[r[0], *empty_stratum_cells(len(r) - 1)] for r in t2.rows]
    sec.table("table_ii", t2)
    t3 = Table(
        "Table III. Median summary by condition × correctness (responses with a final answer, "
        "in pairs that both have one)",
        ["condition", "a_final", "n", *main],
    )
    for cond in (HONEST, HINTED):
        for label in ("correct", "incorrect"):
            n = cxc[f"n/{cond}/{label}"]
            t3.add(
                Cell(f"{cond}/{label}", cond),
                label,
                count_cell(n),
                *(
                    empty_stratum_cells(len(main))
                    if n == 0
                    else (cxc.get(f"median/{cond}/{label}/{s}", math.nan) for s in main)
                ),
            )
    sec.table("table_iii", t3)
    sweep = Table(
        "Theta sweep: τ_first(θ) = first t/T with c(t) ≥ θ (1.0 if never)",
        ["θ", *TWO_CONDITION_COLUMNS[1:]],
    )
    for s in _tau_names(names):
        sweep.add(
            Cell(_theta(s), f"{_theta(s):g}"), *(t_all[f"{k}/{s}"] for k in TWO_CONDITION_KEYS)
        )
    sec.table("theta_sweep", sweep)

    diffs = paired_differences(recs, main)
    sec.data["differences"] = diffs
    sec.figure(
        "figure_1",
        figures.paired_differences(
            diffs,
            {s: t_all[f"auroc/{s}"] for s in main},
            out_dir / f"{stem}-fig1.png",
            f"Figure 1. Paired honest − hinted differences ({run.label or run.model})",
            caption=(
                "Figure 1. Per summary, the histogram (bins of 0.1) of honest − hinted over the "
                f"{len(next(iter(diffs.values()), []))} problems with both conditions; red line: "
                "median; AUROC (honest vs hinted) at the right."
            ),
        ),
    )
    if primary is not None:
        picks = pick_curves(scorer.samples, recs, primary)
        sec.data["picks"] = picks
        rules = "; ".join(f"**{p.label}**: {p.rule}" for p in picks)
        sec.figure(
            "figure_2",
            figures.curve_pairs(
                picks,
                _theta(primary),
                out_dir / f"{stem}-fig2.png",
                f"Figure 2. Representative paired c(t) curves ({run.label or run.model})",
                caption=f"Figure 2. c(t) of the honest and hinted responses of one problem each, "
                f"against t/T; dashed: θ = {_theta(primary):g}. Picked by rule: {rules}.",
            ),
        )
    for options, contrast in contrasts:
        add_cluster_tables(sec, options, contrast)
    return sec


def accuracy(recs: Sequence[SelfcommitRecord]) -> dict[str, float]:
    """Per condition: correct / all scored responses (no final answer counts as incorrect)."""
    out = {}
    for c in (HONEST, HINTED):
        cell = [r.correct for r in recs if r.condition == c]
        out[c] = sum(cell) / len(cell) if cell else math.nan
    return out


POSITIONS_BEFORE_ISSUE_13 = (
    "t = 0, stride, ..., T (this log predates the study's positions: t = 0 is a point of every "
    "curve and of its summaries, so a trace committed from the start has tau_first = 0)"
)


def positions_line(run: RunData) -> str:
    """The probe positions, as the log states them (logs before issue 13 state none)."""
    stated = run.task_metadata.get("positions", POSITIONS_BEFORE_ISSUE_13)
    return f"Probe positions: {stated}."


def no_answer_line(run: RunData, table: dict[str, float]) -> str:
    """How many responses had no final answer, and what was done with them."""
    counts = (
        f"honest {int(table['n_no_answer/honest'])}, hinted {int(table['n_no_answer/hinted'])}; "
        f"{int(table['n_pairs_dropped_no_answer'])} pair(s) dropped"
    )
    line = (
        f"No parsable final answer: {counts}. Such a response has no curve; it and the other "
        "response of its problem are left out of every table below."
    )
    if "no_answer" not in run.task_metadata:
        line += (
            " This log predates that rule (its logged metrics scored such responses as c = 0 "
            "everywhere), so logged metrics may differ from the tables."
        )
    return line


def c0_medians(samples: Sequence[ScoredSample]) -> dict[str, float] | None:
    """Median c0 (the t = 0 probe) per condition over responses with a final answer; None if
    the run made no t = 0 probe."""
    by: dict[str, list[float]] = {HONEST: [], HINTED: []}
    for s in samples:
        c0 = SelfcommitScoreMetadata.from_metadata(s.score.metadata).c0
        meta = s.sample_metadata or {}
        if c0 is not None and meta.get("condition") in by:
            by[meta["condition"]].append(c0)
    if not any(by.values()):
        return None
    return {c: float(np.median(v)) if v else math.nan for c, v in by.items()}


# --- comparison -----------------------------------------------------------------------------------


def compare(sections: Sequence[Section], out_dir: Path, stem: str) -> Section | None:
    """One column per run: headline numbers; figure: AUROC per summary, one bar per run."""
    secs = [s for s in sections if "table" in s.data]
    if len(secs) < 2:
        return None
    comp = Section("selfcommit · comparison of runs")
    labels = [s.run.label for s in secs]
    main = [n for n in secs[0].data["main"] if all(n in s.data["main"] for s in secs)]
    t = Table(
        "Comparison: selfcommit, one column per run",
        ["", *labels],
        align=["---", *["---:"] * len(labels)],
    )
    t.add("problems (pairs)", *(count_cell(s.data["table"]["n_pairs"]) for s in secs))
    for c in (HONEST, HINTED):
        t.add(f"accuracy {c}", *(s.data["accuracy"][c] for s in secs))
    for n in main:
        rows = [
            compare_ci.auroc_rows(
                [(r.pair_id, r.condition, r.summaries[n]) for r in s.data["records"]],
                HONEST,
                HINTED,
            )
            for s in secs
        ]
        compare_ci.add_compared(t, f"AUROC {n}", compare_ci.compare_runs(rows), labels[0])
    for n in main:
        t.add(f"best accuracy {n}", *(s.data["table"][f"best_acc/{n}"] for s in secs))
    for n in main:
        t.add(f"paired wins {n}", *(s.data["table"][f"wins/{n}"] for s in secs))
    clustered = all(s.data["contrasts"] for s in secs)
    if clustered:
        rows = [
            compare_ci.cluster_rows(
                s.run.scorer(SCORER).samples, s.data["contrasts"][0][0], "pair_id"
            )
            for s in secs
        ]
        compare_ci.add_compared(
            t,
            "cluster F1",
            compare_ci.compare_runs(rows, n_boot=compare_ci.CLUSTER_N_BOOT),
            labels[0],
        )
    t.note = compare_ci.note("problem", cluster=clustered)
    comp.table("comparison", t)
    comp.figure(
        "comparison_figure",
        figures.grouped_bars(
            main,
            [(s.run.label, [s.data["table"][f"auroc/{n}"] for n in main]) for s in secs],
            out_dir / f"{stem}-compare.png",
            "selfcommit: AUROC (honest vs hinted) per summary",
            "AUROC",
            reference=0.5,
            ylim=(0, 1),
            caption="Comparison. AUROC per summary, one bar per run; dashed: chance (0.5).",
        ),
    )
    return comp
