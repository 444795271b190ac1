"""The report's checkpoint series on hand-built selfcommit runs: the flag's marker on the
checkpoint that departs (given out of step order), the tests table and its caption, and each
run's cued AUROC equal to the value the study's comparison of runs shows for the same run."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import hint_follower_card

from cotaudit.logs.data import RunData, ScoreData, ScoredSample, ScorerRun
from cotaudit.organisms import write_card
from cotaudit.report import compare_ci
from cotaudit.report.checkpoints import measure, sections, series_of, study_samples
from cotaudit.report.selfcommit import records
from cotaudit.studies.selfcommit.stats import answered, two_condition_table


def _sample(pair: str, condition: str, tau: float, answer: int | None, gold: int = 10):
    meta = {"pair_id": pair, "condition": condition, "gold": gold}
    if condition == "hinted":
        meta["hint"] = gold + 1
    return ScoredSample(
        sample_id=f"{pair}-{condition}",
        score=ScoreData(value={"tau_0.8": tau}, metadata={"a_final": answer}),
        sample_metadata=meta,
    )


def _run(model: str, pairs: dict[str, tuple[float, float]], no_answer: tuple[str, ...] = ()):
    """A selfcommit run: per problem (honest tau, hinted tau); the hinted response of each
    problem in ``no_answer`` has no final answer (its tau NaN, as the scorer writes it)."""
    samples = []
    for pair, (honest, hinted) in pairs.items():
        samples.append(_sample(pair, "honest", honest, 7))
        if pair in no_answer:
            samples.append(_sample(pair, "hinted", math.nan, None))
        else:
            samples.append(_sample(pair, "hinted", hinted, 11))
    scorer = ScorerRun("selfcommit_scorer", [], {}, samples)
    return RunData(
        path=f"/logs/{model}.json",
        task="selfcommit",
        study="selfcommit",
        model=model,
        status="success",
        created="2025-01-01T00:00:00",
        task_args={},
        task_metadata={},
        epochs=1,
        n_samples=len(samples),
        scorers={"selfcommit_scorer": scorer},
    )


def _checkpoint(tmp_path, step: int) -> str:
    folder = tmp_path / f"step-{step:06d}"
    folder.mkdir()
    write_card(folder, hint_follower_card(step))
    return f"hf-probe/{folder}"


SEPARATED = {f"p{j:04d}": (0.6 + j / 100, 0.1 + j / 100) for j in range(20)}  # AUROC 1
REVERSED = {p: (b, a) for p, (a, b) in SEPARATED.items()}  # AUROC 0


def test_the_series_marks_the_checkpoint_the_flag_finds_in_step_order(tmp_path):
    """Step 100 measures as the base, step 50 reverses it; given as 100 then 50, the table
    reads base, 50, 100 and ◆ marks step 50 only, in both tables and in the caption."""
    runs = [
        _run(_checkpoint(tmp_path, 100), SEPARATED),
        _run(_checkpoint(tmp_path, 50), REVERSED),
        _run("hf-probe/tiny", SEPARATED),
    ]
    [section] = sections(runs, tmp_path)["selfcommit"]
    series = section.tables["series"]
    assert [r[0].text for r in series.rows] == ["base", "50", "100"]
    tau = series.column("tau_0.8")
    assert tau == pytest.approx([1.0, 0.0, 1.0])
    marked = [c.text.endswith("◆") for c in (r[3] for r in series.rows)]
    assert marked == [False, True, False]
    assert "family: 2 checkpoint(s) per statistic" in series.note
    tests = section.tables["tests"]
    assert [r[0].text for r in tests.rows] == ["50", "100"]
    assert tests.column("tau_0.8") == pytest.approx([-1.0, 0.0])
    assert tests.rows[0][1].text.endswith("◆") and not tests.rows[1][1].text.endswith("◆")
    assert section.data["departures"] == {"tau_0.8": 50}
    assert [f.flagged for f in section.data["flags"]["tau_0.8"]] == [True, False]
    assert "tau_0.8 at step 50" in section.figures["series"].caption


def test_without_a_departure_nothing_is_marked(tmp_path):
    runs = [_run("hf-probe/tiny", SEPARATED), _run(_checkpoint(tmp_path, 50), SEPARATED)]
    [section] = sections(runs, tmp_path)["selfcommit"]
    assert not any("◆" in c.text for r in section.tables["series"].rows for c in r)
    assert section.data["departures"] == {"tau_0.8": None}
    assert "tau_0.8 at step" not in section.figures["series"].caption


def test_a_runs_series_value_is_the_comparisons_value(tmp_path):
    """p3's hinted response has no final answer: the study drops p3's pair (its honest 0.9
    beats every hinted value), so the AUROC is 8/9 = 0.889 over p0-p2; keeping the unpaired
    honest response would give (8 + 3) / 12 = 0.917."""
    pairs = {"p0000": (0.5, 0.2), "p0001": (0.4, 0.3), "p0002": (0.6, 0.45), "p0003": (0.9, 0.0)}
    run = _run("hf-probe/tiny", pairs, no_answer=("p0003",))
    samples = run.scorers["selfcommit_scorer"].samples
    assert study_samples("selfcommit", samples) == [True] * 6 + [False, False]
    study = two_condition_table(records(samples))["auroc/tau_0.8"]
    rows = compare_ci.auroc_rows(
        [(r.pair_id, r.condition, r.summaries["tau_0.8"]) for r in answered(records(samples))],
        "honest",
        "hinted",
    )
    comparison = rows.statistic(np.arange(len(rows.units)))
    measured = measure(run, 0, True)
    assert measured is not None
    assert study == pytest.approx(8 / 9)
    assert comparison == pytest.approx(study)
    assert measured.aurocs["tau_0.8"].estimate == pytest.approx(study)
    assert measured.rate.n == 4  # the shortcut rate still reads every wrong-cue sample


def test_only_organisms_with_a_checkpoint_run_make_a_series(tmp_path):
    assert series_of([_run("hf-probe/tiny", SEPARATED)]) == {}
