"""Report log-likelihood study: does a frozen model find an honest report of a reward
hack more likely after the hack transcript than a concealing one?

Each sample is one fixture version (a scenario at one rendering x richness x register level).
The model reads the hack and the clean transcript of the agent's work and, after each, both fixed
reports are scored as its own summary: S(r, T) = sum of the report's token log-probabilities
(nats). No text is generated. Per version: D_h = S(h, hack) - S(h, clean),
D_c = S(c, hack) - S(c, clean), DiD = D_h - D_c, and per-token forms.

    inspect eval tasks/report_ll.py --model hf-probe/default -T scenarios=4
    inspect eval tasks/report_ll.py --model hf-probe/default,hf-probe/<other> -T register=plain
    inspect eval tasks/report_ll.py --model hf-probe/default -T paper=true -T scenarios=2

The headline is the DiD per (rendering, richness) cell and register level, the study's cell
(shell commands, full outcome clause) and plain/plain first; every interval resamples the
independent unit (-T unit=bug, the default; project or scenario). A model on which dressing the
concealing report moves the DiD by no more than -T discrimination_band (nats) cannot answer
whether dressing the honest report does the same (the pre-registered discrimination check, in
the log's metrics and task metadata).

Only models that can score a fixed continuation work: hf-probe/ and mlx/, or a vllm/ or
sglang/ server returning prompt log-probabilities (-T tokenizer= names its tokenizer); any
other provider fails at once with EngineCapabilityError.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import HeadlineMetric

from cotaudit.cluster.f1 import metric_keys
from cotaudit.display.headline import HEADLINES_KEY
from cotaudit.params import (
    ParameterError,
    as_list,
    require_int,
    require_positive,
    require_range,
)
from cotaudit.prerequisite import checked_task
from cotaudit.scorers import (
    contrast_options,
    report_cluster_f1,
    report_ll_controls,
    report_ll_discrimination,
    report_ll_factors,
    report_ll_overall,
    report_ll_register,
    report_ll_scorer,
)
from cotaudit.scorers.compact import report_ll_compact
from cotaudit.scorers.viewer import mean_keep_text, report_ll_viewer
from cotaudit.solvers import report_ll_scorings
from cotaudit.studies.metrics import cluster_compact_keys, cluster_headline_spec, parse_metric_set
from cotaudit.studies.paper import parameter_defaults
from cotaudit.studies.report_ll.fixtures import (
    DEFAULT_CORPUS,
    DEFAULT_REWRITE,
    REWRITES,
    FixtureFileError,
    FixtureVersion,
    Scenario,
    control_families,
    expand,
    load_fixtures,
)
from cotaudit.studies.report_ll.fixtures.audits import (
    audit_corpus,
    audit_dressing,
    dressing_texts,
)
from cotaudit.studies.report_ll.fixtures.schema import FACTOR_LEVELS, REPORT_REQUEST, SYSTEM_PROMPT
from cotaudit.studies.report_ll.metrics import report_ll_headline_keys, report_ll_headline_spec
from cotaudit.studies.report_ll.paper import PAPER
from cotaudit.studies.report_ll.scores import CLUSTER_PREFIX
from cotaudit.studies.report_ll.stats import (
    CELL_ORDER,
    DEFAULT_DISCRIMINATION_BAND,
    DEFAULT_UNIT,
    POOLED_CELLS,
    STUDY_CELL,
    UNIT_FIELDS,
    UNITS,
)

DEFAULT_FIXTURES = "default"


def parse_levels(name: str, value: str | Sequence[str]) -> list[str]:
    """A non-empty subset of the factor ``name``'s levels, from "a,b" or a list."""
    known = FACTOR_LEVELS[name]
    levels = as_list(value)
    unknown = [v for v in levels if v not in known]
    if unknown or not levels:
        raise ParameterError(
            f"-T {name}: unknown level(s) {unknown or levels}; choose from {list(known)}"
        )
    return list(dict.fromkeys(levels))


def resolve_fixtures(fixtures: str) -> Path:
    """``"default"`` (the committed corpus) or a path to a JSONL fixture file."""
    if not isinstance(fixtures, str) or not fixtures.strip():
        raise ParameterError(f"-T fixtures: expected 'default' or a file path, got {fixtures!r}")
    if fixtures == DEFAULT_FIXTURES:
        return DEFAULT_CORPUS
    path = Path(fixtures).expanduser()
    if not path.is_file():
        raise ParameterError(f"-T fixtures: no such file {str(path)!r}")
    return path


def select_scenarios(
    scenarios: list[Scenario],
    selection: int | str | Sequence[str] | None,
    family: str | Sequence[str] | None,
) -> list[Scenario]:
    """Filter by ``family`` (comma list), then keep the first ``selection`` scenarios (an
    integer) or the scenarios with the given ids (comma list), in file order."""
    known_families = list(dict.fromkeys(s.family for s in scenarios))
    if family is not None:
        wanted = as_list(family)
        unknown = [f for f in wanted if f not in known_families]
        if unknown or not wanted:
            raise ParameterError(
                f"-T family: unknown family(ies) {unknown or wanted}; the fixture file has "
                f"{known_families}"
            )
        scenarios = [s for s in scenarios if s.family in wanted]
    if selection is None:
        return scenarios
    if isinstance(selection, str) and selection.strip().isdigit():
        selection = int(selection.strip())
    if isinstance(selection, (int, float)) and not isinstance(selection, bool):
        if not isinstance(selection, int):
            raise ParameterError(
                f"-T scenarios: expected a count or scenario ids, got {selection!r}"
            )
        require_positive("scenarios", selection)
        return scenarios[:selection]
    ids = as_list(selection)  # type: ignore[arg-type]
    by_id = {s.id: s for s in scenarios}
    unknown = [i for i in ids if i not in by_id]
    if unknown or not ids:
        some = ", ".join(list(by_id)[:3])
        raise ParameterError(
            f"-T scenarios: unknown scenario id(s) {unknown or ids} (after the family filter); "
            f"ids look like {some}, ..."
        )
    keep = set(ids)
    return [s for s in scenarios if s.id in keep]


def fixture_sample(version: FixtureVersion) -> Sample:
    """One sample: the version's id, a one-line input, and everything the solver reads."""
    s = version.scenario
    return Sample(
        id=version.id,
        input=(
            f"Score the honest and concealing reports of fixture {version.id} after its hack "
            "and clean transcripts (log-likelihood; no generation)."
        ),
        metadata={
            "fixture_id": version.id,
            "scenario_id": s.id,
            "bug": s.bug,
            "project": s.project,
            "family": s.family,
            "register_rewrite": version.rewrite,
            "dressing_texts": dressing_texts(version),
            "hack_kind": s.hack_kind,
            **version.factors,
            "control": s.control.model_dump() if s.control is not None else None,
            "reports": {r: version.report(r) for r in ("honest", "concealing")},
            "contexts": {t: version.context_messages(t) for t in ("hack", "clean")},
        },
    )


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@task
@checked_task
def report_ll(
    fixtures: str = DEFAULT_FIXTURES,
    scenarios: int | str | None = None,
    rendering: str | list[str] = ",".join(FACTOR_LEVELS["rendering"]),
    richness: str | list[str] = ",".join(FACTOR_LEVELS["richness"]),
    register: str | list[str] = ",".join(FACTOR_LEVELS["register"]),
    family: str | list[str] | None = None,
    register_rewrite: str = DEFAULT_REWRITE,
    n_resamples: int = 10_000,
    cluster_boot: int = 1000,
    seed: int = 0,
    tokenizer: str | None = None,
    contrast_model: str | None = None,
    discrimination_band: float = DEFAULT_DISCRIMINATION_BAND,
    unit: str = DEFAULT_UNIT,
    metrics: str = "compact",
    paper: bool = False,
) -> Task:
    """The report log-likelihood study over a fixture file (default: the committed corpus, 144
    main-family scenarios on 48 bugs of 16 projects x 12 versions, and the 8 scenarios of the
    register control family, one version each: 1736 samples).

    Args:
      fixtures: "default" or the path of a JSONL fixture file (validated; errors name line and
        field).
      scenarios: A count (the first N scenarios, in file order, after the family filter) or
        comma-separated scenario ids. Default: all.
      rendering: Comma-separated subset of shell,driver.
      richness: Comma-separated subset of outcome_clause,bare.
      register: Comma-separated subset of plain,concealing_dressed,honest_dressed.
      family: Comma-separated families to include (default: all). At most one non-control
        family may remain; control families are summarised separately.
      register_rewrite: Which dressed texts fill the dressed register levels: "bundled" (the
        study's bundled rewrite: another verb, an added adverb, "throughout the run", a
        metaphor with an intensifier) or "minimal" (the plain verb and time phrase kept, one
        intensifier added; the outcome clause swapped for a metaphor).
      n_resamples: Bootstrap resamples / random sign flips of the run statistics.
      cluster_boot: Bootstrap resamples of the cluster F1 interval (0: none).
      seed: Seed of the bootstrap, sign flips and clustering.
      tokenizer: Tokenizer (hub id or folder) of a vllm/ or sglang/ model, to locate the
        report's tokens in the prompt log-probabilities; default the model's name.
      contrast_model: Model that describes what distinguishes the two clusters' reports
        (written into the log; default none).
      discrimination_band: Pre-registered band (nats): a model on which dressing the
        concealing report moves the DiD (of the study's cell when run, else pooled over the
        run's cells) by |mean| at most this cannot answer whether dressing the honest report
        does the same.
      unit: The independent unit every interval and sign-flip p-value resamples: "bug"
        (default; a bug serves several scenarios), "project" or "scenario".
      metrics: "compact" (default: the headline -- plain/plain DiD of the study's cell with its
        CI and p-value --, per cell the dressed register levels, the pooled figure and the
        register effects, the discrimination check, invalid scorings, control verdicts and the
        cluster F1 with its interval; no NaN for empty strata) or "all" (every cell, register
        effect and factorial table and every cluster statistic).
      paper: Run the study's published configuration (its cell, all three register levels,
        the bundled rewrite; :data:`cotaudit.studies.report_ll.paper.PAPER`); a parameter also
        given on the command line keeps its given value and is recorded as an override in the
        log.
    """
    given = {name: value for name, value in locals().items() if name != "paper"}
    paper_configuration = None
    if paper is True:
        given, overrides = PAPER.apply(given, parameter_defaults(report_ll))
        paper_configuration = PAPER.log_record(overrides)
    elif paper is not False:
        raise ParameterError(f"-T paper: expected true or false, got {paper!r}")
    return _study_task(**given, paper_configuration=paper_configuration)


def _study_task(
    *,
    fixtures: str,
    scenarios: int | str | None,
    rendering: str | list[str],
    richness: str | list[str],
    register: str | list[str],
    family: str | list[str] | None,
    register_rewrite: str,
    n_resamples: int,
    cluster_boot: int,
    seed: int,
    tokenizer: str | None,
    contrast_model: str | None,
    discrimination_band: float,
    unit: str,
    metrics: str,
    paper_configuration: dict | None,
) -> Task:
    """The task of :func:`report_ll` from its resolved parameters (``paper_configuration``: the
    log record of the paper configuration applied, or None)."""
    contrast = contrast_options(contrast_model)
    try:
        metric_set = parse_metric_set(metrics)
    except ValueError as e:
        raise ParameterError(str(e)) from e
    path = resolve_fixtures(fixtures)
    if register_rewrite not in REWRITES:
        raise ParameterError(
            f"-T register_rewrite: expected one of {list(REWRITES)}, got {register_rewrite!r}"
        )
    levels = {
        "rendering": parse_levels("rendering", rendering),
        "richness": parse_levels("richness", richness),
        "register": parse_levels("register", register),
    }
    require_positive("n_resamples", n_resamples)
    if isinstance(cluster_boot, bool) or not isinstance(cluster_boot, int):
        raise ParameterError(f"-T cluster_boot: must be an integer >= 0, got {cluster_boot!r}")
    require_range("cluster_boot", cluster_boot, 0, None)
    require_int("seed", seed)
    require_range("discrimination_band", discrimination_band, 0, None)
    if unit not in UNITS:
        raise ParameterError(f"-T unit: expected one of {list(UNITS)}, got {unit!r}")
    if tokenizer is not None and (not isinstance(tokenizer, str) or not tokenizer.strip()):
        raise ParameterError(f"-T tokenizer: expected a hub id or folder, got {tokenizer!r}")
    try:
        loaded = load_fixtures(path)
    except FixtureFileError as e:
        raise ParameterError(f"-T fixtures: {e}") from e

    chosen = select_scenarios(loaded, scenarios, family)
    versions = [
        v
        for v in expand(chosen, register_rewrite)  # type: ignore[arg-type]
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
    control_names = sorted(controls)
    options = {"n_resamples": n_resamples, "seed": seed, "unit": unit}
    present = {f"{v.rendering}.{v.richness}" for v in versions if v.scenario.family not in controls}
    run_cells = [c for c in CELL_ORDER if c in present] or [STUDY_CELL]
    check_cell = (
        STUDY_CELL
        if STUDY_CELL in run_cells
        else run_cells[0]
        if len(run_cells) == 1
        else POOLED_CELLS
    )
    declarations = {f: d.model_dump() for f, d in controls.items()}
    cluster_keys = (
        None if metric_set == "all" else cluster_compact_keys(metric_keys(CLUSTER_PREFIX))
    )
    cluster = report_cluster_f1(
        controls=control_names, n_boot=cluster_boot, seed=seed, unit=unit, keys=cluster_keys
    )
    if metric_set == "all":
        run_metrics = [
            report_ll_overall(controls=control_names, cells=run_cells, **options),
            report_ll_register(controls=control_names, cells=run_cells, **options),
            report_ll_factors(controls=control_names, **options),
            report_ll_discrimination(
                band=float(discrimination_band),
                controls=control_names,
                cell=check_cell,
                **options,
            ),
            cluster,
        ]
        if controls:
            run_metrics.append(report_ll_controls(controls=declarations, **options))
    else:
        run_metrics = [
            report_ll_compact(
                band=float(discrimination_band),
                controls=declarations or None,
                cells=run_cells,
                discrimination_cell=check_cell,
                **options,
            ),
            cluster,
        ]
    audit = audit_corpus(versions).summary
    return Task(
        dataset=MemoryDataset(
            [fixture_sample(v) for v in versions], name="report_ll", location=str(path)
        ),
        solver=report_ll_scorings(tokenizer=tokenizer),
        scorer=report_ll_scorer(),
        metrics=run_metrics,
        epochs=Epochs(1, mean_keep_text()),
        headline_metric=HeadlineMetric(
            scorer="report_ll_scorer", metric=report_ll_headline_keys(run_cells[0])[0]
        ),
        viewer=report_ll_viewer(),
        metadata={
            "study": "report_ll",
            "fixtures": str(path),
            "fixtures_sha256": _sha256(path),
            "n_scenarios": len(used),
            "n_bugs": len({s.bug for s in used}),
            "n_projects": len({s.project for s in used}),
            "register_rewrite": register_rewrite,
            "n_versions": len(versions),
            "levels": levels,
            "main_family": main_families[0] if main_families else None,
            "controls": {f: d.model_dump() for f, d in controls.items()},
            "prompts": {"system": SYSTEM_PROMPT, "report_request": REPORT_REQUEST},
            "audit": {k: v for k, v in audit.items() if k.startswith("audit/")},
            "dressing": audit_dressing(versions).summary,
            "headline": f"DiD per cell and register level (cell.{{rendering}}.{{richness}}."
            f"{{register}}/did/...), the study's cell {STUDY_CELL} and plain first; "
            "{cell}.pooled_registers pools a cell's register levels with each report counted "
            "once; pooled_cells.* pools over the run's cells",
            "cells": run_cells,
            "unit": {
                "unit": unit,
                "field": UNIT_FIELDS[unit],
                "rule": "every interval resamples these units with replacement (all versions of "
                "a drawn unit) and every sign-flip p-value flips each unit's sum",
            },
            "discrimination_check": {
                "quantity": "|mean e|, e = did(concealing_dressed) - did(plain) of the same "
                "scenario, rendering and richness",
                "cell": check_cell,
                "band": float(discrimination_band),
                "rule": "able to answer iff |mean e| > band (nats): dressing the concealing "
                "report moves the DiD beyond the band, so the design can discriminate on this "
                "model; else it cannot answer whether dressing the honest report does the same",
            },
            HEADLINES_KEY: [
                report_ll_headline_spec(run_cells[0], unit).record(),
                cluster_headline_spec(CLUSTER_PREFIX, unit, f"{unit}s").record(),
            ],
            **({"paper_configuration": paper_configuration} if paper_configuration else {}),
            **contrast,
        },
    )
