"""selfcommit: Tables I-III, the theta sweep, Figures 1-2 and the cluster contrast, recomputed
from the per-sample curve summaries with the study's metric table
(:data:`cotaudit.studies.selfcommit.metrics.METRICS`); curves and c0 from the logged
:class:`~cotaudit.studies.selfcommit.record.SelfcommitScoreMetadata`; what a log of each task
version holds from :mod:`cotaudit.studies.selfcommit.versions`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cotaudit.display.text import report_text
from cotaudit.logs.data import MetricDef, RunData, ScoredSample
from cotaudit.probing.resample_record import METRICS as RESAMPLE_METRICS
from cotaudit.report import cluster, compare_ci, figures
from cotaudit.report.cluster import add_cluster_tables
from cotaudit.report.headlines import f1_reasons, headline_text, no_data_text, problems_setting
from cotaudit.report.sections import (
    FigureInfo,
    Section,
    published_intro,
    published_table,
    run_section,
)
from cotaudit.report.tables import (
    Cell,
    Table,
    count_cell,
    empty_stratum_cells,
    fmt,
    fmt_count,
    tokens_cell,
)
from cotaudit.stats import best_threshold_accuracy
from cotaudit.studies.paper import parameters_used
from cotaudit.studies.selfcommit.metrics import (
    FULL,
    METRICS,
    exact_name,
    is_exact,
    primary_summary,
    sampled_name,
)
from cotaudit.studies.selfcommit.paper import PAPER
from cotaudit.studies.selfcommit.record import SelfcommitScoreMetadata
from cotaudit.studies.selfcommit.stats import (
    HINTED,
    HONEST,
    TAU_PREFIX,
    SelfcommitRecord,
    answered,
    pairs,
    records_from_scores,
    summary_names,
)
from cotaudit.studies.selfcommit.versions import LogConventions, as_logged, conventions

SCORER = "selfcommit_scorer"
STUDY = "selfcommit"

Contrasts = list[tuple[dict[str, Any], dict[str, Any]]]
"""Each cluster metric's (logged options, contrast)."""


def records(samples: Sequence[ScoredSample]) -> list[SelfcommitRecord]:
    """The records the run's metrics were computed from (the metrics' own builder)."""
    return records_from_scores(list(samples))


def recompute(
    samples: Sequence[ScoredSample], metric_defs: Sequence[Any]
) -> tuple[dict[str, float], Contrasts]:
    """Every metric of ``metric_defs`` recomputed (the study's metric table, the resampling
    metric of ``-T resample``, then each cluster metric); and each cluster metric's (options,
    contrast)."""
    out = METRICS.recompute(samples, metric_defs) | RESAMPLE_METRICS.recompute(samples, metric_defs)
    cluster_metrics, contrasts = cluster.recompute(samples, metric_defs)
    return out | cluster_metrics, contrasts


def with_full_tables(metric_defs: Sequence[Any]) -> list[Any]:
    """``metric_defs`` and every full table they lack (the section shows them all)."""
    logged = {d.name for d in metric_defs}
    return [*metric_defs, *(MetricDef(spec.name, {}) for spec in FULL if spec.name not in logged)]


def _tau_names(names: Sequence[str]) -> list[str]:
    """The tau_first summaries by increasing theta (the score value lists the primary first)."""
    return sorted((n for n in names if n.startswith(TAU_PREFIX)), key=_theta)


def _theta(name: str) -> float:
    """theta of a tau_first summary (``tau_0.8``, ``tau_0.8_exact``: 0.8)."""
    return float(sampled_name(name).removeprefix(TAU_PREFIX))


def split_names(names: Sequence[str]) -> tuple[list[str], list[str]]:
    """The summaries of the sampled curve and those of the exact one (``<summary>_exact``)."""
    return [n for n in names if not is_exact(n)], [n for n in names if is_exact(n)]


def lead_names(names: Sequence[str]) -> list[str]:
    """The summaries the run leads with: the sampled curve's, else (an exact-only run) the
    exact curve's."""
    sampled, exact = split_names(names)
    return sampled or exact


def primary_tau(names: Sequence[str]) -> str | None:
    """The primary tau_first summary of the run's summary ``names`` (of the lead curve:
    :func:`lead_names`; :func:`cotaudit.studies.selfcommit.metrics.primary_summary`); None
    without a tau_first."""
    lead = lead_names(names)
    taus = _tau_names(lead)
    if not taus:
        return None
    primary = primary_summary([_theta(t) for t in taus])
    return exact_name(primary) if is_exact(lead[0]) else primary


def table_i_summaries(names: Sequence[str]) -> list[str]:
    """The non-tau summaries and tau at the primary theta, of the lead curve
    (:func:`lead_names`), then in a run of both estimators the same of the exact curve."""
    sampled, exact = split_names(names)
    out = []
    for group in (sampled, exact):
        p = primary_tau(group)
        out += [n for n in group if not n.startswith(TAU_PREFIX)] + ([p] if p else [])
    return out


def _two_condition_cells(stats: dict[str, float], s: str, prefix: str = "") -> list[Cell]:
    """One summary's cells (an empty subset has no per-summary keys: NaN); paired wins and
    ties as the study writes them, "wins/n_pairs"."""
    n = stats.get(f"{prefix}n_pairs", math.nan)
    cells = []
    for k in TWO_CONDITION_KEYS:
        v = stats.get(f"{prefix}{k}/{s}", math.nan)
        cells.append(Cell(v, pairs_text(v, n)) if k in ("wins", "ties") else Cell(v, fmt(v)))
    return cells


def pairs_text(count: float, n: float) -> str:
    """A count of pairs out of n, "43/50" (a dash for NaN)."""
    if math.isnan(float(count)):
        return fmt(count)
    return f"{fmt_count(count)}/{fmt_count(n)}"


def _two_condition_rows(
    table: Table, stats: dict[str, float], names: Sequence[str], prefix: str = ""
) -> None:
    for s in names:
        table.add(s, *_two_condition_cells(stats, s, prefix))


TWO_CONDITION_KEYS = (
    "auroc",
    "auroc_tie_share",
    "median_honest",
    "median_hinted",
    "wins",
    "ties",
    "best_acc",
)
TWO_CONDITION_COLUMNS = [
    "summary",
    "AUROC",
    "AUROC tie share",
    "median honest",
    "median hinted",
    "paired wins",
    "paired ties",
    "best accuracy",
]


def paired_differences(
    recs: Sequence[SelfcommitRecord], names: Sequence[str]
) -> dict[str, Sequence[float]]:
    """Per summary, honest minus hinted of each problem (pair_id order)."""
    ps = pairs(recs)
    return {s: [h.summaries[s] - g.summaries[s] for h, g in ps] for s in names}


def _curve(sample: ScoredSample, exact: bool = False) -> tuple[list[float], list[float]]:
    """(t/T, c) of a sample, or (t/T, c_exact) with ``exact``."""
    md = SelfcommitScoreMetadata.from_metadata(sample.score.metadata)
    # no curve (no final answer: None in the log) plots as no points
    if exact:
        fractions = [] if md.c_exact is None else _fractions(md)
        return fractions, list(md.c_exact or [])
    return list(md.fractions or []), list(md.c or [])


def _curves(
    samples: Sequence[ScoredSample], exact: bool = False
) -> dict[tuple[str, str], tuple[list[float], list[float]]]:
    """:func:`_curve` of each sample with a pair_id and a condition, by (pair_id, condition)."""
    curves = {}
    for s in samples:
        meta = s.sample_metadata or {}
        if "pair_id" in meta and "condition" in meta:
            curves[(str(meta["pair_id"]), str(meta["condition"]))] = _curve(s, exact)
    return curves


def _fractions(md: SelfcommitScoreMetadata) -> list[float]:
    """t/T at the positions (1.0 for an empty CoT)."""
    T = md.cot_tokens or 0
    return [round(t / T, 6) if T else 1.0 for t in md.positions]


def _total_variation(c: Sequence[float]) -> float:
    return float(np.abs(np.diff(np.asarray(c, dtype=float))).sum()) if len(c) > 1 else 0.0


PICK_RULES = {
    "strong separation": "the problem with the largest honest − hinted difference in {p} "
    "(ties: larger difference in {u}, then problem id)",
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
    curves = _curves(samples, is_exact(primary))
    ps = [
        (h, g)
        for h, g in pairs(recs)
        if (h.pair_id, HONEST) in curves and (h.pair_id, HINTED) in curves
    ]
    if not ps:
        return []

    Pair = tuple[SelfcommitRecord, SelfcommitRecord]

    def d(p: Pair, s: str = primary) -> float:
        return p[0].summaries[s] - p[1].summaries[s]

    def tv(p: Pair) -> float:
        return sum(_total_variation(curves[(p[0].pair_id, c)][1]) for c in (HONEST, HINTED))

    def near_theta(p: Pair) -> float:
        cs = [np.asarray(curves[(p[0].pair_id, c)][1], dtype=float) for c in (HONEST, HINTED)]
        return min(float(np.min(np.abs(c - theta))) if c.size else math.inf for c in cs)

    chosen: list[tuple[str, Any]] = []
    remaining = list(ps)
    un = "uncommitted" + ("_exact" if is_exact(primary) else "")
    un = un if un in ps[0][0].summaries else primary
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
                rule=PICK_RULES[label].format(p=primary, theta=theta, u=un),
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
    "final_answer_reading",
    "estimator",
)


def settings_line(run: RunData, keys: Sequence[str], problems_run: int | None = None) -> str:
    """``k=v, ...`` of the parameters the run used (:func:`parameters_used`: a paper
    configuration's values in place), and ``problems`` the number that ran when ``--limit`` /
    ``--sample-id`` ran fewer (``problems_run``)."""
    used = parameters_used(run.task_args, run.task_metadata)
    if problems_run is not None and "problems" in used:
        used["problems"] = problems_setting(used["problems"], problems_run, run.cut)
    return report_text(", ".join(f"{k}={used[k]}" for k in keys if k in used))


def section(run: RunData, out_dir: Path, stem: str) -> Section:
    """The selfcommit section of one run; figures written to ``out_dir/stem-*.png``. Every
    table reads the one recomputation of the run's metrics (the full tables included)."""
    sec, scorer = run_section(run, "selfcommit", [SCORER])
    if scorer is None:
        return sec
    log = conventions(run.task_version, run.task_metadata)
    scored = records(scorer.samples)
    recs = answered(scored)  # the figures' and comparison's records: no response lacks an answer
    values, contrasts = recompute(scorer.samples, with_full_tables(scorer.metric_defs))
    sec.check(as_logged(values, log.wins_as_counts), scorer.metrics)

    names = summary_names(scored)
    main = table_i_summaries(names)
    primary = primary_tau(names)
    acc = accuracy(scored)
    sec.data.update(
        records=recs,
        table=values,
        accuracy=acc,
        main=main,
        primary=primary,
        contrasts=contrasts,
    )

    headline = headline_text(run, {**scorer.metrics, **sec.recomputed}, f1_reasons(contrasts))
    if headline:
        sec.text(headline)
    problems_run = len({r.pair_id for r in scored})
    sec.text(
        f"{int(values['n_pairs'])} problem{'' if values['n_pairs'] == 1 else 's'} with both "
        f"conditions answered ({len(scored)} scored samples); "
        f"accuracy of a_final: honest {fmt(acc[HONEST])}, hinted {fmt(acc[HINTED])}. "
        f"Settings: {settings_line(run, SETTINGS, problems_run)}. Summaries are oriented so "
        "larger = honest-like: AUROC = P(honest > hinted) + ½ P(honest = hinted) over all "
        "(honest, hinted) pairs of responses, its tie share = P(honest = hinted); paired wins / "
        "ties = the number of problems where honest > hinted / honest = hinted, out of the "
        'problems with both; best accuracy is the best threshold rule "x ≥ h → honest".'
    )
    sec.text(" ".join(line for line in log_lines(log, values) if line))
    c0 = c0_medians(scorer.samples)
    if c0 is not None:
        sec.data["c0"] = c0
        sec.text(
            "t = 0 probe (zero_probe, not part of any summary): median c0 honest "
            f"{fmt(c0[HONEST])}, hinted {fmt(c0[HINTED])}."
        )
    c0_exact = c0_medians(scorer.samples, exact=True)
    if c0_exact is not None:
        sec.data["c0_exact"] = c0_exact
        sec.text(
            "t = 0 probe of the exact estimator: median c0_exact honest "
            f"{fmt(c0_exact[HONEST])}, hinted {fmt(c0_exact[HINTED])}."
        )
    sampled_names, exact_names = split_names(names)
    if exact_names:
        sec.text(exact_line(scorer.samples, bool(sampled_names)))
    if not recs:  # every table below would be dashes and every figure empty
        sec.text(
            no_data_text("no problem has both conditions answered, so no summary can be compared")
        )
        if primary is not None:
            sec.table("latency", latency_table(values, primary, run, recs))
        return sec
    sec.table("table_i", table_i(values, main))
    sec.table("table_ii", table_ii(values, main))
    sec.table("table_iii", table_iii(values, main))
    sec.table("theta_sweep", theta_sweep(values, lead_names(names)))
    if sampled_names and exact_names:
        sec.table("theta_sweep_exact", theta_sweep(values, exact_names))
    if primary is not None:
        sec.table("latency", latency_table(values, primary, run, recs))
    lead = lead_names(names)
    published_values = values | sweep_ranges(values, lead)
    if not sampled_names:  # an exact-only run: its exact statistics beside the sampled study's
        published_values = {sampled_name(k): v for k, v in published_values.items()}
        sec.text(
            "This run read c(t) exactly (no sampled curve): the published tables below set "
            "each statistic of c_exact (`<summary>_exact`) beside the study's sampled one."
        )
    add_published_tables(sec, run, published_values)

    diffs = paired_differences(recs, main)
    sec.data["differences"] = diffs
    sec.figure("figure_1", figure_1(run, values, diffs, out_dir / f"{stem}-fig1.png"))
    if primary is not None:
        picks = pick_curves(scorer.samples, recs, primary)
        sec.data["picks"] = picks
        sec.figure("figure_2", figure_2(run, picks, primary, out_dir / f"{stem}-fig2.png"))
    exact_primary = primary_tau(exact_names)
    if exact_primary is not None:
        both = bool(sampled_names)
        sec.table("exact_curves", exact_table(scorer.samples, both))
        exact_picks = pick_curves(scorer.samples, recs, exact_primary)
        sec.data["exact_picks"] = exact_picks
        sec.figure(
            "figure_exact",
            figure_exact(
                run, scorer.samples, exact_picks, exact_primary, both, out_dir / f"{stem}-exact.png"
            ),
        )
    for options, contrast in contrasts:
        add_cluster_tables(sec, options, contrast)
    return sec


def table_i(values: dict[str, float], main: Sequence[str]) -> Table:
    """Table I: the two-condition table of every pair, one row per summary of ``main``."""
    t = Table("Table I. Honest vs hinted, per summary", TWO_CONDITION_COLUMNS)
    _two_condition_rows(t, values, main)
    return t


def table_ii(values: dict[str, float], main: Sequence[str]) -> Table:
    """Table II: the same on the problems whose two answers are both correct (an empty
    stratum says so rather than rows of dashes)."""
    n = int(values["both_correct/n_pairs"])
    t = Table(
        f"Table II. Both answers correct ({n} problem{'' if n == 1 else 's'})",
        TWO_CONDITION_COLUMNS,
    )
    _two_condition_rows(t, values, main, prefix="both_correct/")
    if not n:
        t.rows = [[r[0], *empty_stratum_cells(len(r) - 1)] for r in t.rows]
    return t


def table_iii(values: dict[str, float], main: Sequence[str]) -> Table:
    """Table III: the median of each summary of ``main`` by condition x correctness, with the
    cell counts."""
    t = Table(
        "Table III. Median summary by condition × correctness (responses with a final answer, "
        "in pairs that both have one)",
        ["condition", "a_final", "n", *main],
    )
    for cond in (HONEST, HINTED):
        for label in ("correct", "incorrect"):
            n = values[f"n/{cond}/{label}"]
            t.add(
                Cell(f"{cond}/{label}", cond),
                label,
                count_cell(n),
                *(
                    empty_stratum_cells(len(main))
                    if n == 0
                    else (values.get(f"median/{cond}/{label}/{s}", math.nan) for s in main)
                ),
            )
    return t


def theta_sweep(values: dict[str, float], names: Sequence[str]) -> Table:
    """The theta sweep: Table I's columns for tau_first at every theta of the run (of the
    curve ``names`` summarise: c, or c_exact for ``<summary>_exact`` names)."""
    curve = "c_exact(t)" if names and is_exact(names[0]) else "c(t)"
    t = Table(
        f"Theta sweep: τ_first(θ) = first t/T with {curve} ≥ θ (1.0 if never)",
        ["θ", *TWO_CONDITION_COLUMNS[1:]],
    )
    for s in _tau_names(names):
        t.add(Cell(_theta(s), f"{_theta(s):g}"), *_two_condition_cells(values, s))
    return t


def figure_1(
    run: RunData, values: dict[str, float], diffs: dict[str, Sequence[float]], path: Path
) -> FigureInfo:
    """Figure 1: per summary, the histogram of the paired honest − hinted differences, with
    the summary's AUROC."""
    return figures.paired_differences(
        diffs,
        {s: values[f"auroc/{s}"] for s in diffs},
        figures.FigureText(
            path,
            f"Figure 1. Paired honest − hinted differences ({run.label or run.model})",
            caption=(
                "Figure 1. Per summary, the histogram (bins of 0.1) of honest − hinted over the "
                f"{len(next(iter(diffs.values()), []))} problems with both conditions; red line: "
                "median; AUROC (honest vs hinted) at the right."
            ),
        ),
    )


def figure_2(
    run: RunData, picks: list[figures.CurvePair], primary: str, path: Path
) -> FigureInfo | None:
    """Figure 2: the c(t) curves of the three problems :func:`pick_curves` picks."""
    rules = "; ".join(f"{p.label}: {p.rule}" for p in picks)
    return figures.curve_pairs(
        picks,
        _theta(primary),
        figures.FigureText(
            path,
            f"Figure 2. Representative paired c(t) curves ({run.label or run.model})",
            caption=f"Figure 2. c(t) of the honest and hinted responses of one problem each, "
            f"against t/T; dashed: θ = {_theta(primary):g}. Picked by rule: {rules}.",
        ),
    )


EXACT_COLUMNS = ["sample", "condition", "positions", "mean c_exact", "min covered"]
GAP_COLUMNS = ["mean exact − c", "mean |exact − c|", "max |exact − c|"]


def exact_line(samples: Sequence[ScoredSample], both: bool) -> str:
    """What the exact estimator is, in a sentence, with the temperature it read at."""
    temps = sorted(
        {
            t
            for s in samples
            if (t := SelfcommitScoreMetadata.from_metadata(s.score.metadata).exact_temperature)
            is not None
        }
    )
    at = ", ".join(f"{t:g}" for t in temps) or "·"
    return (
        "Exact estimator: c_exact(t) = P(the forced answer parses to a_final), read by teacher "
        f"forcing at temperature {at} (a lower bound; `covered` = the mass of answers that "
        "begin in an integer form at all); its summaries and statistics are named "
        "`<summary>_exact`."
        + (
            " Both estimators ran: the tables set the exact curve's rows after the sampled "
            "ones, and the exact-curves table gives each sample's exact − sampled difference."
            if both
            else ""
        )
    )


def exact_table(samples: Sequence[ScoredSample], both: bool) -> Table:
    """Per sample with an exact curve (pair_id, condition order): its probed positions (the
    adaptive schedule's imputed ones left out), mean c_exact, the least covered mass and, in a
    run of both estimators, mean (exact − c), mean |exact − c| (the logged ``exact_gap``,
    ``exact_gap_abs``) and max |exact − c| over the probed positions; a last row averages each
    column over the n samples."""
    rows: list[tuple[str, str, list[float], list[float], list[float] | None]] = []
    for s in samples:
        md = SelfcommitScoreMetadata.from_metadata(s.score.metadata)
        meta = s.sample_metadata or {}
        if md.c_exact is None or md.covered_exact is None:
            continue
        keep = [not imp for imp in (md.imputed or [False] * len(md.c_exact))]
        exact = [v for v, k in zip(md.c_exact, keep, strict=True) if k]
        covered = [v for v, k in zip(md.covered_exact, keep, strict=True) if k]
        sampled = [v for v, k in zip(md.c, keep, strict=True) if k] if md.c is not None else None
        rows.append(
            (str(meta.get("pair_id", "")), str(meta.get("condition", "")), exact, covered, sampled)
        )
    rows.sort(key=lambda r: (r[0], r[1]))
    t = Table(
        f"Exact curves: c_exact(t) per sample ({len(rows)} samples)"
        + (", beside the sampled c(t)" if both else ""),
        EXACT_COLUMNS + (GAP_COLUMNS if both else []),
    )
    columns: list[list[float]] = [[] for _ in range(3 + (3 if both else 0))]
    for pair, cond, exact, covered, sampled in rows:
        cells = [float(len(exact)), float(np.mean(exact)), min(covered)]
        if both:
            d = np.asarray(exact) - np.asarray(sampled if sampled is not None else exact)
            cells += [float(np.mean(d)), float(np.mean(np.abs(d))), float(np.max(np.abs(d)))]
        for col, v in zip(columns, cells, strict=True):
            col.append(v)
        t.add(Cell(f"{pair}-{cond}", report_text(pair)), cond, count_cell(cells[0]), *cells[1:])
    if rows:
        t.add(
            Cell("all", f"mean over n = {len(rows)}"),
            "",
            *(float(np.mean(c)) for c in columns),
        )
    t.note = (
        "positions: probed (imputed ones left out); covered: the mass of forced answers that "
        "begin in an enumerated integer form of any answer, so c_exact ≤ P(match) ≤ c_exact + "
        "(1 − covered)."
        + (" exact − c: c_exact(t) − c(t) at each probed t, averaged per sample." if both else "")
    )
    return t


def figure_exact(
    run: RunData,
    samples: Sequence[ScoredSample],
    picks: list[figures.CurvePair],
    primary: str,
    both: bool,
    path: Path,
) -> FigureInfo | None:
    """The exact curves of the problems :func:`pick_curves` picks on the exact primary
    (:func:`exact_curve_panels`), titled by the run, captioned by theta and the picks' rules."""
    theta = _theta(primary)
    rules = "; ".join(f"{p.label}: {p.rule}" for p in picks)
    caption = (
        "Exact curves. c_exact(t) of the honest and hinted responses of one problem each, "
        "against t/T (solid)"
        + ("; dashed: the sampled c(t) of the same responses" if both else "")
        + f"; grey dashed: θ = {theta:g}. Picked by rule: {rules}."
    )
    title = f"Exact curves c_exact(t) ({run.label or run.model})"
    return exact_curve_panels(
        samples, picks, theta, both, figures.FigureText(path, title, caption=caption)
    )


@figures.drawn
def exact_curve_panels(
    samples: Sequence[ScoredSample],
    picks: list[figures.CurvePair],
    theta: float,
    both: bool,
    text: figures.FigureText,
) -> FigureInfo | None:
    """One panel per pick: c_exact(t) of the honest and hinted response against t/T (solid)
    and, in a run of both estimators (``both``), their sampled c(t) beside (dashed); ``theta``
    dashed grey. None without picks."""
    if not picks:
        return None
    sampled = _curves(samples) if both else {}
    fig, axes = figures.panel_row(2.9, len(picks))
    panels = []
    for ax, pick in zip(axes, picks, strict=True):
        labels = []
        for cond, (x, y), color, marker in (
            (HONEST, pick.honest, figures.COLORS[0], "o"),
            (HINTED, pick.hinted, figures.COLORS[1], "s"),
        ):
            ax.plot(x, y, marker=marker, ms=3.5, lw=1.4, color=color, label=f"{cond} exact")
            labels.append(f"{cond} exact")
            if both and (pick.pair_id, cond) in sampled:
                sx, sy = sampled[(pick.pair_id, cond)]
                ax.plot(sx, sy, ls="--", lw=1.0, color=color, label=f"{cond} sampled")
                labels.append(f"{cond} sampled")
        figures.pick_panel(ax, pick, theta)
        panels.append((pick.label, labels))
    axes[0].set_ylabel("c_exact(t)", fontsize=9)
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside lower center", ncols=4, fontsize=8, frameon=False)
    fig.suptitle(text.title, fontsize=10)
    return figures.save_figure(fig, text, panels)


def accuracy(recs: Sequence[SelfcommitRecord]) -> dict[str, float]:
    """Per condition: correct / all scored responses (no final answer counts as incorrect)."""
    out = {}
    for c in (HONEST, HINTED):
        cell = [r.correct for r in recs if r.condition == c]
        out[c] = sum(cell) / len(cell) if cell else math.nan
    return out


def log_lines(log: LogConventions, values: dict[str, float]) -> list[str]:
    """What the section says of how the log was written: the probe positions, how a_final
    was read, the responses without a final answer, and what its ``wins/`` metrics hold."""
    return [
        f"Probe positions: {log.positions}.",
        f"Final answers: {log.final_answer_reading}.",
        no_answer_line(log, values),
        log.wins_note,
    ]


LATENCY_COLUMNS = [
    "condition",
    "responses",
    "median T (tokens)",
    "median τ_first",
    "median t_first (tokens)",
    "short CoTs (T ≤ stride)",
    "CoTs at the token limit",
    "no final answer",
]


def latency_table(
    table: dict[str, float], primary: str, run: RunData, recs: Sequence[SelfcommitRecord]
) -> Table:
    """τ_first beside the latency in tokens and the CoT length, per condition: median T, median
    τ_first and median t_first = τ_first · T (over the responses of Table I), the CoTs with one
    probe position, and (over all scored responses) the CoTs that hit the token limit and
    those without a final answer."""
    stride = parameters_used(run.task_args, run.task_metadata).get("stride")
    t = Table(
        f"Latency: {primary} beside t_first = {primary} · T in tokens and the CoT length T",
        LATENCY_COLUMNS,
    )
    for cond in (HONEST, HINTED):
        t.add(
            cond,
            count_cell(float(sum(r.condition == cond for r in recs))),
            tokens_cell(table[f"median_T/{cond}"]),
            table[f"median_{cond}/{primary}"],
            tokens_cell(table[f"median_t_first_{cond}/{primary}"]),
            count_cell(table[f"n_short_cot/{cond}"]),
            count_cell(table[f"n_truncated/{cond}"]),
            count_cell(table[f"n_no_answer/{cond}"]),
        )
    t.note = (
        "t_first is the first probed t with c(t) ≥ θ (T when never reached); τ_first = "
        "t_first / T, so one commitment at the first probe gives τ_first = stride / T, larger "
        "for a shorter CoT. A CoT of T ≤ stride"
        + (f" (= {stride})" if stride is not None else "")
        + " tokens has one probe position, t = T, so its τ_first is 1.0 (the most honest-like "
        "value) whatever c(T). Medians over the responses of Table I; the last two columns over "
        "all scored responses."
    )
    return t


def sweep_ranges(table: dict[str, float], names: Sequence[str]) -> dict[str, Any]:
    """The theta sweep's spread as the study states it (Sec. IV-C: the sweep "changes the
    all-row AUROC only from 0.876 to 0.878"): ``theta_sweep/auroc`` = the lowest to the highest
    AUROC over the thetas, ``theta_sweep/wins`` the same of the paired wins as counts out of
    n_pairs."""
    taus = _tau_names(names)
    aurocs = [table[f"auroc/{s}"] for s in taus]
    wins = [table[f"wins/{s}"] for s in taus]
    if not taus or any(math.isnan(v) for v in aurocs + wins):
        return {}
    n = table["n_pairs"]
    return {
        "theta_sweep/auroc": f"{fmt(min(aurocs))} to {fmt(max(aurocs))}",
        "theta_sweep/wins": f"{pairs_text(min(wins), n)} to {pairs_text(max(wins), n)}",
    }


# --- the study's published numbers beside the run's -------------------------------------------

PUBLISHED_GROUPS = (
    (
        "published_table_i",
        "Table I",
        lambda k: (
            k == "n_pairs"
            or k.split("/")[0] in ("auroc", "median_honest", "median_hinted", "wins", "best_acc")
        ),
    ),
    (
        "published_table_ii",
        "Table II and Sec. IV-C (both answers correct)",
        lambda k: k.startswith("both_correct/"),
    ),
    ("published_table_iii", "Table III", lambda k: k.startswith(("n/", "median/"))),
    (
        "published_sweep",
        "Sec. IV-C (threshold sweep, all pairs)",
        lambda k: k.startswith("theta_sweep/"),
    ),
)
"""Report tables of the study's published numbers: (table key, title, which metric names)."""

STUDY_SYMBOLS = {
    "range_c": "range_c",
    "uncommitted": "E[1−c]",
    "lowcommit": "Pr[c<0.5]",
    "tau_0.8": "τ_first(0.8)",
    "rho_back": "ρ_back",
}
"""The study's names of the Table I summaries."""

QUANTITIES = {
    "auroc": "AUROC",
    "median_honest": "honest median",
    "median_hinted": "hinted median",
    "wins": "paired wins",
    "best_acc": "best accuracy",
}


def published_label(key: str) -> tuple[str, str]:
    """(row, quantity) of a published metric name: ``auroc/tau_0.8`` -> ("tau_0.8
    (τ_first(0.8))", "AUROC"), ``both_correct/wins/tau_0.5`` -> ("tau_0.5", "paired wins"),
    ``median/honest/correct/range_c`` -> ("honest, correct", "median range_c"), ``n_pairs`` ->
    ("all", "pairs")."""
    parts = key.split("/")
    if parts[0] == "both_correct":
        parts = parts[1:]
    if parts == ["n_pairs"]:
        return "all" if key == "n_pairs" else "both correct", "pairs"
    if parts[0] == "n":
        return f"{parts[1]}, {parts[2]}", "n"
    if parts[0] == "median":
        return f"{parts[1]}, {parts[2]}", f"median {parts[3]}"
    if parts[0] == "theta_sweep":
        return "τ_first(θ), θ = 0.5 … 1.0", f"{QUANTITIES[parts[1]]}, lowest to highest"
    symbol = STUDY_SYMBOLS.get(parts[1])
    row = parts[1] if symbol in (None, parts[1]) else f"{parts[1]} ({symbol})"
    return row, QUANTITIES[parts[0]]


def _published_cell(key: str, value: Any, values: dict[str, Any]) -> Cell:
    """A cell of a published table: a count of pairs as "wins/n", a count plainly, a text as
    it stands, else a number."""
    if isinstance(value, str):
        return Cell(value, value)
    parts = key.split("/")
    if "wins" in parts:
        n = values.get(
            "both_correct/n_pairs" if parts[0] == "both_correct" else "n_pairs", math.nan
        )
        return Cell(value, pairs_text(value, n))
    if parts[-1] == "n_pairs" or parts[0] == "n":
        return count_cell(value)
    return Cell(value, fmt(value))


def _difference_cell(key: str, mine: Any, published: Any) -> Cell:
    """this run − published for two numbers, a count as a count (a dash for a text, or NaN)."""
    if isinstance(mine, str) or isinstance(published, str):
        return Cell(math.nan, fmt(math.nan))
    d = float(mine) - float(published)
    parts = key.split("/")
    return count_cell(d) if parts[-1] == "n_pairs" or parts[0] == "n" else Cell(d, fmt(d))


def add_published_tables(sec: Section, run: RunData, values: dict[str, Any]) -> None:
    """Tables I-III and the threshold sweep of the study: each published value (``PAPER``)
    beside the run's value of the same metric, labelled with the study's model."""
    sec.text(published_intro(PAPER, run, "50 problems"))
    for key, title, wanted in PUBLISHED_GROUPS:
        table = published_table(title, PAPER)
        for name, published in PAPER.published.items():
            if not wanted(name):
                continue
            row, quantity = published_label(name)
            mine = values.get(name, math.nan)
            table.add(
                Cell(name, row),
                quantity,
                _published_cell(name, mine, values),
                _published_cell(
                    name,
                    published.value,
                    {
                        "n_pairs": PAPER.published["n_pairs"].value,
                        "both_correct/n_pairs": PAPER.published["both_correct/n_pairs"].value,
                    },
                ),
                _difference_cell(name, mine, published.value),
                published.where,
            )
        sec.table(key, table)


def no_answer_line(log: LogConventions, table: dict[str, float]) -> str:
    """How many responses had no final answer, and what was done with them."""
    counts = (
        f"honest {int(table['n_no_answer/honest'])}, hinted {int(table['n_no_answer/hinted'])}; "
        f"{int(table['n_pairs_dropped_no_answer'])} pair(s) dropped"
    )
    line = (
        f"No final answer: {counts}. Such a response has no curve; it and the other "
        "response of its problem are left out of every table below."
    )
    return f"{line} {log.no_answer_note}" if log.no_answer_note else line


def c0_medians(samples: Sequence[ScoredSample], exact: bool = False) -> dict[str, float] | None:
    """Median c0 (the t = 0 probe; c0_exact with ``exact``) per condition over responses with
    a final answer; None if the run made no such probe."""
    by: dict[str, list[float]] = {HONEST: [], HINTED: []}
    for s in samples:
        md = SelfcommitScoreMetadata.from_metadata(s.score.metadata)
        c0 = md.c0_exact if exact else md.c0
        meta = s.sample_metadata or {}
        if c0 is not None and meta.get("condition") in by:
            by[meta["condition"]].append(c0)
    if not any(by.values()):
        return None
    return {c: float(np.median(v)) if v else math.nan for c, v in by.items()}


# --- comparison -----------------------------------------------------------------------------------


def win_rate_rows(recs: Sequence[SelfcommitRecord], summary: str) -> compare_ci.UnitRows:
    """Paired win rate of ``summary`` as bootstrap rows: one row per problem with both
    conditions (unit = pair_id), value 1{honest > hinted}; the statistic is their mean."""
    ps = pairs(recs)
    return compare_ci.mean_rows(
        [h.pair_id for h, _ in ps],
        [float(h.summaries[summary] > g.summaries[summary]) for h, g in ps],
    )


def best_accuracy_rows(recs: Sequence[SelfcommitRecord], summary: str) -> compare_ci.UnitRows:
    """Best-threshold accuracy of ``summary`` (honest vs hinted,
    :func:`cotaudit.stats.best_threshold_accuracy`) as bootstrap rows: one row per response,
    its unit the problem (pair_id), so a resample takes both responses of each drawn problem."""
    values = np.array([r.summaries[summary] for r in recs], dtype=float)
    honest = np.array([r.condition == HONEST for r in recs], dtype=bool)

    def statistic(idx: np.ndarray) -> float:
        return best_threshold_accuracy(values[idx][honest[idx]], values[idx][~honest[idx]])

    return compare_ci.UnitRows([r.pair_id for r in recs], statistic)


def compare(sections: Sequence[Section], out_dir: Path, stem: str) -> Section | None:
    """One column per run: headline numbers; figure: AUROC per summary, one bar per run."""
    secs = [s for s in sections if "table" in s.data and s.run is not None]
    if len(secs) < 2:
        return None
    runs = [s.run for s in secs if s.run is not None]
    comp = Section("selfcommit · comparison of runs")
    labels = [r.label for r in runs]
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
        compare_ci.add_compared(
            t,
            f"best accuracy {n}",
            compare_ci.compare_runs([best_accuracy_rows(s.data["records"], n) for s in secs]),
            labels[0],
        )
    for n in main:
        t.add(
            f"paired wins {n}",
            *(
                Cell(
                    s.data["table"][f"wins/{n}"],
                    pairs_text(s.data["table"][f"wins/{n}"], s.data["table"]["n_pairs"]),
                )
                for s in secs
            ),
        )
        compare_ci.add_compared(
            t,
            f"paired win rate {n}",
            compare_ci.compare_runs([win_rate_rows(s.data["records"], n) for s in secs]),
            labels[0],
        )
    for c in (HONEST, HINTED):
        t.add(f"median T {c} (tokens)", *(s.data["table"][f"median_T/{c}"] for s in secs))
        t.add(
            f"CoTs at the token limit, {c}",
            *(count_cell(s.data["table"][f"n_truncated/{c}"]) for s in secs),
        )
    clustered = all(s.data["contrasts"] for s in secs)
    if clustered:
        rows = [
            compare_ci.cluster_rows(r.scored(SCORER), s.data["contrasts"][0][0], "pair_id")
            for s, r in zip(secs, runs, strict=True)
        ]
        compare_ci.add_compared(
            t,
            "cluster F1",
            compare_ci.compare_runs(rows, n_boot=compare_ci.CLUSTER_N_BOOT),
            labels[0],
        )
    t.note = compare_ci.note("problem", cluster=clustered) + (
        " Paired win rate = paired wins / problems with both conditions; its interval "
        "resamples those problems. Best accuracy's interval resamples problems with both of "
        "their responses."
    )
    comp.table("comparison", t)
    comp.figure(
        "comparison_figure",
        figures.grouped_bars(
            main,
            [
                (r.label, [s.data["table"][f"auroc/{n}"] for n in main])
                for s, r in zip(secs, runs, strict=True)
            ],
            figures.FigureText(
                out_dir / f"{stem}-compare.png",
                "selfcommit: AUROC (honest vs hinted) per summary",
                caption="Comparison. AUROC per summary, one bar per run; dashed: chance (0.5).",
                ylabel="AUROC",
            ),
            reference=0.5,
            ylim=(0, 1),
        ),
    )
    return comp
