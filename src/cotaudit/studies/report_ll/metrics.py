"""report_ll's metric set: the headline and compact keys of its tables."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from cotaudit.display.headline import HeadlineSpec
from cotaudit.studies.metrics import select

REPORT_LL_STUDY_CELL = "shell.outcome_clause"
"""The study's cell (shell commands, full outcome clause): the headline's cell when run."""


REPORT_LL_VERDICTS = (
    "confound_excluded",
    "consistent_with_confound",
    "inconclusive",
    "non_diagnostic",
)


def report_ll_headline_spec(cell: str = REPORT_LL_STUDY_CELL, unit: str = "bug") -> HeadlineSpec:
    """Mean DiD (nats) of the plain/plain reports in ``cell`` (``"{rendering}.{richness}"``; the
    task passes the study's cell when the run has it, else the run's first cell) over its n
    independent units (``unit``: bug, project or scenario), with its unit-bootstrap CI."""
    g = f"cell.{cell}.plain/did"
    return HeadlineSpec(
        f"{g}/mean", f"{g}/n_units", unit, f"{unit}s", interval=(f"{g}/ci_low", f"{g}/ci_high")
    )


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
    keys = [
        *report_ll_headline_keys(cells[0]),
        f"{g}.plain/d_h/mean",
        f"{g}.plain/d_c/mean",
        f"{g}.concealing_dressed/did/mean",
        f"{g}.honest_dressed/did/mean",
    ]
    for level in ("concealing_dressed", "honest_dressed"):
        keys += [f"{g}.register_effect.{level}/did/{s}" for s in ("mean", "ci_low", "ci_high")]
    keys += [f"cell.{cell}.plain/did/mean" for cell in cells[1:]]
    keys += [
        "discrimination/abs_register_effect",
        "discrimination/band",
        "discrimination/able_to_answer",
        "concealing_sensitivity/abs_d_c",
        "scorings/n_invalid",
    ]
    keys += [
        k
        for k in table_keys
        if k.startswith("control.") and k.rsplit("/", 1)[-1] in REPORT_LL_VERDICTS
    ]
    return keys


def report_ll_compact(
    tables: Mapping[str, float], cells: Sequence[str] = (REPORT_LL_STUDY_CELL,)
) -> dict[str, float]:
    """The compact keys from the union of the report_ll tables (headline always present)."""
    return select(
        tables, report_ll_compact_keys(tables, cells), keep_nan=report_ll_headline_keys(cells[0])
    )


REPORT_LL_TABLES = ("report_ll_overall", "report_ll_factors", "report_ll_register")
