"""The report_ll task's versions, and how the report reads the logs of each.

The task's ``Task(version=...)`` is :data:`TASK_VERSION`; a log records it
(:attr:`cotaudit.logs.data.RunData.task_version`).

- **Version 2**: every metric is a spec of :data:`cotaudit.studies.report_ll.metrics.METRICS`
  and its logged options name every option (the report recomputes it with
  ``METRICS.recompute``).
- **Version 1**: the same, but the compact set logs the headline under the keys of its cell,
  ``cell.{cell}.plain/did/{mean, n_units, ci_low, ci_high, p}`` (today's
  ``did/{mean, n_units, ci_low, ci_high, p}``, the same values), which the report finds in its
  recomputation of the overall table.
- **Version 0** (logs written before the task carried a version) hold one of several layouts,
  told apart by their content, here and nowhere else (:func:`recompute`):

  - metrics naming no ``unit`` resampled scenarios: the headline per register level pooled over
    the cells ``register.{level}/...`` (today's ``pooled_cells.{level}``),
    ``pooled_registers/...``, ``register_effect.{level}/...``, factor levels over every version
    ``{rendering|richness}.{level}/...`` (:func:`unitless_layout`), and a discrimination check
    on the concealing arm's sensitivity ``discrimination/d_c/...``
    (:func:`unitless_discrimination`);
  - a cluster metric naming no ``unit`` resampled report rows (:func:`cluster_options`);
  - a ``report_ll_cells`` metric logged ``cell.{rendering}.{richness}.{register}/did/{mean,
    ci_low, ci_high}`` (:func:`cell_keys`);
  - the control verdict as one sign-match key ``control.{family}/pass``;
  - the overall keys over every version without a prefix, ``{q}/{stat}``
    (:func:`unprefixed_all_versions`);
  - no discrimination metric at all: the report checks with the default band, saying so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from cotaudit.scores import SampleScoreLike
from cotaudit.stats import select
from cotaudit.studies.report_ll import scores as sr
from cotaudit.studies.report_ll.fixtures.schema import FACTOR_LEVELS, REGISTERS
from cotaudit.studies.report_ll.stats import (
    ALL_VERSIONS,
    DEFAULT_DISCRIMINATION_BAND,
    MAIN_EFFECT_LEVELS,
    POOLED_CELLS,
    POOLED_REGISTERS,
    STUDY_CELL,
    Resampling,
    ScoredFixture,
    concealing_sensitivity,
    control_verdicts,
    discrimination_check,
    every_version_levels,
    run_statistics,
)

TASK_VERSION = 2
"""The report_ll task's version (``Task(version=...)``)."""
UNITLESS = "scenario"
"""The unit of a version-0 log whose metrics name none (they resampled scenarios)."""
CELLS_METRIC = "report_ll_cells"
"""A version-0 metric: the per-cell DiD keys (:func:`cell_keys`)."""


def cluster_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The options of a logged cluster metric, complete: a version-0 metric naming no ``unit``
    resampled report rows (``unit="row"``); a version-1 one names its unit."""
    return {**sr.CLUSTER_OPTIONS, "unit": "row", **options}


def _run(options: Mapping[str, Any], unit: str | None = None) -> Resampling:
    """The resampling of a logged metric's run options over :data:`RUN_OPTIONS` (``unit``: in
    place of the logged one)."""
    run = {k: options.get(k, v) for k, v in sr.RUN_OPTIONS.items()}
    return Resampling(unit or str(options.get("unit", UNITLESS)), run["n_resamples"], run["seed"])


def cell_keys() -> list[str]:
    """The per-cell DiD keys ``cell.{rendering}.{richness}.{register}/did/{mean,ci_low,
    ci_high}`` of a version-0 ``report_ll_cells`` metric."""
    return [
        f"cell.{a}.{b}.{c}/did/{k}"
        for a in FACTOR_LEVELS["rendering"]
        for b in FACTOR_LEVELS["richness"]
        for c in FACTOR_LEVELS["register"]
        for k in ("mean", "ci_low", "ci_high")
    ]


def unprefixed_all_versions(stats: Mapping[str, float]) -> dict[str, float]:
    """``{q}/{stat}`` (every version pooled, plain reports counted twice) from
    ``all_versions/{q}/{stat}``: the overall keys of version-0 logs without the per-register
    headline."""
    head = f"{ALL_VERSIONS}/"
    return {k[len(head) :]: v for k, v in stats.items() if k.startswith(head)}


def unitless_layout(
    main: Sequence[ScoredFixture], stats: Mapping[str, float], options: Mapping[str, Any]
) -> dict[str, float]:
    """The key layout of a log whose metrics name no unit (scenario intervals, a headline per
    register level pooled over the cells, factor levels over every version):
    ``register.{level}`` = ``pooled_cells.{level}``, ``pooled_registers`` =
    ``pooled_cells.pooled_registers``, ``register_effect.{level}`` =
    ``pooled_cells.register_effect.{level}`` and ``{rendering|richness}.{level}`` over every
    version (:func:`cotaudit.studies.report_ll.stats.every_version_levels`)."""
    renames = {f"{POOLED_CELLS}.{g}/": f"register.{g}/" for g in REGISTERS}
    renames[f"{POOLED_CELLS}.{POOLED_REGISTERS}/"] = f"{POOLED_REGISTERS}/"
    renames.update(
        {f"{POOLED_CELLS}.register_effect.{g}/": f"register_effect.{g}/" for g in REGISTERS}
    )
    out: dict[str, float] = {}
    for key, value in stats.items():
        for old, new in renames.items():
            if key.startswith(old):
                out[new + key[len(old) :]] = value
    for factor in ("rendering", "richness"):
        out.update(every_version_levels(main, factor, _run(options, UNITLESS)))
    return out


def unitless_discrimination(
    main: Sequence[ScoredFixture], options: Mapping[str, Any]
) -> dict[str, float]:
    """The discrimination check a log whose metrics name no unit declared: the concealing
    arm's sensitivity (|mean d_c| of the plain concealing report over every cell, scenario
    intervals) against the band, under the names ``discrimination/d_c/{stat}``,
    ``discrimination/abs_d_c``, ``discrimination/band``, ``discrimination/able_to_answer``."""
    band = float(options.get("band", DEFAULT_DISCRIMINATION_BAND))
    sens = concealing_sensitivity(main, cell=POOLED_CELLS, resampling=_run(options, UNITLESS))
    out = {k.replace("concealing_sensitivity/", "discrimination/"): v for k, v in sens.items()}
    abs_d_c = sens["concealing_sensitivity/abs_d_c"]
    out["discrimination/band"] = band
    out["discrimination/able_to_answer"] = (
        math.nan if math.isnan(abs_d_c) else float(abs_d_c > band)
    )
    return out


def _unitless_overall_keys() -> list[str]:
    groups = [*(f"register.{g}" for g in REGISTERS), POOLED_REGISTERS]
    stats = ("mean", "ci_low", "ci_high", "p", "n_pos")
    quantities = ("did", "d_h", "d_c", "did_per_token", "d_h_per_token", "d_c_per_token")
    return [
        f"{g}/{k}"
        for g in groups
        for k in (*(f"{q}/{s}" for q in quantities for s in stats), "did/n", "did/n_scenarios")
    ]


def _unitless_factor_keys() -> list[str]:
    keys = ("did/mean", "did/ci_low", "did/ci_high", "did/p", "did/n_pos", "d_h/mean", "d_c/mean")
    return [
        f"{f}.{level}/{k}"
        for f in ("rendering", "richness")
        for level in MAIN_EFFECT_LEVELS[f]
        for k in keys
    ]


def _unitless_register_keys() -> list[str]:
    keys = []
    for level, (arm, other) in sr.ARMS.items():
        keys += [
            f"register_effect.{level}/{k}"
            for k in (
                f"{arm}/mean",
                f"{arm}/ci_low",
                f"{arm}/ci_high",
                f"{arm}/p",
                f"{arm}_per_token/mean",
                f"{other}/mean",
                "did/mean",
            )
        ]
    return keys


_UNITLESS_KEYS = {
    sr.OVERALL_METRIC: _unitless_overall_keys,
    sr.FACTORS_METRIC: _unitless_factor_keys,
    sr.REGISTER_METRIC: _unitless_register_keys,
}


def _stats_keys(name: str, options: Mapping[str, Any]) -> list[str]:
    """The keys a version-0 statistics table logged."""
    if "unit" not in options and name in _UNITLESS_KEYS:
        return _UNITLESS_KEYS[name]()
    if name == sr.OVERALL_METRIC:
        return sr.overall_keys(options.get("cells"))
    if name == sr.REGISTER_METRIC:
        return sr.register_keys(options.get("cells"))
    return cell_keys() if name == CELLS_METRIC else sr.factor_keys()


def discrimination(
    main: Sequence[ScoredFixture], options: Mapping[str, Any], *, declared: bool
) -> dict[str, Any]:
    """The discrimination check of a version-0 log's main family with the metric's options:
    the register effect on the DiD in the metric's cell (a metric naming no unit: the
    concealing arm's sensitivity, which such logs checked, under its logged names)."""
    band = float(options.get("band", DEFAULT_DISCRIMINATION_BAND))
    if "unit" not in options:
        logged = unitless_discrimination(main, options)
        check = discrimination_check(
            main, band, cell=POOLED_CELLS, resampling=_run(options, UNITLESS)
        )
        return {
            "stats": logged,
            "check": check,
            "sensitivity": {},
            "band": band,
            "cell": POOLED_CELLS,
            "declared": declared,
            "quantity_logged": "d_c",
        }
    cell = str(options.get("cell", STUDY_CELL))
    run = _run(options)
    check = discrimination_check(main, band, cell=cell, resampling=run)
    sensitivity = concealing_sensitivity(main, cell=cell, resampling=run)
    return {
        "stats": select({**check, **sensitivity}, sr.DISCRIMINATION_KEYS),
        "check": check,
        "sensitivity": sensitivity,
        "band": band,
        "cell": cell,
        "declared": declared,
        "quantity_logged": "register_effect",
    }


def recompute(
    samples: Sequence[SampleScoreLike], metric_defs: Sequence[Any]
) -> tuple[dict[str, float], dict[str, Any]]:
    """Every logged metric of a version-0 log's report_ll scorer, under its logged names, and
    the report's tables' inputs (``extra``: as :func:`cotaudit.report.report_ll.recompute`
    gives them), the layout read from the metrics' names and options."""
    recs = sr.records_from_scores(samples)
    counts = sr.scoring_counts(samples)
    out: dict[str, float] = dict(counts)
    extra: dict[str, Any] = {
        "stats": {},
        "controls": {},
        "cluster": None,
        "options": {},
        "discrimination": None,
        "unit": UNITLESS,
        "counts": dict(counts),
    }
    cache: dict[tuple[Any, ...], dict[str, float]] = {}

    def stats_for(o: Mapping[str, Any]) -> dict[str, float]:
        controls = tuple(o.get("controls") or [])
        run = _run(o)
        key = (controls, run.unit, int(run.n_resamples), int(run.seed))
        if key not in cache:
            main = [r for r in recs if r.family not in controls]
            stats = run_statistics(main, run) if main else {}
            if "unit" not in o and stats:
                stats = {**stats, **unitless_layout(main, stats, o)}
            cache[key] = stats
        return cache[key]

    for d in metric_defs:
        o = d.options
        if d.name in (sr.OVERALL_METRIC, sr.FACTORS_METRIC, sr.REGISTER_METRIC, CELLS_METRIC):
            stats = stats_for(o)
            extra["stats"] = stats
            extra["options"] = dict(o)
            extra["unit"] = str(o.get("unit", UNITLESS))
            out.update(select({**stats, **counts}, _stats_keys(d.name, o)))
        elif d.name == sr.CLUSTER_METRIC:
            opts = cluster_options(o)
            result = sr.cluster_result(
                samples, opts["controls"] or [], opts["n_boot"], opts["seed"], opts["unit"]
            )
            out.update(result.metrics(sr.CLUSTER_PREFIX))
            extra["cluster"] = {**result.contrast(), "negative_class": sr.CLUSTER_NEGATIVE}
        elif d.name == sr.DISCRIMINATION_METRIC:
            main = [r for r in recs if r.family not in (o.get("controls") or [])]
            extra["discrimination"] = discrimination(main, o, declared=True)
            out.update(extra["discrimination"]["stats"])
        elif d.name == sr.CONTROLS_METRIC:
            declarations = sr.declarations_of(o.get("controls"))
            checks = select(
                control_verdicts(recs, declarations, _run(o)), sr.control_keys(declarations)
            )
            for family, dec in declarations.items():  # the sign-match key
                mean = checks[f"control.{family}/{dec.quantity}/mean"]
                checks[f"control.{family}/pass"] = (
                    math.nan if math.isnan(mean) else float(np.sign(mean) == dec.expected_sign)
                )
            out.update(checks)
            extra["controls"] = {"declarations": declarations, "checks": checks}
    if extra["stats"]:
        out.update(unprefixed_all_versions(extra["stats"]))
        if extra["discrimination"] is None:
            controls = extra["options"].get("controls") or []
            main = [r for r in recs if r.family not in controls]
            extra["discrimination"] = discrimination(main, extra["options"], declared=False)
    return out, extra
