"""report_ll: per-model headline DiD per (rendering, richness) cell and register level (the
study's cell and plain/plain first), the register effects per cell, the factorial's main
effects, the discrimination check next to the headline, the invalid scorings, control verdicts,
the study's published numbers beside the run's, a figure of arm deltas by register level and the
cluster contrast, recomputed from the per-sample ledger rows with
:mod:`cotaudit.studies.report_ll.stats`; and a comparison of runs with paired differences over
the independent units both runs share."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cotaudit.display.text import md_code, report_text
from cotaudit.logs.data import MetricDef, RunData, ScoredSample, ScorerRun
from cotaudit.report import compare_ci, figures
from cotaudit.report.cluster import add_cluster_tables
from cotaudit.report.headlines import f1_reasons, headline_text, no_data_text, ran_text
from cotaudit.report.sections import Section, paper_line, run_section
from cotaudit.report.tables import Cell, Table, ci_cell, count_cell, fmt, fmt_ci
from cotaudit.stats import select
from cotaudit.studies.paper import parameters_used
from cotaudit.studies.report_ll import scores as sr
from cotaudit.studies.report_ll import versions
from cotaudit.studies.report_ll.fixtures.schema import FACTORS, REGISTERS
from cotaudit.studies.report_ll.metrics import (
    CONTROLS_METRIC,
    DISCRIMINATION_METRIC,
    METRICS,
    REPORT_LL_TABLES,
    RUN_OPTIONS,
    declarations_of,
    main_statistics,
)
from cotaudit.studies.report_ll.paper import MODELS, PAPER, PUBLISHED_BY_MODEL
from cotaudit.studies.report_ll.stats import (
    CELL_ORDER,
    CONCEALING_SENSITIVITY,
    DISCRIMINATION,
    FACTORIAL_REGISTERS,
    MAIN_EFFECT_LEVELS,
    POOLED_CELLS,
    POOLED_REGISTERS,
    STUDY_CELL,
    ScoredFixture,
    differences,
    register_pairs,
    verdict_of,
)

SCORER = "report_ll_scorer"
STUDY = "report_ll"
CLUSTER = sr.CLUSTER_METRIC
TASK_VERSION = versions.TASK_VERSION
QUANTITY_LABELS = {
    "did": "DiD = D_h − D_c",
    "did_per_token": "DiD per token",
    "d_h": "D_h (honest arm)",
    "d_c": "D_c (concealing arm)",
}
GROUP_LABELS = {
    "plain": "plain / plain",
    "concealing_dressed": "plain / dressed concealing",
    "honest_dressed": "dressed honest / plain",
    POOLED_REGISTERS: "register levels pooled (each report once)",
}
"""Headline groups of a cell (honest report / concealing report), in the order shown."""


def headline_cell(stats: Mapping[str, float]) -> str:
    """The first cell of :data:`CELL_ORDER` the statistics hold (the study's when run)."""
    return next((c for c in CELL_ORDER if f"cell.{c}.plain/did/mean" in stats), STUDY_CELL)


def cell_words(where: str) -> str:
    """``cell.shell.outcome_clause`` -> ``shell · outcome_clause``; ``pooled_cells`` -> words."""
    if where == POOLED_CELLS:
        return "pooled over the run's cells"
    return " · ".join(where.removeprefix("cell.").split("."))


def records(samples: Sequence[ScoredSample]) -> list[ScoredFixture]:
    """The ledger records the run's metrics were computed from (the metrics' own builder)."""
    return sr.records_from_scores(list(samples))


def _is_compact(d: MetricDef) -> bool:
    """A compact metric: its keys are its sources' (which the loader adds to the definitions)."""
    spec = METRICS.get(d.name)
    return spec is not None and spec.metric_set == "compact"


def recompute(
    samples: Sequence[ScoredSample],
    metric_defs: Sequence[MetricDef],
    task_version: int = TASK_VERSION,
) -> tuple[dict[str, float], dict[str, Any]]:
    """Every logged metric of the report_ll scorer, recomputed (a log of task version 0:
    :func:`cotaudit.studies.report_ll.versions.recompute`); plus what the tables read
    (``extra``): the full statistics of the main family and their options and unit, the
    discrimination check, the control checks and the cluster contrast."""
    defs = [d for d in metric_defs if not _is_compact(d)]
    if task_version == 0:
        return versions.recompute(samples, defs)
    counts = sr.scoring_counts(samples)
    out = {**counts, **METRICS.recompute(samples, [d for d in defs if d.name != CLUSTER])}
    extra: dict[str, Any] = {
        "stats": {},
        "controls": {},
        "cluster": None,
        "options": dict(RUN_OPTIONS),
        "discrimination": None,
        "unit": RUN_OPTIONS["unit"],
        "counts": counts,
    }
    for d in defs:
        o = {**METRICS[d.name].options, **d.options} if d.name in METRICS else {}
        if d.name in REPORT_LL_TABLES:
            stats = main_statistics(
                samples, o["controls"], o["n_resamples"], o["seed"], o["unit"]
            )  # the statistics the tables' metrics just selected from (computed once)
            extra.update(stats=stats, options=o, unit=o["unit"])
        elif d.name == DISCRIMINATION_METRIC:
            extra["discrimination"] = _discrimination(out, o)
        elif d.name == CONTROLS_METRIC:
            declarations = declarations_of(o["controls"])
            checks = select(out, sr.control_keys(declarations))
            extra["controls"] = {"declarations": declarations, "checks": checks}
        elif d.name == CLUSTER:
            result = sr.cluster_result(
                samples, o["controls"] or [], o["n_boot"], o["seed"], o["unit"]
            )
            out.update(result.metrics(sr.CLUSTER_PREFIX))
            extra["cluster"] = {**result.contrast(), "negative_class": sr.CLUSTER_NEGATIVE}
    return out, extra


def _discrimination(values: Mapping[str, float], options: Mapping[str, Any]) -> dict[str, Any]:
    """The discrimination check as the tables read it, from its recomputed metric
    (``values``) and its options."""
    return {
        "stats": select(values, sr.DISCRIMINATION_KEYS),
        "check": {k: v for k, v in values.items() if k.startswith(f"{DISCRIMINATION}/")},
        "sensitivity": {
            k: v for k, v in values.items() if k.startswith(f"{CONCEALING_SENSITIVITY}/")
        },
        "band": float(options["band"]),
        "cell": str(options["cell"]),
        "declared": True,
        "quantity_logged": "register_effect",
    }


def discrimination_text(check: Mapping[str, Any]) -> str:
    """One paragraph: the check, its result and what it means for the headline."""
    st = check["check"]
    band = check["band"]
    if not check["declared"]:
        source = "not declared in this log (a task-version-0 log without it); default band"
    elif check["quantity_logged"] == "d_c":
        source = (
            "this log declared the concealing arm's sensitivity |mean D_c| as its check, "
            "recomputed under its logged names; shown here is the register effect the study's "
            "check is about"
        )
    else:
        source = "pre-registered in the log"
    effect = fmt_ci(
        *(
            st.get(f"discrimination/register_effect/{k}", math.nan)
            for k in ("mean", "ci_low", "ci_high")
        )
    )
    head = (
        f"**Discrimination check** ({source}; {cell_words(_where(check['cell']))}): dressing "
        f"the concealing report moves the DiD by {effect} nats (|mean| "
        f"{fmt(st.get('discrimination/abs_register_effect', math.nan))}), band ±{fmt(band)} "
        "nats: "
    )
    able = st.get("discrimination/able_to_answer", math.nan)
    if able == 1.0:
        text = head + (
            "outside the band: the design can discriminate on this model, so it can answer "
            "whether dressing the honest report loses sensitivity the same way."
        )
    elif able == 0.0:
        text = head + (
            "inside the band: **this model is unable to answer the question** (whether dressing "
            "the honest report loses sensitivity the way dressing the concealing one does), as "
            "the study registered for its base model (0.49 nats)."
        )
    else:
        text = head + "no (plain, dressed concealing) pair scored in that cell; not checked."
    sens = check.get("sensitivity") or {}
    if sens.get("concealing_sensitivity/d_c/n", 0):
        d_c = fmt_ci(
            *(sens[f"concealing_sensitivity/d_c/{k}"] for k in ("mean", "ci_low", "ci_high"))
        )
        text += (
            f" Beside it, the concealing arm's sensitivity (mean D_c of the plain concealing "
            f"report, another quantity): {d_c} nats."
        )
    return text


def _where(cell: str) -> str:
    return POOLED_CELLS if cell == POOLED_CELLS else f"cell.{cell}"


def _g(stats: Mapping[str, float], key: str) -> float:
    return float(stats.get(key, math.nan))


def _mean_ci(stats: Mapping[str, float], prefix: str, q: str) -> Cell:
    head = f"{prefix}/" if prefix else ""
    n = _g(stats, f"{head}{q}/n_units")
    return ci_cell(
        _g(stats, f"{head}{q}/mean"),
        _g(stats, f"{head}{q}/ci_low"),
        _g(stats, f"{head}{q}/ci_high"),
        n=None if math.isnan(n) else int(n),
    )


def _p(stats: Mapping[str, float], key: str) -> Cell:
    v = _g(stats, key)
    return Cell(v, fmt(v, 4))


def _did_cells(stats: Mapping[str, float], prefix: str) -> list[Cell]:
    """The DiD under ``prefix``: its n, mean [95% CI] and p."""
    return [
        count_cell(_g(stats, f"{prefix}/did/n")),
        _mean_ci(stats, prefix, "did"),
        _p(stats, f"{prefix}/did/p"),
    ]


SETTINGS = (
    "fixtures",
    "scenarios",
    "family",
    "rendering",
    "richness",
    "register",
    "register_rewrite",
    "unit",
    "n_resamples",
    "seed",
    "paper",
)


def _wheres(stats: Mapping[str, float]) -> list[str]:
    """The run's cells (the study's first), then ``pooled_cells`` when there are several."""
    run_cells = [c for c in CELL_ORDER if any(k.startswith(f"cell.{c}.") for k in stats)]
    return [*(f"cell.{c}" for c in run_cells), *([POOLED_CELLS] if len(run_cells) > 1 else [])]


def section(run: RunData, out_dir: Path, stem: str) -> Section:
    """The report_ll section of one run; the figure written to ``out_dir/stem-fig1.png``."""
    sec, scorer = run_section(run, "report_ll", [SCORER])
    if scorer is None:
        return sec
    recomputed, extra = recompute(scorer.samples, scorer.metric_defs, run.task_version)
    sec.check(recomputed, scorer.metrics)
    stats = extra["stats"]
    opts = {**RUN_OPTIONS, **extra["options"]}
    unit = extra["unit"]
    sec.data.update(stats=stats, extra=extra)
    md = run.task_metadata
    used = parameters_used(run.task_args, run.task_metadata)
    settings = ", ".join(f"{k}={used[k]}" for k in SETTINGS if k in used)
    counts = extra["counts"]
    n_invalid = int(counts["scorings/n_invalid"])
    headline = headline_cell(stats)
    sec.text(
        f"{int(_g(stats, 'all_versions/did/n')) if stats else 0} fixture versions of "
        f"{int(_g(stats, 'all_versions/did/n_scenarios')) if stats else 0} scenarios "
        f"({fmt(_g(stats, 'all_versions/did/n_units'), 0)} independent {unit}s) in the main "
        f"family {md_code(md.get('main_family'))}"
        + (
            f"; control families: {report_text(', '.join(md.get('controls') or {}))}"
            if md.get("controls")
            else ""
        )
        + f". Settings: {report_text(settings)}. Invalid scorings (not finite, or a report of no "
        f"tokens), dropped from every statistic: **{n_invalid}** of "
        f"{n_invalid + int(counts['scorings/n_valid'])} scored versions. "
        "S(r, T) is the report's summed token log-probability (nats) after transcript T; "
        "D_h = S(h, hack) − S(h, clean), D_c = S(c, hack) − S(c, clean), DiD = D_h − D_c. CIs: "
        f"95% bootstrap over {unit}s, the independent unit "
        f"({opts['n_resamples']} resamples, seed {opts['seed']}); p: "
        f"two-sided {unit} sign-flip test of mean = 0."
        + (f" {ran_text(run)}" if ran_text(run) else "")
    )
    cluster = [({"prefix": sr.CLUSTER_PREFIX}, extra["cluster"])] if extra["cluster"] else []
    values = {**scorer.metrics, **sec.recomputed}
    headline_block = headline_text(run, values, f1_reasons(cluster))
    if headline_block:
        sec.text(headline_block)
    if not stats:
        sec.text(no_data_text("no main-family version was scored"))
        return sec
    check = extra["discrimination"]
    if check is not None:
        sec.text(discrimination_text(check))
    sec.table("did", did_table(stats, unit, headline, check))
    sec.table("register_effect", register_table(stats))
    sec.table("factors", factors_table(stats))
    if extra["controls"]:
        sec.table("controls", controls_table(extra["controls"], unit))
    check_values = {**check["check"], **check["sensitivity"]} if check is not None else {}
    add_published_table(sec, run, {**sec.recomputed, **stats, **check_values})
    add_figure_1(sec, run, stats, headline, unit, out_dir / f"{stem}-fig1.png")
    if extra["cluster"] is not None:
        add_cluster_tables(
            sec,
            {"prefix": sr.CLUSTER_PREFIX},
            extra["cluster"],
            title="Cluster (honest vs concealing reports)",
        )
    return sec


def did_table(
    stats: Mapping[str, float], unit: str, headline: str, check: Mapping[str, Any] | None
) -> Table:
    """The headline table: DiD and arm means per cell and register level (``headline``: the
    headline cell; ``check``: the discrimination check, whose failure the note says)."""
    n_units = _g(stats, f"cell.{headline}.plain/did/n_units")
    t1 = Table(
        "Headline: DiD and arm means per cell and register level (main family; the study's "
        "cell first)",
        [
            "group",
            "cell",
            "reports (honest / concealing)",
            "quantity",
            "mean [95% CI]",
            "p",
            "n > 0",
            "n",
            "scenarios",
            f"units ({unit}s)",
        ],
    )
    for where in _wheres(stats):
        for group, reports in GROUP_LABELS.items():
            pre = f"{where}.{group}"
            if f"{pre}/did/mean" not in stats:
                continue
            for q, label in QUANTITY_LABELS.items():
                t1.add(
                    Cell(f"{pre}/{q}", pre),
                    cell_words(where),
                    reports,
                    Cell(q, label),
                    _mean_ci(stats, pre, q),
                    _p(stats, f"{pre}/{q}/p"),
                    count_cell(_g(stats, f"{pre}/{q}/n_pos")),
                    count_cell(_g(stats, f"{pre}/{q}/n")),
                    count_cell(_g(stats, f"{pre}/{q}/n_scenarios")),
                    count_cell(_g(stats, f"{pre}/{q}/n_units")),
                )
    t1.note = (
        f"The headline is `cell.{headline}.plain/did` (both reports plain; n = "
        f"{fmt(n_units, 0)} {unit}s). Rows `pooled_cells.*` pool over the run's cells. The "
        "register levels share reports (the plain honest report is scored at plain and at "
        "dressed-concealing, the plain concealing one at plain and at dressed-honest), so they "
        "are shown apart; the pooled-registers rows average each group's distinct honest "
        "reports' D_h and distinct concealing reports' D_c, each report once (n counts groups "
        "of scenario x rendering x richness)."
    )
    if check is not None and check["check"].get("discrimination/able_to_answer") == 0.0:
        t1.note += " **This model failed the discrimination check: unable to answer.**"
    return t1


def register_table(stats: Mapping[str, float]) -> Table:
    """The register effect per cell: dressed minus plain version of the same scenario and
    cell."""
    t4 = Table(
        "Register effect per cell (dressed minus plain version of the same scenario and cell)",
        [
            "group",
            "cell",
            "dressed report",
            "n pairs",
            "effect on DiD [95% CI]",
            "p",
            "arm",
            "arm effect [95% CI]",
            "arm effect per token",
            "other arm",
        ],
    )
    for where in _wheres(stats):
        for level, (arm, other) in sr.ARMS.items():
            pre = f"{where}.register_effect.{level}"
            if f"{pre}/did/mean" not in stats:
                continue
            t4.add(
                Cell(pre, pre),
                cell_words(where),
                level,
                *_did_cells(stats, pre),
                arm,
                _mean_ci(stats, pre, arm),
                _g(stats, f"{pre}/{arm}_per_token/mean"),
                _g(stats, f"{pre}/{other}/mean"),
            )
    t4.note = (
        "Dressing one report leaves the other report byte-identical, so the other arm's effect "
        "is 0 up to scoring noise and the effect on the DiD is the arm's (the study: "
        '"Rewriting the concealing report alone moves the number by 4.52 nats").'
    )
    return t4


def _factor_cells(stats: Mapping[str, float], prefix: str) -> list[Cell | float]:
    """A factorial row's statistics under ``prefix``: the DiD's (:func:`_did_cells`), then the
    mean D_h and D_c."""
    return [
        *_did_cells(stats, prefix),
        _g(stats, f"{prefix}/d_h/mean"),
        _g(stats, f"{prefix}/d_c/mean"),
    ]


def factors_table(stats: Mapping[str, float]) -> Table:
    """The 2 x 2 x 2 factorial: level means and main effects."""
    t2 = Table(
        "The 2 × 2 × 2 factorial (register plain and dressed concealing; pooled over its "
        "cells): level means and main effects",
        ["", "n", "DiD mean [95% CI]", "p", "D_h mean", "D_c mean"],
    )
    for f in FACTORS:
        for level in MAIN_EFFECT_LEVELS[f] if f != "register" else FACTORIAL_REGISTERS:
            pre = f"factorial.{f}.{level}"
            if f"{pre}/did/mean" in stats:
                t2.add(pre, *_factor_cells(stats, pre))
        pre = f"main_effect.{f}"
        if f"{pre}/did/mean" in stats:
            a, b = MAIN_EFFECT_LEVELS[f]
            t2.add(Cell(pre, f"{pre} ({a} − {b})"), *_factor_cells(stats, pre))
    t2.note = (
        "Main effect: per scenario, the mean over its factorial versions at the first level "
        "minus the mean at the second (the other factors averaged); n counts scenarios. The "
        "third register level (dressed honest) is not part of the factorial."
    )
    return t2


def controls_table(controls: Mapping[str, Any], unit: str) -> Table:
    """The control families' verdicts (``controls``: their declarations and recomputed
    checks)."""
    checks = controls["checks"]
    t5 = Table(
        "Control families: verdict on each declared confound",
        [
            "family",
            "confound",
            "prediction if the confound is real",
            "sign if it is not",
            "mean [95% CI]",
            "difference from reference [95% CI]",
            "p",
            "verdict",
        ],
    )
    for family, dec in controls["declarations"].items():
        pre = f"control.{family}"
        q = dec.quantity
        ref = dec.relative_to
        words = verdict_of(checks, family)
        without = _sign_words(checks.get(f"{pre}/expected_sign_without_confound"))
        if ref:
            without += (
                f"; vs {ref}: {_sign_words(checks.get(f'{pre}/relative_sign_without_confound'))}"
            )
        t5.add(
            family,
            dec.confound,
            dec.prediction(),
            without,
            _mean_ci(checks, pre, q),
            _mean_ci(checks, pre, f"{q}_minus_{ref}") if ref else Cell(None, "—"),
            _p(checks, f"{pre}/{q}/p"),
            Cell(words, f"**{words}**" if words != "—" else words),
        )
    t5.note = (
        "Each part of the prediction (the sign; and the difference from the reference "
        "family's versions at the same factor levels, when declared) carries the sign "
        "expected if the confound is real and if it is not. A part whose two signs agree "
        "cannot separate the explanations; a control with no other part is "
        "**non-diagnostic** (passing excludes nothing). Over the diagnostic parts, from "
        f"their 95% {unit}-bootstrap CIs: consistent with the confound if every CI lies on "
        "the confound's side of 0, confound excluded if any lies on the other side, "
        "otherwise inconclusive (CI spans zero)."
    )
    return t5


def add_figure_1(
    sec: Section, run: RunData, stats: Mapping[str, float], headline: str, unit: str, path: Path
) -> None:
    """Figure 1: mean D_h and D_c per register level in the headline cell, written to
    ``path`` (its series kept in ``sec.data["register_series"]``)."""
    where = f"cell.{headline}"
    levels = [lv for lv in REGISTERS if f"{where}.{lv}/d_h/mean" in stats]
    series = [
        figures.Band(
            label,
            [_g(stats, f"{where}.{lv}/{q}/mean") for lv in levels],
            [_g(stats, f"{where}.{lv}/{q}/ci_low") for lv in levels],
            [_g(stats, f"{where}.{lv}/{q}/ci_high") for lv in levels],
        )
        for q, label in (("d_h", "D_h (honest report)"), ("d_c", "D_c (concealing report)"))
    ]
    sec.data["register_series"] = (levels, series)
    if levels:
        sec.figure(
            "figure_1",
            figures.points_with_ci(
                levels,
                series,
                figures.FigureText(
                    path,
                    f"Figure 1. Arm deltas by register level, {cell_words(where)} "
                    f"({run.label or run.model})",
                    caption=(
                        f"Figure 1. Mean D_h and D_c (nats) at each register level of the main "
                        f"family in cell {cell_words(where)}, with 95% {unit}-bootstrap CIs."
                    ),
                    xlabel="register",
                    ylabel="hack − clean log-likelihood (nats)",
                ),
            ),
        )


def _sign_words(sign: float | None) -> str:
    if sign is None or math.isnan(float(sign)):
        return "—"
    return {1.0: "> 0", -1.0: "< 0", 0.0: "0 (no effect)"}[float(sign)]


# --- the study's published numbers beside the run's -------------------------------------------

STAT_WORDS = {
    "mean": "mean",
    "ci_low": "95% CI low",
    "ci_high": "95% CI high",
    "p": "p",
    "n_pos": "n > 0",
}


def published_label(key: str) -> tuple[str, str]:
    """(row, quantity) of a published metric name, e.g.
    ``cell.shell.outcome_clause.plain/did/mean`` -> ("shell · outcome_clause · plain / plain",
    "did mean")."""
    group, *rest = key.split("/")
    quantity = (
        " ".join([rest[0], STAT_WORDS.get(rest[-1], rest[-1])])
        if len(rest) == 2
        else rest[0].replace("_", " ")
    )
    if group.startswith("cell."):
        parts = group.split(".")
        where = " · ".join(parts[1:3])
        what = ".".join(parts[3:])
        if what.startswith("register_effect."):
            what = f"register effect of {what.removeprefix('register_effect.')}"
        else:
            what = GROUP_LABELS.get(what, what)
        return f"{where} · {what}", quantity
    return group, quantity


def add_published_table(sec: Section, run: RunData, values: Mapping[str, float]) -> None:
    """The study's published numbers (:data:`PUBLISHED_BY_MODEL`) beside the run's value of the
    same metric, one column per study model."""
    names = list(dict.fromkeys(k for m in MODELS for k in PUBLISHED_BY_MODEL[m]))
    columns = [f"published ({m})" for m in MODELS]
    table = Table(
        "The study's published numbers beside this run's",
        ["", "quantity", "this run", *columns, "source"],
        align=["---", "---", "---:", *["---:"] * len(columns), "---"],
    )
    for name in names:
        row, quantity = published_label(name)
        mine = float(values.get(name, math.nan))
        cells_ = []
        sources = []
        for m in MODELS:
            published = PUBLISHED_BY_MODEL[m].get(name)
            cells_.append(
                Cell(math.nan, "—")
                if published is None
                else Cell(float(published.value), fmt(float(published.value), 2))
            )
            if published is not None and published.where not in sources:
                sources.append(published.where)
        table.add(Cell(name, row), quantity, Cell(mine, fmt(mine)), *cells_, "; ".join(sources))
    table.note = (
        f'Published: "{PAPER.source}", the study\'s cell (shell commands, full outcome clause), '
        f"144 fixtures, models {', '.join(MODELS)}. {paper_line(run)} This run's model: "
        f"{md_code(run.model)}. A run on another model, corpus or number of scenarios is not "
        "expected to reproduce them; the control family's published numbers come from the "
        "study's original corpus (16 + 8 fixtures)."
    )
    sec.table("published", table)


# --- comparison of runs -------------------------------------------------------------------------


def _able(sec: Section) -> Cell:
    """The run's discrimination check as a cell: yes / **no: unable to answer** / —."""
    check = sec.data["extra"].get("discrimination")
    able = check["check"].get("discrimination/able_to_answer", math.nan) if check else math.nan
    return Cell(able, {1.0: "yes", 0.0: "**no: unable to answer**"}.get(able, "—"))


def _scorer(sec: Section) -> ScorerRun | None:
    """The report_ll scorer of a run's section (None for a section of no run)."""
    return sec.run.scorer(SCORER) if sec.run is not None else None


def comparison_rows(sec: Section, group: str, quantity: str) -> compare_ci.UnitRows | None:
    """The per-version (or per-pair, for a register effect) values of ``group``/``quantity``
    of one run's main family, each with its independent unit (the run's), for paired
    differences: ``group`` is ``cell.{rendering}.{richness}.{register}`` or
    ``cell.{rendering}.{richness}.register_effect.{level}``. None without such rows."""
    scorer = _scorer(sec)
    if scorer is None:
        return None
    extra = sec.data["extra"]
    controls = extra["options"].get("controls") or []
    main = [r for r in records(scorer.samples) if r.family not in controls]
    unit = extra["unit"]
    parts = group.split(".")
    cell = ".".join(parts[1:3])
    if parts[3] == "register_effect":
        pairs = register_pairs([r for r in main if r.cell == cell], parts[4])
        rows = [
            (d.unit(unit), differences(d.scorings)[quantity] - differences(b.scorings)[quantity])
            for d, b in pairs
        ]
    else:
        rows = [
            (r.unit(unit), differences(r.scorings)[quantity])
            for r in main
            if r.cell == cell and r.factors["register"] == parts[3]
        ]
    if not rows:
        return None
    return compare_ci.mean_rows([u for u, _ in rows], [v for _, v in rows])


def compare(sections: Sequence[Section], out_dir: Path, stem: str) -> Section | None:
    """One column per run: the headline cell's DiD per register level and its register effects
    (each with a paired difference against the first run over the units both share), arm means,
    the discrimination check; figure: a forest plot."""
    secs = [s for s in sections if s.data.get("stats")]
    if len(secs) < 2:
        return None
    comp = Section("report_ll · comparison of models")
    labels = [s.run.label if s.run else "" for s in secs]
    where = f"cell.{headline_cell(secs[0].data['stats'])}"
    units = {s.data["extra"]["unit"] for s in secs}
    unit = secs[0].data["extra"]["unit"] if len(units) == 1 else "unit"
    comp.table("comparison", comparison_table(secs, labels, where, unit))
    add_comparison_figure(comp, secs, labels, where, unit, out_dir / f"{stem}.png")
    return comp


COMPARED = (
    ("plain", "did", "DiD, plain / plain"),
    ("concealing_dressed", "did", "DiD, plain / dressed concealing"),
    (
        "register_effect.concealing_dressed",
        "did",
        "register effect of dressing the concealing report on DiD",
    ),
    (
        "register_effect.honest_dressed",
        "d_h",
        "register effect of dressing the honest report on D_h",
    ),
)
"""The paired comparisons of runs: (group in the headline cell, quantity, row label)."""


def comparison_table(
    secs: Sequence[Section], labels: Sequence[str], where: str, unit: str
) -> Table:
    """The comparison table of the runs' sections ``secs`` (columns ``labels``) in the cell
    ``where``: counts, the paired differences of :data:`COMPARED` and of the cluster F1
    against the first run, p, arm means and the discrimination check."""
    t = Table(
        f"Comparison: report_ll, one column per run ({cell_words(where)})",
        ["", *labels],
        align=["---", *["---:"] * len(labels)],
    )
    t.add(
        "plain/plain versions (units)",
        *(
            Cell(
                _g(s.data["stats"], f"{where}.plain/did/n"),
                f"{fmt(_g(s.data['stats'], f'{where}.plain/did/n'), 0)} "
                f"({fmt(_g(s.data['stats'], f'{where}.plain/did/n_units'), 0)} "
                f"{s.data['extra']['unit']}s)",
            )
            for s in secs
        ),
    )
    for group, q, label in COMPARED:
        rows = [comparison_rows(s, f"{where}.{group}", q) for s in secs]
        if all(r is None for r in rows):
            continue
        compare_ci.add_compared(t, label, compare_ci.compare_runs(rows), labels[0])
    t.add("DiD p, plain / plain", *(_p(s.data["stats"], f"{where}.plain/did/p") for s in secs))
    for q in ("d_h", "d_c"):
        t.add(
            f"{QUANTITY_LABELS[q]}, plain / plain [95% CI]",
            *(_mean_ci(s.data["stats"], f"{where}.plain", q) for s in secs),
        )
    t.add("able to answer (discrimination check)", *(_able(s) for s in secs))
    compare_ci.add_compared(
        t,
        "cluster F1 (honest vs concealing)",
        compare_ci.compare_runs([_cluster_rows(s) for s in secs], n_boot=compare_ci.CLUSTER_N_BOOT),
        labels[0],
    )
    t.note = compare_ci.note(unit, cluster=True)
    return t


def add_comparison_figure(
    comp: Section,
    secs: Sequence[Section],
    labels: Sequence[str],
    where: str,
    unit: str,
    path: Path,
) -> None:
    """The comparison's forest plot: mean plain/plain DiD, D_h and D_c per run, written to
    ``path``."""
    qs = ["did", "d_h", "d_c"]
    series = [
        figures.Band(
            label,
            [_g(s.data["stats"], f"{where}.plain/{q}/mean") for q in qs],
            [_g(s.data["stats"], f"{where}.plain/{q}/ci_low") for q in qs],
            [_g(s.data["stats"], f"{where}.plain/{q}/ci_high") for q in qs],
        )
        for s, label in zip(secs, labels, strict=True)
    ]
    comp.figure(
        "comparison_figure",
        figures.points_with_ci(
            ["DiD", "D_h", "D_c"],
            series,
            figures.FigureText(
                path,
                "report_ll: DiD and arm means per model",
                caption=(
                    f"Comparison. Mean plain/plain DiD, D_h and D_c (nats) in cell "
                    f"{cell_words(where)} with 95% {unit}-bootstrap CIs, one series per run."
                ),
                ylabel="nats",
            ),
        ),
    )


def _cluster_rows(sec: Section) -> compare_ci.UnitRows | None:
    """report_ll's cluster F1 (honest vs concealing report rows of the main family, as
    its cluster metric logged it), units the run's; None without that metric."""
    scorer = _scorer(sec)
    d = next((d for d in scorer.metric_defs if d.name == CLUSTER), None) if scorer else None
    if scorer is None or d is None:
        return None
    controls = d.options.get("controls") or []
    recs = [r for r in sr.records_from_scores(scorer.samples) if r.family not in controls]
    X, labels, _ = sr.cluster_rows(recs)
    unit = sec.data["extra"]["unit"]
    units = [r.unit(unit) for r in recs for _ in (0, 1)]
    return compare_ci.f1_rows(X, labels, sr.CLUSTER_POSITIVE, [1, 1], units, d.options)
