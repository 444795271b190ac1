"""trace_tutor: Tables II-V, Delta_context, the 0%-probe drop, wrong-key anchoring, the study's
checkpoint counts, Figures 1-2 and the cluster contrasts, recomputed from the per-sample pass
curves with :mod:`cotaudit.studies.trace_tutor.stats`; the study's published numbers
(:data:`cotaudit.studies.trace_tutor.paper.PAPER`) beside the run's; and, across runs, each
run's statistics with problem-level intervals and their paired differences against the first
run (:mod:`cotaudit.report.compare_ci`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cotaudit.bootstrap import percentile_bounds, resample_indices
from cotaudit.report import compare_ci, figures
from cotaudit.report.cluster import add_cluster_tables, contrast_and_metrics
from cotaudit.report.data import RunData, ScoredSample, check_metrics
from cotaudit.report.headlines import f1_reasons, headline_text, no_data_text, problems_setting
from cotaudit.report.sections import Section, published_intro, published_table
from cotaudit.report.tables import Cell, Table, ci_cell, count_cell, empty_stratum_cells, fmt
from cotaudit.stats import median
from cotaudit.studies.trace_tutor import stats as ts
from cotaudit.studies.trace_tutor.paper import PAPER

SCORER = "trace_tutor_scorer"
STUDY = "trace_tutor"
BAND_RESAMPLES = 2000
"""Problem-level bootstrap resamples of Figure 1's 95% bands (seed: ts.BOOTSTRAP_SEED)."""

CURVES = (
    "question_only",
    "answer_key_visible",
    "answer_key_masked",
    "wrong_key_visible",
    "wrong_key_masked",
)


def records(samples: Sequence[ScoredSample]) -> list[ts.TraceRecord]:
    """The records the run's metrics were computed from (the metrics' own builder)."""
    return ts.records_from_scores(list(samples))


def recompute(
    samples: Sequence[ScoredSample],
    metric_defs: Sequence[Any],
    definitions: Mapping[str, Any] | None = None,
) -> tuple[dict[str, float], list[tuple[dict[str, Any], dict[str, Any]]]]:
    """Every logged metric of the trace_tutor scorer, recomputed as the log defines it
    (``definitions``: the log's ``eval.metadata["definitions"]``); and each cluster metric's
    (options, contrast).

    A log whose definitions do not define ``first_pass_median`` logged the midpoint median
    (numpy's: the mean of the two middle values for even n); it is recomputed that way so the
    check compares like with like. The report's tables show the lower median."""
    recs = records(samples)
    defined = definitions if definitions is not None else {}
    first_pass_average = None if "first_pass_median" in defined else median
    out: dict[str, float] = {}
    contrasts = []
    for d in metric_defs:
        o = d.options
        boot = {k: o[k] for k in ("n_boot", "seed") if k in o}
        if d.name == "trace_table_ii":
            out.update(ts.table_ii(recs, first_pass_average=first_pass_average))
        elif d.name == "trace_table_iii":
            out.update(ts.table_iii(recs))
        elif d.name == "trace_table_iv":
            out.update(ts.table_iv(recs, **boot))
        elif d.name == "trace_delta_context":
            out.update(ts.delta_context_table(recs, **boot))
        elif d.name == "trace_zero_probe_drop":
            out.update(ts.zero_probe_drop_table(recs, **boot))
        elif d.name == "trace_table_v":
            out.update(ts.table_v(recs))
        elif d.name == "trace_anchoring":
            out.update(ts.wrong_key_anchoring(recs) | anchoring_non_monotone(recs))
        elif d.name == "trace_checkpoint_counts":
            out.update(ts.checkpoint_counts(recs))
        elif d.name == "contrastive_cluster_f1":
            contrast, metrics = contrast_and_metrics(samples, o)
            out.update(metrics)
            contrasts.append((o, contrast))
    return out, contrasts


def anchoring_non_monotone(recs: Sequence[ts.TraceRecord]) -> dict[str, float]:
    """``non_monotone/<curve>``, the key under which logs without ``trace_checkpoint_counts``
    carry the broad count ``pass_early_fail_100/<curve>`` (some f < 1 passes, 100% fails) in
    ``trace_anchoring``."""
    counts = ts.non_monotone_counts(recs)
    return {
        k.replace("pass_early_fail_100/", "non_monotone/", 1): v
        for k, v in counts.items()
        if k.startswith("pass_early_fail_100/")
    }


def curve_matrix(recs: Sequence[ts.TraceRecord], curve: str) -> np.ndarray:
    """Rows: the curve's records; columns: the 0% probe, then each fraction."""
    if curve == "question_only":
        cond, probe = "question_only", "visible"
    else:
        cond, probe = curve.rsplit("_", 1)
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


def auc_shifts(recs: Sequence[ts.TraceRecord], condition: str) -> tuple[list[float], list[float]]:
    """Per problem with both records: AUC(keyed, key visible) - AUC(question-only) and
    AUC(keyed, key masked) - AUC(question-only) (Table IV's paired differences, all pairs)."""
    qo = {r.pair_id: r for r in recs if r.condition == "question_only"}
    before, after = [], []
    for r in recs:
        if r.condition == condition and r.pair_id in qo:
            base = qo[r.pair_id].auc("visible")
            before.append(r.auc("visible") - base)
            after.append(r.auc("masked") - base)
    return before, after


PAIRED_COLUMNS = [
    "comparison",
    "n",
    "win %",
    "tie %",
    "loss %",
    "median diff [95% CI]",
    "mean diff [95% CI]",
]


def _paired_row(table: Table, label: Any, stats: dict[str, float], prefix: str) -> None:
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
        ci_cell(g["median_diff"], g["median_ci_low"], g["median_ci_high"]),
        ci_cell(g["mean_diff"], g["mean_ci_low"], g["mean_ci_high"]),
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
    """The parameters the run used: its task arguments, with the paper configuration's values
    in place where the run set ``paper=true`` (Inspect logs the arguments as given, so there a
    knob the paper fixes shows its default; the log's ``paper_configuration`` holds the
    values used and the overrides kept)."""
    used = dict(run.task_args)
    record = run.task_metadata.get("paper_configuration")
    if record:
        for name, setting in record.get("settings", {}).items():
            used[name] = setting["value"]
        used.update(record.get("overrides") or {})
    return used


def _conditions(recs: Sequence[ts.TraceRecord]) -> list[str]:
    present = {r.condition for r in recs}
    return [c for c in ts.CONDITIONS if c in present]


def _curves_present(recs: Sequence[ts.TraceRecord]) -> list[str]:
    present = _conditions(recs)
    return [c for c in CURVES if (c if c == "question_only" else c.rsplit("_", 1)[0]) in present]


def section(run: RunData, out_dir: Path, stem: str) -> Section:
    """The trace_tutor section of one run; figures written to ``out_dir/stem-*.png``."""
    sec = Section(f"trace_tutor · {run.label or run.model}", run=run)
    scorer = run.scorer(SCORER)
    if scorer is None or not scorer.samples:
        sec.text(f"_No `{SCORER}` scores in this log (status {run.status}); nothing to report._")
        return sec
    recs = records(scorer.samples)
    sec.recomputed, contrasts = recompute(
        scorer.samples, scorer.metric_defs, run.task_metadata.get("definitions")
    )
    sec.consistency = check_metrics(sec.recomputed, scorer.metrics)
    boot_opts = next((d.options for d in scorer.metric_defs if d.name == "trace_table_iv"), {})
    n_boot = int(boot_opts.get("n_boot", ts.BOOTSTRAP_SAMPLES))
    seed = int(boot_opts.get("seed", ts.BOOTSTRAP_SEED))

    fractions = ts.shared_fractions(recs)
    t2s = ts.table_ii(recs)
    t3s = ts.table_iii(recs)
    t4s = ts.table_iv(recs, n_boot=n_boot, seed=seed)
    dcs = ts.delta_context_table(recs, n_boot=n_boot, seed=seed)
    t5s = ts.table_v(recs)
    zps = ts.zero_probe_drop_table(recs, n_boot=n_boot, seed=seed)
    anchor = ts.wrong_key_anchoring(recs)
    counts = ts.checkpoint_counts(recs)
    curves = _curves_present(recs)
    conds = _conditions(recs)
    keyed = [c for c in ts.KEYED_CONDITIONS if c in conds]
    sec.data.update(
        records=recs,
        table_ii=t2s,
        table_iii=t3s,
        table_iv=t4s,
        delta_context=dcs,
        zero_probe_drop=zps,
        table_v=t5s,
        checkpoint_counts=counts,
        fractions=fractions,
        curves=curves,
        contrasts=contrasts,
    )

    headline = headline_text(run, {**scorer.metrics, **sec.recomputed}, f1_reasons(contrasts))
    if headline:
        sec.text(headline)
    if not recs:
        sec.text(no_data_text("no scored explanation has a TRACE curve"))
        return sec
    problems = len({r.pair_id for r in recs})
    settings = run_settings(run)
    if "problems" in settings:
        settings["problems"] = problems_setting(settings["problems"], problems, run.cut)
    sec.text(
        f"{problems} problems, {len(recs)} explanations ({', '.join(conds)}). Settings: "
        f"{', '.join(f'{k}={v}' for k, v in settings.items() if k in SETTINGS)}. "
        "p(f) = 1 when the answer forced after the first f of the explanation's tokens equals the "
        "gold answer; AUC is the trapezoid sum of p over the fractions (max "
        f"{fractions[-1] - fractions[0]:g}); *key masked* replays the keyed explanation's prefix "
        "under the question-only prompt."
    )
    t2 = Table(
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
        cond = c if c == "question_only" else c.rsplit("_", 1)[0]
        t2.add(
            c,
            count_cell(t2s[f"n/{cond}"]),
            t2s[f"accuracy/{cond}"],
            Cell(t2s[f"length_tokens_median/{cond}"], fmt(t2s[f"length_tokens_median/{cond}"], 1)),
            t2s[f"auc_median/{c}"],
            t2s[f"pass_at_10_mean/{c}"],
            t2s[f"first_pass_median/{c}"],
        )
    sec.table("table_ii", t2)
    labels = ["0", *(ts.percent_label(f) for f in fractions)]
    t3 = Table(
        "Table III. Mean pass rate at each checkpoint (% of the explanation)",
        ["curve", *(f"{p}%" for p in labels)],
    )
    for c in curves:
        t3.add(c, *(t3s[f"pass_rate/{c}/{p}"] for p in labels))
    sec.table("table_iii", t3)
    t4 = Table("Table IV. Answer-key vs question-only AUC, paired by problem", PAIRED_COLUMNS)
    for probe in ts.PROBES:
        for subset in ("all", "both_correct", "length_matched"):
            _paired_row(
                t4,
                f"key {probe}, {subset.replace('_', ' ')}",
                t4s,
                f"answer_key_vs_question_only/{probe}/{subset}",
            )
    t4.note = (
        f"Differences answer-key minus question-only; CIs: problem-level percentile "
        f"bootstrap ({n_boot} resamples, seed {seed}). Both correct: both explanations' last "
        "boxed integer equals the gold answer. Length-matched: token lengths differ by at most "
        f"{ts.LENGTH_TOLERANCE_PERCENT}% of the longer explanation's."
    )
    sec.table("table_iv", t4)
    dc = Table("Δcontext: key visible vs key masked AUC of the same explanation", PAIRED_COLUMNS)
    for cond in keyed:
        _paired_row(dc, cond, dcs, f"visible_vs_masked/{cond}")
    dc.note = "Mean difference = mean Δcontext = AUC(key visible) − AUC(key masked)."
    sec.table("delta_context", dc)
    zp = Table(
        "0%-probe drop: key visible vs key masked, before any explanation text", PAIRED_COLUMNS
    )
    for cond in keyed:
        _paired_row(zp, cond, zps, f"zero_probe_drop/{cond}")
    zp.note = (
        "Difference = p(0%, key visible) − p(0%, key masked) of the same explanation; mean "
        f"difference = mean drop. CIs: problem-level percentile bootstrap ({n_boot} resamples, "
        f"seed {seed})."
    )
    sec.table("zero_probe_drop", zp)
    bins = [ts.percent_label(f) for f in fractions] + ["none"]
    t5 = Table(
        "Table V. First-pass checkpoint histogram (counts)",
        ["curve", *(f"{b}%" if b != "none" else "none" for b in bins)],
    )
    for c in curves:
        t5.add(c, *(count_cell(t5s[f"first_pass_count/{c}/{b}"]) for b in bins))
    sec.table("table_v", t5)
    an = Table(
        "Wrong-key anchoring: incorrect wrong-key explanations and what they end with",
        ["incorrect", "the key (gold + 1)", "another wrong integer", "no parsed answer"],
    )
    key_count = anchor["wrong_key_anchoring/key"]
    an.add(
        count_cell(anchor["wrong_key_anchoring/incorrect"]),
        Cell(key_count, f"{fmt(key_count, 0)} ({fmt(anchor['wrong_key_anchoring/key_pct'], 1)}%)"),
        count_cell(anchor["wrong_key_anchoring/other_wrong"]),
        count_cell(anchor["wrong_key_anchoring/unparsed"]),
    )
    an.note = (
        "A response's final answer is the integer in its last \\boxed{} (no other number is "
        "read); no parsed answer: no box, or a box holding no single integer. Percent: of the "
        "incorrect wrong-key responses."
    )
    sec.table("anchoring", an)
    na = Table(
        "No parsed final answer (no boxed integer), per condition",
        ["condition", "responses", "no parsed answer"],
    )
    for cond in conds:
        na.add(cond, count_cell(t2s[f"n/{cond}"]), count_cell(anchor[f"no_answer/{cond}"]))
    sec.table("no_answer", na)
    p10 = Table(
        "Pass at 10%: keyed explanations that pass with the key visible but not masked, and the "
        "reverse",
        ["condition", "visible, not masked", "masked, not visible"],
    )
    for cond in keyed:
        p10.add(
            cond,
            count_cell(counts[f"pass_at_10_visible_not_masked/{cond}"]),
            count_cell(counts[f"pass_at_10_masked_not_visible/{cond}"]),
        )
    sec.table("pass_at_10_discordance", p10)
    same = Table(
        "Identical pass vectors: key-masked replay vs the question-only explanation of the same "
        "problem",
        ["comparison", "identical", "problems with both"],
    )
    for cond in keyed:
        name = f"identical_pass_vectors/{cond}_masked_vs_question_only"
        same.add(
            f"{cond} masked vs question_only",
            count_cell(counts[f"{name}/count"]),
            count_cell(counts[f"{name}/n_pairs"]),
        )
    same.note = f"Pass/fail at each of the {len(fractions)} fractions (0% probe not included)."
    sec.table("identical_pass_vectors", same)
    nm = Table(
        "All-pass and non-monotone curves (counts)",
        ["curve", "all pass", "pass 10%, fail 100%", "pass before 100%, fail 100%"],
    )
    for c in curves:
        nm.add(
            c,
            count_cell(counts[f"all_pass_count/{c}"]),
            count_cell(counts[f"pass_10_fail_100/{c}"]),
            count_cell(counts[f"pass_early_fail_100/{c}"]),
        )
    nm.note = (
        "All pass: p(f) ≥ 0.5 at every fraction. Pass 10%, fail 100%: the study's non-monotone. "
        "Pass before 100%, fail 100%: any fraction below 100% passes (logs without the "
        "checkpoint counts call this `non_monotone/<curve>`)."
    )
    sec.table("non_monotone", nm)
    add_published_tables(sec, run, t2s | t3s | t4s | dcs | zps | anchor)

    x = [0.0, *(100 * f for f in fractions)]
    panels = []
    qo = curve_matrix(recs, "question_only")
    for cond in keyed:
        bands = []
        for curve, label in (
            ("question_only", "question-only"),
            (f"{cond}_visible", "key visible"),
            (f"{cond}_masked", "key masked"),
        ):
            m = qo if curve == "question_only" else curve_matrix(recs, curve)
            if m.size:
                bands.append(figures.Band(label, *mean_band(m)))
        panels.append((cond.replace("_", "-"), x, bands))
    sec.figure(
        "figure_1",
        figures.pass_curves(
            panels,
            out_dir / f"{stem}-fig1.png",
            f"Figure 1. Mean pass curves ({run.label or run.model})",
            caption=(
                "Figure 1. Mean pass rate at each checkpoint for question-only, key visible and "
                "key masked; bands: 95% percentile bootstrap over explanations "
                f"({BAND_RESAMPLES} resamples, seed {ts.BOOTSTRAP_SEED})."
            ),
        ),
    )
    shifts = [(cond.replace("_", "-"), *auc_shifts(recs, cond)) for cond in keyed]
    sec.data["shifts"] = {cond: (b, a) for cond, (_, b, a) in zip(keyed, shifts)}
    sec.figure(
        "figure_2",
        figures.paired_shift(
            [s for s in shifts if s[1]],
            out_dir / f"{stem}-fig2.png",
            f"Figure 2. Paired AUC differences before and after masking ({run.label or run.model})",
            caption=(
                "Figure 2. Each problem's AUC(keyed) − AUC(question-only) with the key visible "
                "(before masking) and masked (after), joined by a line; bars: medians."
            ),
        ),
    )
    for options, contrast in contrasts:
        probe = options.get("prefix", "cluster").removeprefix("cluster_")
        add_cluster_tables(sec, options, contrast, title=f"Cluster (key {probe})")
    return sec


# --- the study's published numbers beside the run's -------------------------------------------

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
    (
        "published_text",
        "Δcontext, 0%-probe drop and wrong-key anchoring (the study's text)",
        ("visible_vs_masked/", "zero_probe_drop/", "wrong_key_anchoring/"),
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
    ("key masked, all", "win %")."""
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
    return parts[1], QUANTITIES[parts[0]]


COUNT_PARTS = ("n", "incorrect", "key", "other_wrong", "unparsed")
"""Metric-name parts of the published numbers that are counts (printed as integers)."""


def _is_count(name: str) -> bool:
    parts = name.split("/")
    return parts[0] == "n" or parts[-1] in COUNT_PARTS


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
    condition, probe = (
        ("question_only", "visible") if curve == "question_only" else curve.rsplit("_", 1)
    )
    return [
        (r.pair_id, ts.trace_auc(r.passes(probe), fractions))  # type: ignore[arg-type]
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


def compare(sections: Sequence[Section], out_dir: Path, stem: str) -> Section | None:
    """One column per run: accuracy; median AUC per curve and the means of
    :data:`RUN_DIFFERENCES` (Δcontext, Δprefix, the key-visible difference) and the cluster F1s,
    each with its problem-level interval and a Δ row (paired difference against the first run
    over the shared problems); figure: mean pass curves, one line per run."""
    secs = [s for s in sections if "table_ii" in s.data]
    if len(secs) < 2:
        return None
    comp = Section("trace_tutor · comparison of runs")
    labels = [s.run.label for s in secs]
    t = Table(
        "Comparison: trace_tutor, one column per run",
        ["", *labels],
        align=["---", *["---:"] * len(labels)],
    )
    t.add("problems", *(len({r.pair_id for r in s.data["records"]}) for s in secs))
    for cond in ts.CONDITIONS:
        t.add(f"accuracy {cond}", *(s.data["table_ii"][f"accuracy/{cond}"] for s in secs))
    for c in CURVES:
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
            compare_ci.cluster_rows(s.run.scorer(SCORER).samples, o, "pair_id")
            for s, o in zip(secs, options)
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
        for s in secs:
            labels_ = ["0", *(ts.percent_label(f) for f in s.data["fractions"])]
            series.append(
                (s.run.label, [s.data["table_iii"][f"pass_rate/{c}/{p}"] for p in labels_])
            )
        x = [0.0, *(100 * f for f in secs[0].data["fractions"])]
        if all(len(y) == len(x) for _, y in series):
            panels.append((c, x, series))
    comp.figure(
        "comparison_figure",
        figures.line_panels(
            panels,
            out_dir / f"{stem}.png",
            "trace_tutor: mean pass curves per run",
            "prefix of the explanation (%)",
            "mean pass rate",
            caption="Comparison. Mean pass rate per checkpoint (Table III), one line per run.",
        ),
    )
    return comp
