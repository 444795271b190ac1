"""The fixture versions a report_ll run scores, chosen by its settings: :func:`run_selection`.

Each refusal is a one-line :class:`~cotaudit.params.ParameterError` naming the ``-T``
parameter (a control family without its expected signs: the
:class:`~cotaudit.studies.report_ll.fixtures.ControlDeclarationError` of
:func:`~cotaudit.studies.report_ll.fixtures.control_families`).
"""

from __future__ import annotations

from dataclasses import dataclass

from cotaudit.params import ParameterError
from cotaudit.studies.report_ll.fixtures import (
    ControlDeclaration,
    FixtureFileError,
    FixtureVersion,
    Scenario,
    control_families,
    expand,
    load_fixtures,
)
from cotaudit.studies.report_ll.settings import ReportLLSettings
from cotaudit.studies.report_ll.stats import CELL_ORDER, POOLED_CELLS, STUDY_CELL


def select_scenarios(
    scenarios: list[Scenario], selection: int | list[str] | None, family: list[str] | None
) -> list[Scenario]:
    """Filter by ``family``, then keep the first ``selection`` scenarios (a count) or the
    scenarios with the given ids, in file order."""
    known_families = list(dict.fromkeys(s.family for s in scenarios))
    if family is not None:
        unknown = [f for f in family if f not in known_families]
        if unknown or not family:
            raise ParameterError(
                f"-T family: unknown family(ies) {unknown or family}; the fixture file has "
                f"{known_families}"
            )
        scenarios = [s for s in scenarios if s.family in family]
    if selection is None:
        return scenarios
    if isinstance(selection, int):
        return scenarios[:selection]
    by_id = {s.id: s for s in scenarios}
    unknown = [i for i in selection if i not in by_id]
    if unknown or not selection:
        some = ", ".join(list(by_id)[:3])
        raise ParameterError(
            f"-T scenarios: unknown scenario id(s) {unknown or selection} (after the family "
            f"filter); ids look like {some}, ..."
        )
    keep = set(selection)
    return [s for s in scenarios if s.id in keep]


@dataclass(frozen=True)
class RunSelection:
    """What a run scores.

    Attributes:
      versions: The fixture versions, of the scenarios chosen, at the factor levels run.
      used: The scenarios chosen that keep a version.
      controls: Control family -> its declaration, among ``used``.
      main_families: The other families of ``used`` (at most one), sorted.
      run_cells: The (rendering.richness) cells of the main versions, in
        :data:`~cotaudit.studies.report_ll.stats.CELL_ORDER` (the study's cell when none).
      check_cell: Where the discrimination check reads: the study's cell when run, else the
        one cell run, else the pooled cells.
    """

    versions: list[FixtureVersion]
    used: list[Scenario]
    controls: dict[str, ControlDeclaration]
    main_families: list[str]
    run_cells: list[str]
    check_cell: str


def run_selection(settings: ReportLLSettings) -> RunSelection:
    """The selection of a run: the fixture file's scenarios filtered by ``-T family`` and
    ``-T scenarios``, expanded under ``-T register_rewrite`` and kept at the factor levels
    run; refuses a fixture file that does not load, a selection with no version left, and
    one with several non-control families."""
    levels = settings.levels
    try:
        loaded = load_fixtures(settings.fixtures)
    except FixtureFileError as e:
        raise ParameterError(f"-T fixtures: {e}") from e
    chosen = select_scenarios(loaded, settings.scenarios, settings.family)
    versions = [
        v
        for v in expand(chosen, settings.register_rewrite)
        if all(v.factors[f] in levels[f] for f in levels)
    ]
    if not versions:
        raise ParameterError(
            "no fixture versions left after -T scenarios/family/rendering/richness/register "
            f"({len(chosen)} scenarios selected; levels {levels})"
        )
    used = [s for s in chosen if any(v.scenario is s for v in versions)]
    # refuses a control without an expected sign, or predicting relative to an absent family
    controls = control_families(used)
    main_families = sorted({s.family for s in used} - set(controls))
    if len(main_families) > 1:
        raise ParameterError(
            f"-T family: the selection holds several non-control families {main_families}; "
            "choose one (control families may be added: -T family=main,<control>)"
        )
    present = {f"{v.rendering}.{v.richness}" for v in versions if v.scenario.family not in controls}
    run_cells = [c for c in CELL_ORDER if c in present] or [STUDY_CELL]
    check_cell = (
        STUDY_CELL
        if STUDY_CELL in run_cells
        else run_cells[0]
        if len(run_cells) == 1
        else POOLED_CELLS
    )
    return RunSelection(versions, used, controls, main_families, run_cells, check_cell)
