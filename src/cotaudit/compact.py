"""The compact metric set of each study: the keys the terminal and the viewer show by default.

Every key here is a key of a study's full metric tables, with the same name and the same value
(the compact metrics select from the tables the full set computes); ``-T metrics=all`` logs the
full tables instead. Two rules:

- the headline keys of a study, and the cluster F1 with its n and interval, are always present
  (NaN when the run has nothing to compare, or the clustering is degenerate); each headline's
  keys come together in the order of :meth:`cotaudit.headline.HeadlineSpec.keys` (statistic,
  n, interval), so its n sits beside it in the viewer's title bar and the terminal summary;
- any other key whose value is NaN (an empty stratum, e.g. no both-correct problems or a
  condition not run) is left out, so the compact set shows no ``nan`` rows; the report says
  ``n = 0`` there instead.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from cotaudit.curves import tau_key
from cotaudit.headline import HeadlineSpec

METRIC_SETS = ("compact", "all")
"""Values of the tasks' ``-T metrics`` parameter."""

SELFCOMMIT_OTHER_SUMMARIES = ("range_c", "uncommitted", "lowcommit", "rho_back")
TRACE_HEADLINE_CONDITION = "answer_key"


def parse_metric_set(value: str) -> str:
    """The ``-T metrics`` value, checked: ``compact`` (default) or ``all``."""
    text = str(value).strip().lower()
    if text not in METRIC_SETS:
        raise ValueError(f"-T metrics: must be one of {', '.join(METRIC_SETS)}, got {value!r}")
    return text


def _is_nan(v: float) -> bool:
    return isinstance(v, float) and math.isnan(v)


def select(
    table: Mapping[str, float], keys: Iterable[str], keep_nan: Sequence[str] = ()
) -> dict[str, float]:
    """``{k: table[k]}`` in the order of ``keys``, leaving out NaN values and keys absent from
    ``table``, except for the keys in ``keep_nan``: those are always there (NaN if absent, e.g.
    on the empty score list the live display computes metrics on)."""
    out: dict[str, float] = {}
    for k in keys:
        if k in keep_nan:
            out[k] = float(table.get(k, math.nan))
        elif k in table and not _is_nan(float(table[k])):
            out[k] = float(table[k])
    return out


# --- selfcommit -----------------------------------------------------------------------------


def selfcommit_headline_spec(primary: str) -> HeadlineSpec:
    """AUROC (honest vs hinted) of the primary summary over the n_pairs problems with both
    conditions answered (no interval in the run metrics: the report's comparisons give one);
    problems left out for a response without a final answer counted beside it."""
    return HeadlineSpec(
        f"auroc/{primary}", "n_pairs", "problem", "problems", bounds=(0.0, 1.0),
        dropped="n_pairs_dropped_no_answer", dropped_why="a response without a final answer",
    )


def selfcommit_headline_keys(primary: str) -> list[str]:
    """AUROC (honest vs hinted) of the primary summary, n_pairs, then the paired wins and ties
    (counts of problems)."""
    return [*selfcommit_headline_spec(primary).keys(), f"wins/{primary}", f"ties/{primary}"]


def selfcommit_headline(table: Mapping[str, float], primary: str) -> dict[str, float]:
    """The headline keys from the ``honest_vs_hinted`` table (always present)."""
    keys = selfcommit_headline_keys(primary)
    return select(table, keys, keep_nan=keys)


def selfcommit_compact_keys(primary: str) -> list[str]:
    """After the headline: the primary summary's AUROC tie share, medians (and, for a
    tau_first, the median latency in tokens) and best-threshold accuracy; median T per
    condition; AUROC of the other summaries; the no-answer, truncated and short-CoT counts; and
    the both-correct subset's headline."""
    latency = (
        [f"median_t_first_honest/{primary}", f"median_t_first_hinted/{primary}"]
        if primary.startswith("tau_") else []
    )
    return [
        f"auroc_tie_share/{primary}",
        f"median_honest/{primary}",
        f"median_hinted/{primary}",
        *latency,
        "median_T/honest",
        "median_T/hinted",
        f"best_acc/{primary}",
        *(f"auroc/{s}" for s in SELFCOMMIT_OTHER_SUMMARIES),
        "n_no_answer/honest",
        "n_no_answer/hinted",
        "n_truncated/honest",
        "n_truncated/hinted",
        "n_short_cot/honest",
        "n_short_cot/hinted",
        "n_pairs_dropped_no_answer",
        "both_correct/n_pairs",
        f"both_correct/auroc/{primary}",
        f"both_correct/wins/{primary}",
    ]


def selfcommit_compact(
    table: Mapping[str, float], both_correct_table: Mapping[str, float], primary: str
) -> dict[str, float]:
    """The compact keys from the ``honest_vs_hinted`` and ``honest_vs_hinted_both_correct``
    tables (NaN left out)."""
    return select({**table, **both_correct_table}, selfcommit_compact_keys(primary))


def primary_summary(thetas: Sequence[float], wanted: float = 0.8) -> str:
    """Summary key of the study's primary statistic: tau_first at theta = 0.8 when the run has
    it, else at the middle theta (``tau_0.8``; ``range_c`` without thetas)."""
    if not thetas:
        return "range_c"
    for t in thetas:
        if math.isclose(t, wanted):
            return tau_key(t)
    return tau_key(sorted(thetas)[len(thetas) // 2])


# --- trace_tutor ----------------------------------------------------------------------------

_CI = ("mean_diff", "mean_ci_low", "mean_ci_high")


def trace_headline_spec(auc_max: float | None = None) -> HeadlineSpec:
    """Mean Delta_context (key visible minus key masked TRACE AUC) of the answer-key
    explanations over n problems, with its problem-bootstrap CI; with ``auc_max`` (the largest
    AUC, last fraction minus first) it lies in [-auc_max, auc_max]."""
    prefix = f"visible_vs_masked/{TRACE_HEADLINE_CONDITION}"
    return HeadlineSpec(
        f"{prefix}/mean_diff", f"{prefix}/n", "problem", "problems",
        interval=(f"{prefix}/mean_ci_low", f"{prefix}/mean_ci_high"),
        bounds=(-auc_max, auc_max) if auc_max is not None else None,
    )


def trace_headline_keys() -> list[str]:
    """The headline's keys: mean Delta_context, n, its CI."""
    return trace_headline_spec().keys()


def trace_compact_keys() -> list[str]:
    """Headline, then: wrong-key Delta_context; answer-key vs question-only AUC (key visible and
    masked, all pairs); the answer-key 0%-probe drop; original accuracy per condition."""
    return [
        *trace_headline_keys(),
        *(f"visible_vs_masked/wrong_key/{f}" for f in _CI),
        *(f"answer_key_vs_question_only/visible/all/{f}" for f in _CI),
        *(f"answer_key_vs_question_only/masked/all/{f}" for f in _CI),
        *(f"zero_probe_drop/answer_key/{f}" for f in _CI),
        "accuracy/question_only",
        "accuracy/answer_key",
        "accuracy/wrong_key",
    ]


def trace_compact(tables: Mapping[str, float]) -> dict[str, float]:
    """The compact keys from the union of the trace tables (headline always present)."""
    return select(tables, trace_compact_keys(), keep_nan=trace_headline_keys())


# --- cluster F1 -------------------------------------------------------------------------------


def cluster_headline_spec(
    prefix: str = "cluster", unit: str = "unit", units: str = "units"
) -> HeadlineSpec:
    """The cluster F1 of a cluster metric with key stem ``prefix``, over its ``n_units``
    independent units (``unit``: what one is), with its unit-bootstrap interval; an F1 lies
    in [0, 1]."""
    return HeadlineSpec(
        f"{prefix}_f1", f"{prefix}_n_units", unit, units,
        interval=(f"{prefix}_f1_ci_low", f"{prefix}_f1_ci_high"), bounds=(0.0, 1.0),
    )


def cluster_compact_keys(all_keys: Sequence[str]) -> list[str]:
    """Of a cluster metric's keys (``cotaudit.cluster_f1.metric_keys(prefix)``, whose first three
    are ``{prefix}_f1``, ``_precision``, ``_recall``), the F1, its n and its interval (the keys
    of :func:`cluster_headline_spec`)."""
    return cluster_headline_spec(all_keys[0].removesuffix("_f1")).keys()


# --- report_ll ----------------------------------------------------------------------------------

REPORT_LL_STUDY_CELL = "shell.outcome_clause"
"""The study's cell (shell commands, full outcome clause): the headline's cell when run."""
REPORT_LL_VERDICTS = ("confound_excluded", "consistent_with_confound", "inconclusive",
                      "non_diagnostic")


def report_ll_headline_spec(cell: str = REPORT_LL_STUDY_CELL, unit: str = "bug") -> HeadlineSpec:
    """Mean DiD (nats) of the plain/plain reports in ``cell`` (``"{rendering}.{richness}"``; the
    task passes the study's cell when the run has it, else the run's first cell) over its n
    independent units (``unit``: bug, project or scenario), with its unit-bootstrap CI."""
    g = f"cell.{cell}.plain/did"
    return HeadlineSpec(f"{g}/mean", f"{g}/n_units", unit, f"{unit}s",
                        interval=(f"{g}/ci_low", f"{g}/ci_high"))


def report_ll_headline_keys(cell: str = REPORT_LL_STUDY_CELL) -> list[str]:
    """The headline's keys (mean DiD, n_units, CI), then its sign-flip p-value."""
    return [*report_ll_headline_spec(cell).keys(), f"cell.{cell}.plain/did/p"]


def report_ll_compact_keys(
    table_keys: Iterable[str] = (), cells: Sequence[str] = (REPORT_LL_STUDY_CELL,)
) -> list[str]:
    """The headline (``cells[0]``, the study's cell when run); in that cell D_h and D_c of the
    plain reports, the DiD of each dressed register level and the register effect of each
    dressed level on the DiD (with CI); the plain/plain DiD of the run's other cells; the
    discrimination check; the invalid scorings; and each control family's verdict indicators
    (those present in ``table_keys``)."""
    g = f"cell.{cells[0]}"
    keys = [*report_ll_headline_keys(cells[0]), f"{g}.plain/d_h/mean", f"{g}.plain/d_c/mean",
            f"{g}.concealing_dressed/did/mean", f"{g}.honest_dressed/did/mean"]
    for level in ("concealing_dressed", "honest_dressed"):
        keys += [f"{g}.register_effect.{level}/did/{s}" for s in ("mean", "ci_low", "ci_high")]
    keys += [f"cell.{cell}.plain/did/mean" for cell in cells[1:]]
    keys += ["discrimination/abs_register_effect", "discrimination/band",
             "discrimination/able_to_answer", "concealing_sensitivity/abs_d_c",
             "scorings/n_invalid"]
    keys += [k for k in table_keys
             if k.startswith("control.") and k.rsplit("/", 1)[-1] in REPORT_LL_VERDICTS]
    return keys


def report_ll_compact(
    tables: Mapping[str, float], cells: Sequence[str] = (REPORT_LL_STUDY_CELL,)
) -> dict[str, float]:
    """The compact keys from the union of the report_ll tables (headline always present)."""
    return select(tables, report_ll_compact_keys(tables, cells),
                  keep_nan=report_ll_headline_keys(cells[0]))


# --- what a compact metric selects from ---------------------------------------------------------

_TRACE_TABLES = (
    ("trace_table_ii", False), ("trace_table_iii", False), ("trace_table_iv", True),
    ("trace_delta_context", True), ("trace_zero_probe_drop", True), ("trace_table_v", False),
    ("trace_anchoring", False), ("trace_checkpoint_counts", False),
)
_REPORT_LL_TABLES = ("report_ll_overall", "report_ll_factors", "report_ll_register")


def full_metrics_of(name: str, options: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The full-set metrics (name, options) whose tables the compact metric ``name`` (logged
    with ``options``) selects from, as ``-T metrics=all`` attaches them; [] for any other
    metric. ``cotaudit report`` recomputes these for a compact log, so it builds every table
    from the per-sample scores whichever set was logged."""
    o = dict(options)
    if name in ("selfcommit_headline", "selfcommit_compact"):
        return [("honest_vs_hinted", {}), ("honest_vs_hinted_both_correct", {}),
                ("condition_x_correctness", {})]
    if name == "trace_compact":
        boot = {k: o[k] for k in ("n_boot", "seed") if k in o}
        return [(t, dict(boot) if uses_boot else {}) for t, uses_boot in _TRACE_TABLES]
    if name == "report_ll_compact":
        declarations = o.get("controls") or {}
        run = {k: o[k] for k in ("n_resamples", "seed", "unit") if k in o}
        common = {"controls": sorted(declarations), **run}
        out = []
        for t in _REPORT_LL_TABLES:
            options = dict(common)
            if t != "report_ll_factors" and "cells" in o:
                options["cells"] = list(o["cells"])
            out.append((t, options))
        discrimination = {**common, "band": o.get("band")}
        if "discrimination_cell" in o:
            discrimination["cell"] = o["discrimination_cell"]
        out.append(("report_ll_discrimination", discrimination))
        if declarations:
            out.append(("report_ll_controls", {"controls": declarations, **run}))
        return out
    return []
