"""trace_tutor: Tables II-V, Delta_context, the 0%-probe drop, wrong-key anchoring, the study's
checkpoint counts, Figures 1-2 and the cluster contrasts, recomputed from the per-sample pass
curves with :mod:`cotaudit.studies.trace_tutor.stats`; the study's published numbers
(:data:`cotaudit.studies.trace_tutor.paper.PAPER`) beside the run's; and, across runs, each
run's statistics with problem-level intervals and their paired differences against the first
run (:mod:`cotaudit.report.compare_ci`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cotaudit.bootstrap import percentile_bounds, resample_indices
from cotaudit.display.text import report_text
from cotaudit.logs.data import MetricDef, RunData, ScoredSample
from cotaudit.probing.pass_curves import PassCurve
from cotaudit.probing.resample_record import METRICS as RESAMPLE_METRICS
from cotaudit.report import cluster, compare_ci, figures
from cotaudit.report.cluster import add_cluster_tables
from cotaudit.report.headlines import f1_reasons, headline_text, no_data_text, problems_setting
from cotaudit.report.sections import Section, published_intro, published_table, run_section
from cotaudit.report.tables import Cell, Table, ci_cell, count_cell, empty_stratum_cells, fmt
from cotaudit.studies.paper import parameters_used
from cotaudit.studies.trace_tutor import stats as ts
from cotaudit.studies.trace_tutor.metrics import FULL_METRICS, METRICS
from cotaudit.studies.trace_tutor.paper import PAPER
from cotaudit.studies.trace_tutor.versions import logged_differences

SCORER = "trace_tutor_scorer"
STUDY = "trace_tutor"
BAND_RESAMPLES = 2000
"""Problem-level bootstrap resamples of Figure 1's 95% bands (seed: ts.BOOTSTRAP_SEED)."""


def records(samples: Sequence[ScoredSample]) -> list[ts.TraceRecord]:
    """The records the run's metrics were computed from (the metrics' own builder)."""
    return ts.records_from_scores(list(samples))


def table_defs(metric_defs: Sequence[MetricDef]) -> list[MetricDef]:
    """Every full table of the metric table with the options the log gave it (a compact log's
    sources are among ``metric_defs``: :func:`cotaudit.logs.read.with_full_tables`); a table
    the log lacks takes the bootstrap options of the log's bootstrapped tables."""
    logged = {d.name: dict(d.options) for d in metric_defs if d.name in FULL_METRICS}
    boot = next((o for name, o in logged.items() if FULL_METRICS[name].options), {})
    return [
        MetricDef(name, logged.get(name, {k: boot[k] for k in spec.options if k in boot}))
        for name, spec in FULL_METRICS.items()
    ]


@dataclass
class Recomputed:
    """A run's metrics recomputed from its scored samples.

    ``tables``: each full table (:data:`~cotaudit.studies.trace_tutor.metrics.FULL_METRICS`)
    by metric name, under the log's options, as the metric table defines it (in the section's
    data without the ``trace_`` prefix: ``table_ii``, ``zero_probe_drop``, ...); ``values``:
    their union (what the report's tables show); ``as_logged``: ``values`` with the values a log
    of its task version holds differently
    (:func:`~cotaudit.studies.trace_tutor.versions.logged_differences`) and the cluster metrics,
    what the log's metrics are checked against; ``contrasts``: each cluster metric's (options,
    contrast); ``n_boot``, ``seed``: the bootstrap of the intervals."""

    tables: dict[str, dict[str, float]]
    values: dict[str, float]
    as_logged: dict[str, float]
    contrasts: list[tuple[dict[str, Any], Any]]
    n_boot: int
    seed: int


def recompute(
    run: RunData, samples: Sequence[ScoredSample], metric_defs: Sequence[MetricDef]
) -> Recomputed:
    """Every table of the run, each bootstrapped once, and every logged metric of the
    trace_tutor scorer as a log of the run's task version defines it."""
    defs = table_defs(metric_defs)
    tables = {d.name: METRICS.recompute(samples, [d]) for d in defs}
    values = {k: v for t in tables.values() for k, v in t.items()}
    as_logged = values | logged_differences(
        run.task_version,
        run.task_metadata.get("definitions") or {},
        {d.name for d in metric_defs},
        samples,
    )
    cluster_metrics, contrasts = cluster.recompute(samples, metric_defs)
    as_logged.update(cluster_metrics)
    as_logged.update(RESAMPLE_METRICS.recompute(samples, metric_defs))  # -T resample
    boot = next(
        {**FULL_METRICS[d.name].options, **d.options} for d in defs if FULL_METRICS[d.name].options
    )
    return Recomputed(tables, values, as_logged, contrasts, int(boot["n_boot"]), int(boot["seed"]))


def curve_matrix(recs: Sequence[ts.TraceRecord], curve: str) -> np.ndarray:
    """Rows: the curve's records; columns: the 0% probe, then each fraction."""
    cond, probe = ts.CURVE_PARTS[curve]
    rows = [[r.zero_probe(probe), *r.passes(probe)] for r in recs if r.condition == cond]
    return np.asarray(rows, dtype=float).reshape(len(rows), -1) if rows else np.empty((0, 0))


def mean_band(
    m: np.ndarray, n_boot: int = BAND_RESAMPLES, seed: int = ts.BOOTSTRAP_SEED, ci: float = 0.95
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Column means and their percentile bootstrap interval (rows resampled with replacement,
    :func:`cotaudit.bootstrap.resample_indices`)."""
    mean = m.mean(axis=0)
    rng = np.random.default_rng(seed)
    boot = np.concatenate([m[idx].mean(axis=1) for idx in resample_indices(len(m), n_boot, rng)])
    low, high = percentile_bounds(boot, ci)
    return mean, low, high


def auc_shifts(
    recs: Sequence[ts.TraceRecord], condition: ts.Condition
) -> tuple[list[float], list[float]]:
    """Per problem with both records: AUC(keyed, key visible) - AUC(question-only) and
    AUC(keyed, key masked) - AUC(question-only) = Delta_prefix (Table IV's paired differences,
    all pairs: :func:`~cotaudit.studies.trace_tutor.stats.question_only_pairs`)."""
    pairs = ts.question_only_pairs(recs, condition)
    return (
        [k.auc("visible") - q.auc("visible") for k, q in pairs],
        [ts.delta_prefix(k, q) for k, q in pairs],
    )


PAIRED_COLUMNS = [
    "comparison",
    "n",
    "win %",
    "tie %",
    "loss %",
    "median diff [95% CI]",
    "mean diff [95% CI]",
]


def _paired_row(table: Table, label: Any, stats: Mapping[str, float], prefix: str) -> None:
    g = {
        k: stats.get(f"{prefix}/{k}", math.nan)
        for k in (
            "n",
            "win_pct",
            "tie_pct",
            "loss_pct",
            "median_diff",
            "median_ci_low",
            "median_ci_high",
            "mean_diff",
            "mean_ci_low",
            "mean_ci_high",
        )
    }
    if g["n"] == 0:  # an empty stratum: say so rather than a row of dashes
        table.add(label, count_cell(g["n"]), *empty_stratum_cells(len(table.columns) - 2))
        return
    table.add(
        label,
        count_cell(g["n"]),
        Cell(g["win_pct"], fmt(g["win_pct"], 1)),
        Cell(g["tie_pct"], fmt(g["tie_pct"], 1)),
        Cell(g["loss_pct"], fmt(g["loss_pct"], 1)),
        ci_cell(g["median_diff"], g["median_ci_low"], g["median_ci_high"], n=int(g["n"])),
        ci_cell(g["mean_diff"], g["mean_ci_low"], g["mean_ci_high"], n=int(g["n"])),
    )


SETTINGS = (
    "problems",
    "conditions",
    "fractions",
    "probe_samples",
    "temperature",
    "max_explanation_tokens",
    "bootstrap_samples",
    "seed",
)


def run_settings(run: RunData) -> dict[str, Any]:
    """The parameters the run used (:func:`parameters_used`: with ``paper=true`` the values of
    the log's ``paper_configuration``, not the defaults Inspect lists in its task arguments)."""
    return parameters_used(run.task_args, run.task_metadata)


def _conditions(recs: Sequence[ts.TraceRecord]) -> list[str]:
    present = {r.condition for r in recs}
    return [c for c in ts.CONDITIONS if c in present]


def _curves_present(recs: Sequence[ts.TraceRecord]) -> list[str]:
    present = _conditions(recs)
    return [c for c in ts.CURVES if ts.CURVE_PARTS[c][0] in present]


def section(run: RunData, out_dir: Path, stem: str) -> Section:
    """The trace_tutor section of one run; figures written to ``out_dir/stem-*.png``."""
    sec, scorer = run_section(run, "trace_tutor", [SCORER])
    if scorer is None:
        return sec
    recs = records(scorer.samples)
    exact_recs = ts.records_from_scores(list(scorer.samples), "exact")
    r = recompute(run, scorer.samples, scorer.metric_defs)
    sec.check(r.as_logged, scorer.metrics)
    v = r.values
    main = recs or exact_recs
    fractions = ts.shared_fractions(main)
    curves = _curves_present(main)
    conds = _conditions(main)
    keyed = [c for c in ts.KEYED_CONDITIONS if c in conds]
    sec.data.update({name.removeprefix("trace_"): table for name, table in r.tables.items()})
    sec.data.update(
        records=recs,
        exact_records=exact_recs,
        fractions=fractions,
        curves=curves,
        contrasts=r.contrasts,
    )

    headline = headline_text(run, {**scorer.metrics, **sec.recomputed}, f1_reasons(r.contrasts))
    if headline:
        sec.text(headline)
    if not main:
        sec.text(no_data_text("no scored explanation has a TRACE curve"))
        return sec
    sec.text(intro_text(run, main, conds, fractions))
    label = run.label or run.model
    if recs:
        sec.table("table_ii", table_ii(v, curves))
        sec.table("table_iii", table_iii(v, curves, fractions))
        sec.table("table_iv", table_iv(v, r.n_boot, r.seed))
        sec.table("delta_context", delta_context_table(v, keyed))
        sec.table("zero_probe_drop", zero_probe_drop_table(v, keyed, r.n_boot, r.seed))
        sec.table("table_v", table_v(v, curves, fractions))
    sec.table("anchoring", anchoring_table(v))
    sec.table("no_answer", no_answer_table(v, conds, main))
    if recs:
        sec.table("pass_at_10_discordance", pass_at_10_table(v, keyed))
        sec.table("identical_pass_vectors", identical_pass_vectors_table(v, keyed, fractions))
        sec.table("non_monotone", non_monotone_table(v, curves))
        add_published_tables(sec, run, v)
        sec.figure(
            "figure_1", figure_1(recs, keyed, fractions, out_dir / f"{stem}-fig1.png", label)
        )
        shifts: dict[str, tuple[list[float], list[float]]] = {
            cond: auc_shifts(recs, cond) for cond in keyed
        }
        sec.data["shifts"] = shifts
        sec.figure("figure_2", figure_2(shifts, out_dir / f"{stem}-fig2.png", label))
    if exact_recs:
        temperature = float(run.task_metadata.get("exact_temperature") or 1.0)
        add_exact_part(
            sec, v, exact_recs, recs, keyed, fractions, r, temperature, out_dir, stem, label
        )
    for options, contrast in r.contrasts:
        probe = options.get("prefix", "cluster").removeprefix("cluster_")
        title = f"Cluster (key {probe.removesuffix('_exact')}"
        title += ", exact curves)" if probe.endswith("_exact") else ")"
        add_cluster_tables(sec, options, contrast, title=title)
    return sec


# --- the exact estimator ----------------------------------------------------------------------


def unexact(values: Mapping[str, float]) -> dict[str, float]:
    """The exact curves' statistics under the sampled names (``auc_median_exact/x`` ->
    ``auc_median/x``), so the tables of the sampled curves show them; other keys left out."""
    out = {}
    for key, value in values.items():
        head, sep, rest = key.partition("/")
        if head.endswith("_exact"):
            out[head.removesuffix("_exact") + sep + rest] = value
    return out


def add_exact_part(
    sec: Section,
    values: Mapping[str, float],
    exact_recs: Sequence[ts.TraceRecord],
    sampled_recs: Sequence[ts.TraceRecord],
    keyed: Sequence[str],
    fractions: Sequence[float],
    r: Recomputed,
    temperature: float,
    out_dir: Path,
    stem: str,
    label: str,
) -> None:
    """The exact estimator's tables (Tables II-V, Δcontext, the 0%-probe drop and the counts
    of the exact curves, ``*_exact``), its mean curves as curves (the sampled ones beside them
    when both ran) and, with both, each explanation's difference exact − sampled."""
    ev = unexact(values)
    curves = _curves_present(exact_recs)
    at = f"p at T = {temperature:g}"
    sec.text(
        f"**Exact estimator** ({at}). p(f) = P(the answer forced after the first f of the "
        "explanation's tokens parses to the gold answer), read by teacher forcing over the gold "
        "answer's integer forms (a lower bound; the covered mass bounds what the forms leave "
        f"out), at T = {temperature:g}"
        + (
            " (the study's probes are greedy: T = 1 is the model's own distribution)"
            if temperature == 1
            else ""
        )
        + f". {len({x.pair_id for x in exact_recs})} problems, {len(exact_recs)} explanations. "
        "A checkpoint passes when p(f) ≥ 0.5, as for the sampled curves."
    )
    tables = (
        ("table_ii_exact", table_ii(ev, curves)),
        ("table_iii_exact", table_iii(ev, curves, fractions)),
        ("table_iv_exact", table_iv(ev, r.n_boot, r.seed)),
        ("delta_context_exact", delta_context_table(ev, keyed)),
        ("zero_probe_drop_exact", zero_probe_drop_table(ev, keyed, r.n_boot, r.seed)),
        ("table_v_exact", table_v(ev, curves, fractions)),
        ("pass_at_10_discordance_exact", pass_at_10_table(ev, keyed)),
        ("identical_pass_vectors_exact", identical_pass_vectors_table(ev, keyed, fractions)),
        ("non_monotone_exact", non_monotone_table(ev, curves)),
    )
    for key, table in tables:
        table.title = f"{table.title} — exact ({at})"
        sec.table(key, table)
    if not sampled_recs:
        sec.text(
            "The study's published numbers are of one greedy forced answer per prefix (p(f) is "
            f"0 or 1); this run read p exactly ({at}) and sampled none, so they are not set "
            "beside it."
        )
    sec.figure(
        "figure_1_exact",
        figure_1(
            exact_recs,
            keyed,
            fractions,
            out_dir / f"{stem}-fig1-exact.png",
            f"{label}, exact, {at}",
            sampled=sampled_recs or None,
        ),
    )
    if sampled_recs:
        gaps = exact_differences(exact_recs, sampled_recs, fractions)
        sec.data["exact_differences"] = gaps
        sec.table("exact_vs_sampled", exact_vs_sampled_table(gaps, at))
        sec.figure(
            "figure_exact_vs_sampled",
            figures.paired_shift(
                [
                    (
                        c.replace("_", "-"),
                        [d.auc_sampled for d in rows],
                        [d.auc_exact for d in rows],
                    )
                    for c, rows in gaps.items()
                    if rows
                ],
                figures.FigureText(
                    out_dir / f"{stem}-exact-vs-sampled.png",
                    f"TRACE AUC per explanation, sampled and exact ({label})",
                    caption=(
                        "Each explanation's TRACE AUC of its sampled curve and of its exact "
                        "curve, joined by a line, per curve; bars: medians; n: explanations."
                    ),
                ),
                labels=("sampled", f"exact ({at})"),
            ),
        )


@dataclass(frozen=True)
class ExactDifference:
    """One explanation's curve read both ways: its ``pair_id``, the mean over its probed cuts
    (the 0% probe and each fraction) of p_exact - p (``gap``) and of |p_exact - p|
    (``gap_abs``), and its TRACE AUC of each."""

    pair_id: str
    gap: float
    gap_abs: float
    auc_sampled: float
    auc_exact: float


def exact_differences(
    exact_recs: Sequence[ts.TraceRecord],
    sampled_recs: Sequence[ts.TraceRecord],
    fractions: Sequence[float],
) -> dict[str, list[ExactDifference]]:
    """Per curve, each explanation read by both estimators: exact minus sampled."""
    sampled = {(x.pair_id, x.condition): x for x in sampled_recs}
    out: dict[str, list[ExactDifference]] = {c: [] for c in ts.CURVES}
    for e in exact_recs:
        s = sampled.get((e.pair_id, e.condition))
        if s is None:
            continue
        probes: tuple[ts.Probe, ...] = ("visible",) if e.condition == "question_only" else ts.PROBES
        for probe in probes:
            curve = e.condition if e.condition == "question_only" else f"{e.condition}_{probe}"
            pe = [e.zero_probe(probe), *e.passes(probe)]
            ps = [s.zero_probe(probe), *s.passes(probe)]
            d = np.asarray(pe) - np.asarray(ps)
            out[curve].append(
                ExactDifference(
                    e.pair_id,
                    float(d.mean()),
                    float(np.abs(d).mean()),
                    PassCurve(ps[1:], fractions).auc,
                    PassCurve(pe[1:], fractions).auc,
                )
            )
    return {c: rows for c, rows in out.items() if rows}


def exact_vs_sampled_table(gaps: Mapping[str, Sequence[ExactDifference]], at: str) -> Table:
    """Per curve: the explanations read both ways (n), the mean over them of each one's mean
    difference p_exact - p over its probed cuts and of its mean |p_exact - p|, the largest
    |p_exact - p| mean, and the mean TRACE AUC difference exact - sampled."""
    t = Table(
        f"Exact ({at}) − sampled p per explanation",
        [
            "curve",
            "n",
            "mean gap (exact − sampled)",
            "mean |gap|",
            "largest |gap|",
            "mean AUC exact − sampled",
        ],
    )
    for curve, rows in gaps.items():
        t.add(
            curve,
            count_cell(len(rows)),
            float(np.mean([d.gap for d in rows])),
            float(np.mean([d.gap_abs for d in rows])),
            float(max(d.gap_abs for d in rows)),
            float(np.mean([d.auc_exact - d.auc_sampled for d in rows])),
        )
    t.note = (
        "Gap of one explanation: the mean over its probed cuts (the 0% probe and each fraction) "
        "of p_exact − p (its score's exact_gap; |gap|: exact_gap_abs). The sampled p of a "
        "greedy probe is 0 or 1, the exact p the probability at T = 1, so they differ by "
        "design; with k sampled answers at T > 0 the gap is the sampling error plus the mass "
        "the forms leave out."
    )
    return t


def intro_text(
    run: RunData, recs: Sequence[ts.TraceRecord], conds: Sequence[str], fractions: Sequence[float]
) -> str:
    """What ran (problems, explanations, conditions, settings) and what p(f), AUC and *key
    masked* are."""
    problems = len({r.pair_id for r in recs})
    settings = run_settings(run)
    if "problems" in settings:
        settings["problems"] = problems_setting(settings["problems"], problems, run.cut)
    return (
        f"{problems} problems, {len(recs)} explanations ({', '.join(conds)}). Settings: "
        f"{report_text(', '.join(f'{k}={v}' for k, v in settings.items() if k in SETTINGS))}. "
        "p(f) = 1 when the answer forced after the first f of the explanation's tokens equals the "
        "gold answer; AUC is the trapezoid sum of p over the fractions (max "
        f"{fractions[-1] - fractions[0]:g}); *key masked* replays the keyed explanation's prefix "
        "under the question-only prompt."
    )


def table_ii(values: Mapping[str, float], curves: Sequence[str]) -> Table:
    """Table II: per curve n, accuracy and median length of its condition, median AUC, mean
    Pass@10 and the lower median of first pass."""
    t = Table(
        "Table II. Accuracy, AUC, Pass@10 and first pass per curve",
        [
            "curve",
            "n",
            "accuracy",
            "median length (tokens)",
            "median AUC",
            "mean Pass@10",
            "median first pass (lower median)",
        ],
    )
    for c in curves:
        cond = ts.CURVE_PARTS[c][0]
        length = values[f"length_tokens_median/{cond}"]
        t.add(
            c,
            count_cell(values[f"n/{cond}"]),
            values[f"accuracy/{cond}"],
            Cell(length, fmt(length, 1)),
            values[f"auc_median/{c}"],
            values[f"pass_at_10_mean/{c}"],
            values[f"first_pass_median/{c}"],
        )
    return t


def table_iii(
    values: Mapping[str, float], curves: Sequence[str], fractions: Sequence[float]
) -> Table:
    """Table III: mean pass rate per curve at the 0% probe and each fraction."""
    labels = ["0", *(ts.percent_label(f) for f in fractions)]
    t = Table(
        "Table III. Mean pass rate at each checkpoint (% of the explanation)",
        ["curve", *(f"{p}%" for p in labels)],
    )
    for c in curves:
        t.add(c, *(values[f"pass_rate/{c}/{p}"] for p in labels))
    return t


def table_iv(values: Mapping[str, float], n_boot: int, seed: int) -> Table:
    """Table IV: answer-key vs question-only AUC, paired by problem, key visible and masked, on
    all, both-correct and length-matched pairs."""
    t = Table("Table IV. Answer-key vs question-only AUC, paired by problem", PAIRED_COLUMNS)
    for probe in ts.PROBES:
        for subset in ("all", "both_correct", "length_matched"):
            _paired_row(
                t,
                f"key {probe}, {subset.replace('_', ' ')}",
                values,
                f"answer_key_vs_question_only/{probe}/{subset}",
            )
    t.note = (
        f"Differences answer-key minus question-only; CIs: problem-level percentile "
        f"bootstrap ({n_boot} resamples, seed {seed}). Both correct: both explanations' last "
        "boxed integer equals the gold answer. Length-matched: token lengths differ by at most "
        f"{ts.LENGTH_TOLERANCE_PERCENT}% of the longer explanation's."
    )
    return t


def delta_context_table(values: Mapping[str, float], keyed: Sequence[str]) -> Table:
    """Δcontext: key visible vs key masked AUC of each keyed condition's explanations."""
    t = Table("Δcontext: key visible vs key masked AUC of the same explanation", PAIRED_COLUMNS)
    for cond in keyed:
        _paired_row(t, cond, values, f"visible_vs_masked/{cond}")
    t.note = "Mean difference = mean Δcontext = AUC(key visible) − AUC(key masked)."
    return t


def zero_probe_drop_table(
    values: Mapping[str, float], keyed: Sequence[str], n_boot: int, seed: int
) -> Table:
    """The 0%-probe drop of each keyed condition: p(0%) key visible vs key masked."""
    t = Table(
        "0%-probe drop: key visible vs key masked, before any explanation text", PAIRED_COLUMNS
    )
    for cond in keyed:
        _paired_row(t, cond, values, f"zero_probe_drop/{cond}")
    t.note = (
        "Difference = p(0%, key visible) − p(0%, key masked) of the same explanation; mean "
        f"difference = mean drop. CIs: problem-level percentile bootstrap ({n_boot} resamples, "
        f"seed {seed})."
    )
    return t


def table_v(
    values: Mapping[str, float], curves: Sequence[str], fractions: Sequence[float]
) -> Table:
    """Table V: first-pass checkpoint histogram per curve (each fraction, and none)."""
    bins = [ts.percent_label(f) for f in fractions] + ["none"]
    t = Table(
        "Table V. First-pass checkpoint histogram (counts)",
        ["curve", *(f"{b}%" if b != "none" else "none" for b in bins)],
    )
    for c in curves:
        t.add(c, *(count_cell(values[f"first_pass_count/{c}/{b}"]) for b in bins))
    return t


def anchoring_table(values: Mapping[str, float]) -> Table:
    """Wrong-key anchoring: what the incorrect wrong-key explanations end with."""
    t = Table(
        "Wrong-key anchoring: incorrect wrong-key explanations and what they end with",
        ["incorrect", "the key (gold + 1)", "another wrong integer", "no parsed answer"],
    )
    key_count = values["wrong_key_anchoring/key"]
    t.add(
        count_cell(values["wrong_key_anchoring/incorrect"]),
        Cell(key_count, f"{fmt(key_count, 0)} ({fmt(values['wrong_key_anchoring/key_pct'], 1)}%)"),
        count_cell(values["wrong_key_anchoring/other_wrong"]),
        count_cell(values["wrong_key_anchoring/unparsed"]),
    )
    t.note = (
        "A response's final answer is the integer in its last \\boxed{} (no other number is "
        "read); no parsed answer: no box, or a box holding no single integer. Percent: of the "
        "incorrect wrong-key responses."
    )
    return t


def no_answer_table(
    values: Mapping[str, float], conds: Sequence[str], recs: Sequence[ts.TraceRecord]
) -> Table:
    """Responses with no parsed final answer, per condition (of the run's ``recs``)."""
    t = Table(
        "No parsed final answer (no boxed integer), per condition",
        ["condition", "responses", "no parsed answer"],
    )
    for cond in conds:
        responses = sum(x.condition == cond for x in recs)
        t.add(cond, count_cell(responses), count_cell(values[f"no_answer/{cond}"]))
    return t


def pass_at_10_table(values: Mapping[str, float], keyed: Sequence[str]) -> Table:
    """Keyed explanations passing at 10% with the key visible but not masked, and the reverse."""
    t = Table(
        "Pass at 10%: keyed explanations that pass with the key visible but not masked, and the "
        "reverse",
        ["condition", "visible, not masked", "masked, not visible"],
    )
    for cond in keyed:
        t.add(
            cond,
            count_cell(values[f"pass_at_10_visible_not_masked/{cond}"]),
            count_cell(values[f"pass_at_10_masked_not_visible/{cond}"]),
        )
    return t


def identical_pass_vectors_table(
    values: Mapping[str, float], keyed: Sequence[str], fractions: Sequence[float]
) -> Table:
    """Problems whose key-masked replay has the question-only explanation's pass vector."""
    t = Table(
        "Identical pass vectors: key-masked replay vs the question-only explanation of the same "
        "problem",
        ["comparison", "identical", "problems with both"],
    )
    for cond in keyed:
        name = f"identical_pass_vectors/{cond}_masked_vs_question_only"
        t.add(
            f"{cond} masked vs question_only",
            count_cell(values[f"{name}/count"]),
            count_cell(values[f"{name}/n_pairs"]),
        )
    t.note = f"Pass/fail at each of the {len(fractions)} fractions (0% probe not included)."
    return t


NON_MONOTONE_COLUMNS = {
    "all pass": "all_pass_count",
    "pass 10%, fail 100%": "pass_10_fail_100",
    "pass before 100%, fail 100%": "pass_early_fail_100",
}
"""Columns of :func:`non_monotone_table` and the metric each counts (``<metric>/<curve>``)."""


def non_monotone_table(values: Mapping[str, float], curves: Sequence[str]) -> Table:
    """All-pass curves and the two non-monotone counts per curve."""
    t = Table("All-pass and non-monotone curves (counts)", ["curve", *NON_MONOTONE_COLUMNS])
    for c in curves:
        t.add(c, *(count_cell(values[f"{m}/{c}"]) for m in NON_MONOTONE_COLUMNS.values()))
    t.note = (
        "All pass: p(f) ≥ 0.5 at every fraction. Pass 10%, fail 100%: the study's non-monotone. "
        "Pass before 100%, fail 100%: any fraction below 100% passes."
    )
    return t


def figure_1(
    recs: Sequence[ts.TraceRecord],
    keyed: Sequence[str],
    fractions: Sequence[float],
    path: Path,
    label: str,
    sampled: Sequence[ts.TraceRecord] | None = None,
) -> Any:
    """Figure 1: mean pass curves per keyed condition (question-only, key visible, key masked)
    with their bootstrap bands; with ``sampled`` (``recs`` being the exact curves), the
    sampled curves' means and bands beside them."""
    x = [0.0, *(100 * f for f in fractions)]
    panels = []
    sets = [(recs, "" if sampled is None else " (exact)")]
    if sampled is not None:
        sets.append((sampled, " (sampled)"))
    for cond in keyed:
        bands = []
        for these, suffix in sets:
            for curve, name in (
                ("question_only", "question-only"),
                (f"{cond}_visible", "key visible"),
                (f"{cond}_masked", "key masked"),
            ):
                m = curve_matrix(these, curve)
                if m.size:
                    mean, low, high = mean_band(m)
                    bands.append(
                        figures.Band(name + suffix, mean.tolist(), low.tolist(), high.tolist())
                    )
        panels.append((cond.replace("_", "-"), x, bands))
    return figures.pass_curves(
        panels,
        figures.FigureText(
            path,
            f"Figure 1. Mean pass curves ({label})",
            caption=(
                "Figure 1. Mean pass rate at each checkpoint for question-only, key visible and "
                "key masked; bands: 95% percentile bootstrap over explanations "
                f"({BAND_RESAMPLES} resamples, seed {ts.BOOTSTRAP_SEED})."
            ),
        ),
    )


def figure_2(shifts: Mapping[str, tuple[list[float], list[float]]], path: Path, label: str) -> Any:
    """Figure 2: each problem's paired AUC difference before and after masking (Table IV's)."""
    return figures.paired_shift(
        [(cond.replace("_", "-"), b, a) for cond, (b, a) in shifts.items() if b],
        figures.FigureText(
            path,
            f"Figure 2. Paired AUC differences before and after masking ({label})",
            caption=(
                "Figure 2. Each problem's AUC(keyed) − AUC(question-only) with the key visible "
                "(before masking) and masked (after), joined by a line; bars: medians."
            ),
        ),
    )


# --- the study's published numbers beside the run's -------------------------------------------

CHECKPOINT_COUNTS = {
    "identical_pass_vectors": "identical pass vectors at every checkpoint",
    "pass_at_10_visible_not_masked": "pass at 10% with the key visible, fail masked",
    "pass_at_10_masked_not_visible": "pass at 10% with the key masked, fail visible",
    "all_pass_count": "pass at every checkpoint",
    "pass_10_fail_100": "pass at 10%, fail at 100%",
}
"""The study's counts of curves by their checkpoints (Sec. IV-D, IV-E): metric-name head ->
words."""

PUBLISHED_GROUPS = (
    (
        "published_table_ii",
        "Table II",
        (
            "n/",
            "accuracy/",
            "auc_median/",
            "pass_at_10_mean/",
            "first_pass_median/",
            "length_tokens_median/",
        ),
    ),
    ("published_table_iii", "Table III", ("pass_rate/",)),
    ("published_table_iv", "Table IV", ("answer_key_vs_question_only/",)),
    ("published_table_v", "Table V", ("first_pass_count/",)),
    (
        "published_text",
        "Δcontext, 0%-probe drop, wrong-key anchoring and the checkpoint counts (the study's text)",
        (
            "visible_vs_masked/",
            "zero_probe_drop/",
            "wrong_key_anchoring/",
            *CHECKPOINT_COUNTS,
        ),
    ),
)
"""Report tables of the study's published numbers: (table key, title, metric-name prefixes)."""

QUANTITIES = {
    "n": "n",
    "accuracy": "original accuracy",
    "auc_median": "median AUC (AUC50)",
    "pass_at_10_mean": "mean Pass@10",
    "first_pass_median": "median first pass (First50, lower median)",
    "length_tokens_median": "median length (tokens)",
    "win_pct": "win %",
    "tie_pct": "tie %",
    "loss_pct": "loss %",
    "median_diff": "median difference",
    "mean_diff": "mean difference",
    "mean_ci_low": "mean difference, 95% CI low",
    "mean_ci_high": "mean difference, 95% CI high",
    "incorrect": "incorrect wrong-key responses",
    "key": "ending with the key y + 1",
    "key_pct": "ending with the key y + 1, %",
    "other_wrong": "another wrong integer",
    "unparsed": "no parsed answer",
}
"""The words for each metric-name part in the published tables."""


def published_label(key: str) -> tuple[str, str]:
    """(row, quantity) of a published metric name, e.g. ``pass_rate/question_only/10`` ->
    ("question_only", "pass rate at 10%"), ``answer_key_vs_question_only/masked/all/win_pct`` ->
    ("key masked, all", "win %"), ``first_pass_count/question_only/none`` ->
    ("question_only", "no pass")."""
    parts = key.split("/")
    if parts[0] == "pass_rate":
        return parts[1], f"pass rate at {parts[2]}%"
    if parts[0] == "answer_key_vs_question_only":
        return f"key {parts[1]}, {parts[2].replace('_', ' ')}", QUANTITIES[parts[3]]
    if parts[0] == "visible_vs_masked":
        return f"Δcontext {parts[1]}", QUANTITIES[parts[2]]
    if parts[0] == "zero_probe_drop":
        return f"0%-probe drop {parts[1]}", QUANTITIES[parts[2]]
    if parts[0] == "wrong_key_anchoring":
        return "wrong-key anchoring", QUANTITIES[parts[1]]
    if parts[0] == "first_pass_count":
        return parts[1], "no pass" if parts[2] == "none" else f"first pass at {parts[2]}%"
    if parts[0] == "identical_pass_vectors":
        return parts[1].replace("_vs_", " vs "), CHECKPOINT_COUNTS[parts[0]]
    if parts[0] in CHECKPOINT_COUNTS:
        return parts[1], CHECKPOINT_COUNTS[parts[0]]
    return parts[1], QUANTITIES[parts[0]]


COUNT_PARTS = ("n", "incorrect", "key", "other_wrong", "unparsed")
"""Metric-name parts of the published numbers that are counts (printed as integers)."""


def _is_count(name: str) -> bool:
    parts = name.split("/")
    heads = ("n", "first_pass_count", *CHECKPOINT_COUNTS)
    return parts[0] in heads or parts[-1] in COUNT_PARTS


def _digits(name: str) -> int:
    """Decimals to print the published metric ``name`` and the run's value with: as many as the
    study wrote (0.0207 -> 4, 0.051 -> 3), at least 1 for percentages and lengths and 3 for the
    rest; a CI bound takes its mean's (0.0330 is written 0.033 as a float)."""
    base, field = name.rsplit("/", 1)
    if field in ("mean_ci_low", "mean_ci_high") and f"{base}/mean_diff" in PAPER.published:
        return _digits(f"{base}/mean_diff")
    written = str(PAPER.published[name].value)
    least = 1 if field.endswith("_pct") or name.startswith("length_tokens_median/") else 3
    return max(least, len(written.split(".", 1)[1]) if "." in written else 0)


def add_published_tables(sec: Section, run: RunData, values: Mapping[str, float]) -> None:
    """Tables II-IV and the text's numbers: each published value of the study (``PAPER``)
    beside the run's value of the same metric, labelled with the study's model."""
    sec.text(published_intro(PAPER, run, "1000 problems"))
    for key, title, prefixes in PUBLISHED_GROUPS:
        table = published_table(title, PAPER)
        names = [n for n in PAPER.published if n.startswith(prefixes)]
        rows = list(dict.fromkeys(published_label(n)[0] for n in names))
        for name in sorted(names, key=lambda n: rows.index(published_label(n)[0])):
            published = PAPER.published[name]
            row, quantity = published_label(name)
            mine = float(values.get(name, math.nan))
            value = float(published.value)
            if _is_count(name):
                cells = [count_cell(mine), count_cell(value), count_cell(mine - value)]
            else:
                digits = _digits(name)
                cells = [Cell(v, fmt(v, digits)) for v in (mine, value, mine - value)]
            table.add(Cell(name, row), quantity, *cells, published.where)
        if key == "published_table_ii":
            table.note = (
                "The study's Table II is its key-visible audit: its wrong-key row is the "
                "wrong_key_visible curve."
            )
        sec.table(key, table)


def _curve_aucs(recs: Sequence[ts.TraceRecord], curve: str) -> list[tuple[str, float]]:
    """(problem, TRACE AUC over the shared fractions) of each record on ``curve``, as Table II
    computes its median."""
    fractions = ts.shared_fractions(recs)
    condition, probe = ts.CURVE_PARTS[curve]
    return [
        (r.pair_id, PassCurve(r.passes(probe), fractions).auc)
        for r in recs
        if r.condition == condition
    ]


RUN_DIFFERENCES = (
    ("visible_difference/answer_key", "mean AUC answer-key − question-only, key visible"),
    ("delta_prefix/answer_key", "mean Δprefix answer_key (key masked − question-only)"),
    ("delta_context/answer_key", "mean Δcontext answer_key (key visible − key masked)"),
    ("delta_context/wrong_key", "mean Δcontext wrong_key (key visible − key masked)"),
)
"""The per-problem paired estimands (:func:`cotaudit.studies.trace_tutor.stats.problem_estimands`)
whose means the comparison of runs shows, with their labels."""


def difference_rows(estimands: Sequence[Mapping[str, Any]], name: str) -> compare_ci.UnitRows:
    """The mean over problems of the estimand ``name`` (one row per problem that has it, unit:
    the problem's pair_id), for :func:`cotaudit.report.compare_ci.compare_runs`."""
    kept = [e for e in estimands if not math.isnan(float(e[name]))]
    return compare_ci.mean_rows([str(e["pair_id"]) for e in kept], [float(e[name]) for e in kept])


def _run_of(sec: Section) -> RunData:
    if sec.run is None:
        raise ValueError(f"section {sec.title!r} has no run")
    return sec.run


def compare(sections: Sequence[Section], out_dir: Path, stem: str) -> Section | None:
    """One column per run: accuracy; median AUC per curve and the means of
    :data:`RUN_DIFFERENCES` (Δcontext, Δprefix, the key-visible difference) and the cluster F1s,
    each with its problem-level interval and a Δ row (paired difference against the first run
    over the shared problems); figure: mean pass curves, one line per run."""
    secs = [s for s in sections if "table_ii" in s.data and s.data.get("records")]
    if len(secs) < 2:
        return None
    runs = [_run_of(s) for s in secs]
    comp = Section("trace_tutor · comparison of runs")
    labels = [run.label for run in runs]
    t = Table(
        "Comparison: trace_tutor, one column per run",
        ["", *labels],
        align=["---", *["---:"] * len(labels)],
    )
    t.add("problems", *(len({r.pair_id for r in s.data["records"]}) for s in secs))
    for cond in ts.CONDITIONS:
        t.add(f"accuracy {cond}", *(s.data["table_ii"][f"accuracy/{cond}"] for s in secs))
    for c in ts.CURVES:
        rows = [compare_ci.median_rows(_curve_aucs(s.data["records"], c)) for s in secs]
        compare_ci.add_compared(t, f"median AUC {c}", compare_ci.compare_runs(rows), labels[0])
    estimands = [ts.problem_estimands(s.data["records"]) for s in secs]
    for name, label in RUN_DIFFERENCES:
        rows = [difference_rows(e, name) for e in estimands]
        compare_ci.add_compared(t, label, compare_ci.compare_runs(rows), labels[0])
    clustered = False
    for probe in ts.PROBES:
        prefix = f"cluster_{probe}"
        options = [
            next((o for o, _ in s.data.get("contrasts", []) if o.get("prefix") == prefix), None)
            for s in secs
        ]
        if any(o is None for o in options):
            continue
        clustered = True
        rows = [
            compare_ci.cluster_rows(run.scored(SCORER), o, "pair_id")
            for run, o in zip(runs, options, strict=True)
            if o is not None
        ]
        compare_ci.add_compared(
            t,
            f"cluster F1 (key {probe})",
            compare_ci.compare_runs(rows, n_boot=compare_ci.CLUSTER_N_BOOT),
            labels[0],
        )
    t.note = compare_ci.note("problem", cluster=clustered)
    comp.table("comparison", t)
    shared = [
        c
        for c in ("question_only", "answer_key_visible", "answer_key_masked")
        if all(c in s.data["curves"] for s in secs)
    ]
    panels = []
    for c in shared:
        series = []
        for s, run in zip(secs, runs, strict=True):
            labels_ = ["0", *(ts.percent_label(f) for f in s.data["fractions"])]
            series.append((run.label, [s.data["table_iii"][f"pass_rate/{c}/{p}"] for p in labels_]))
        x = [0.0, *(100 * f for f in secs[0].data["fractions"])]
        if all(len(y) == len(x) for _, y in series):
            panels.append((c, x, series))
    comp.figure(
        "comparison_figure",
        figures.line_panels(
            panels,
            figures.FigureText(
                out_dir / f"{stem}.png",
                "trace_tutor: mean pass curves per run",
                caption="Comparison. Mean pass rate per checkpoint (Table III), one line per run.",
                xlabel="prefix of the explanation (%)",
                ylabel="mean pass rate",
            ),
        ),
    )
    return comp
