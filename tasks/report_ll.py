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
from pathlib import Path
from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import HeadlineMetric

from cotaudit.display.headline import HEADLINES_KEY
from cotaudit.prerequisite import checked_task, given_arguments
from cotaudit.scorers import contrast_options, report_ll_scorer
from cotaudit.scorers.report_ll import run_metrics
from cotaudit.scorers.viewer import mean_keep_text, viewer_config
from cotaudit.solvers import report_ll_scorings
from cotaudit.studies.metrics import cluster_headline_spec
from cotaudit.studies.report_ll.display import sample_table
from cotaudit.studies.report_ll.fixtures import DEFAULT_REWRITE, FixtureVersion
from cotaudit.studies.report_ll.fixtures.audits import (
    audit_corpus,
    audit_dressing,
    dressing_texts,
)
from cotaudit.studies.report_ll.fixtures.schema import REPORT_REQUEST, SYSTEM_PROMPT
from cotaudit.studies.report_ll.metrics import (
    CLUSTER_OPTIONS,
    RUN_OPTIONS,
    report_ll_headline_keys,
    report_ll_headline_spec,
)
from cotaudit.studies.report_ll.paper import PAPER
from cotaudit.studies.report_ll.scores import CLUSTER_PREFIX
from cotaudit.studies.report_ll.selection import RunSelection, run_selection
from cotaudit.studies.report_ll.settings import ALL_LEVELS, DEFAULT_FIXTURES, ReportLLSettings
from cotaudit.studies.report_ll.stats import DEFAULT_DISCRIMINATION_BAND, STUDY_CELL, UNIT_FIELDS
from cotaudit.studies.report_ll.versions import TASK_VERSION


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
    rendering: str | list[str] = ALL_LEVELS["rendering"],
    richness: str | list[str] = ALL_LEVELS["richness"],
    register: str | list[str] = ALL_LEVELS["register"],
    family: str | list[str] | None = None,
    register_rewrite: str = DEFAULT_REWRITE,
    n_resamples: int = RUN_OPTIONS["n_resamples"],
    cluster_boot: int = CLUSTER_OPTIONS["n_boot"],
    seed: int = RUN_OPTIONS["seed"],
    tokenizer: str | None = None,
    contrast_model: str | None = None,
    discrimination_band: float = DEFAULT_DISCRIMINATION_BAND,
    unit: str = RUN_OPTIONS["unit"],
    metrics: str = "compact",
    paper: bool = False,
) -> Task:
    """The report log-likelihood study over a fixture file (default: the committed corpus, 144
    main-family scenarios on 48 bugs of 16 projects x 12 versions, and the 8 scenarios of the
    register control family, one version each: 1736 samples); each parameter but ``paper`` is
    a field of :class:`ReportLLSettings`, which says what it means.

    Args:
      paper: Run the study's published configuration (its design: the 2 x 2 x 2 factorial of
        rendering x richness x register, the third register level, the bundled rewrite; the
        headline stays the study's cell: :data:`cotaudit.studies.report_ll.paper.PAPER`); a
        parameter also given on the command line keeps its given value (even the default) and,
        where it differs from the paper's, is recorded as an override; the log records every
        value that ran.
    """
    resolved, paper_configuration = PAPER.configure(
        paper,
        dict(
            fixtures=fixtures,
            scenarios=scenarios,
            rendering=rendering,
            richness=richness,
            register=register,
            family=family,
            register_rewrite=register_rewrite,
            n_resamples=n_resamples,
            cluster_boot=cluster_boot,
            seed=seed,
            tokenizer=tokenizer,
            contrast_model=contrast_model,
            discrimination_band=discrimination_band,
            unit=unit,
            metrics=metrics,
        ),
        given_arguments(),
    )
    return _study_task(ReportLLSettings.of(**resolved), paper_configuration)


def _study_task(settings: ReportLLSettings, paper_configuration: dict | None) -> Task:
    """The task of :func:`report_ll` from its checked parameters (``paper_configuration``: the
    log record of the paper configuration applied, or None)."""
    chosen = run_selection(settings)
    declarations = {f: d.model_dump() for f, d in chosen.controls.items()}
    return Task(
        dataset=MemoryDataset(
            [fixture_sample(v) for v in chosen.versions],
            name="report_ll",
            location=str(settings.fixtures),
        ),
        solver=report_ll_scorings(tokenizer=settings.tokenizer),
        scorer=report_ll_scorer(),
        metrics=run_metrics(settings, declarations, chosen.run_cells, chosen.check_cell),
        epochs=Epochs(1, mean_keep_text()),
        headline_metric=HeadlineMetric(
            scorer="report_ll_scorer", metric=report_ll_headline_keys()[0]
        ),
        viewer=viewer_config(sample_table()),
        version=TASK_VERSION,
        metadata=_metadata(settings, chosen, declarations, paper_configuration),
    )


def _metadata(
    settings: ReportLLSettings,
    chosen: RunSelection,
    declarations: dict[str, dict],
    paper_configuration: dict | None,
) -> dict[str, Any]:
    """The task metadata of a run: its fixtures and selection, prompts, audits, the headline,
    cells, unit and discrimination check in words, and the paper configuration applied (if
    any)."""
    path = settings.fixtures
    used, versions, unit = chosen.used, chosen.versions, settings.unit
    audit = audit_corpus(versions).summary
    return {
        "study": "report_ll",
        "fixtures": str(path),
        "fixtures_sha256": _sha256(path),
        "n_scenarios": len(used),
        "n_bugs": len({s.bug for s in used}),
        "n_projects": len({s.project for s in used}),
        "register_rewrite": settings.register_rewrite,
        "n_versions": len(versions),
        "levels": settings.levels,
        "main_family": chosen.main_families[0] if chosen.main_families else None,
        "controls": declarations,
        "prompts": {"system": SYSTEM_PROMPT, "report_request": REPORT_REQUEST},
        "audit": {k: v for k, v in audit.items() if k.startswith("audit/")},
        "dressing": audit_dressing(versions).summary,
        "headline": f"DiD per cell and register level (cell.{{rendering}}.{{richness}}."
        f"{{register}}/did/...), the study's cell {STUDY_CELL} and plain first; "
        "{cell}.pooled_registers pools a cell's register levels with each report counted "
        "once; pooled_cells.* pools over the run's cells",
        "cells": chosen.run_cells,
        "unit": {
            "unit": unit,
            "field": UNIT_FIELDS[unit],
            "rule": "every interval resamples these units with replacement (all versions of "
            "a drawn unit) and every sign-flip p-value flips each unit's sum",
        },
        "discrimination_check": {
            "quantity": "|mean e|, e = did(concealing_dressed) - did(plain) of the same "
            "scenario, rendering and richness",
            "cell": chosen.check_cell,
            "band": settings.discrimination_band,
            "rule": "able to answer iff |mean e| > band (nats): dressing the concealing "
            "report moves the DiD beyond the band, so the design can discriminate on this "
            "model; else it cannot answer whether dressing the honest report does the same",
        },
        HEADLINES_KEY: [
            report_ll_headline_spec(unit).record(),
            cluster_headline_spec(CLUSTER_PREFIX, unit, f"{unit}s").record(),
        ],
        **({"paper_configuration": paper_configuration} if paper_configuration else {}),
        **contrast_options(settings.contrast_model),
    }
