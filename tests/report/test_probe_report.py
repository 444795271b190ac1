"""`cotaudit report` on probe logs (tiny model): the run metrics recomputed and checked, each
summary's mean equal to a hand mean of the per-sample values, and runs compared."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from helpers import run_eval

import cotaudit
from cotaudit.report import build_report
from cotaudit.tasks.probe_examples import capitals, gsm8k_numeric

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _in_repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def _run(task, log_dir: Path, **kwargs):
    return run_eval(task, "hf-probe/tiny", log_dir, max_tokens=16, **kwargs)


def test_probe_logs_get_a_checked_section_and_a_comparison(tmp_path):
    logs = tmp_path / "logs"
    a = _run(cotaudit.probe(capitals(limit=3), "trace"), logs)
    b = _run(cotaudit.probe(capitals(limit=3), "trace", seed=1), logs)
    _run(
        cotaudit.probe(
            gsm8k_numeric(problems=2, conditions="honest,hinted"),
            "selfcommit",
            stride=4,
            k=2,
            replay_under="honest",
        ),
        logs,
    )
    report = build_report([logs], tmp_path / "out", strict=True)

    traces = report.sections["probe_trace"]
    assert len(traces) == 2
    for sec, log in zip(traces, (a, b), strict=True):
        assert sec.consistency.ok and sec.consistency.n_checked == sec.consistency.n_logged > 5
        auc = [s.scores["probe_scorer"].value["auc"] for s in log.samples]
        assert sec.tables["summaries"].row("auc")["mean [95% CI]"] == pytest.approx(np.mean(auc))
    comp = report.comparisons["probe_trace"].tables["comparison"]
    first, second = (
        np.mean([s.scores["probe_scorer"].value["pass_at_first"] for s in log.samples])
        for log in (a, b)
    )
    delta = comp.row(f"Δ pass_at_first vs {traces[0].run.label}")
    assert delta[traces[1].run.label] == pytest.approx(second - first)  # same samples: all shared

    [sc] = report.sections["probe_selfcommit"]
    assert sc.consistency.ok
    assert sc.tables["summaries"].columns[2:] == ["hinted", "honest"]  # per condition
    assert "replay_gap/uncommitted" in sc.data["keys"]  # hand values: the test below
    assert set(sc.data["units"]) == {"p0000", "p0001"}  # pairs resampled together
    assert "probe_trace" in report.markdown_path.read_text()


def _run_data(values: dict[str, dict[str, float]], label: str):
    """A probe_selfcommit run whose samples carry the given score values (sample id ->
    values; ids ``p<pair>-<condition>``), its metrics as the run's metric computes them."""
    from cotaudit.logs.data import RunData, ScoreData, ScoredSample, ScorerRun
    from cotaudit.probing.summaries import run_metrics

    samples = [
        ScoredSample(
            sid, ScoreData(dict(v)), {"pair_id": sid.split("-")[0], "condition": sid.split("-")[1]}
        )
        for sid, v in values.items()
    ]
    metrics = run_metrics([(s.score.value, s.sample_metadata) for s in samples], "selfcommit")
    run = RunData(
        path=f"{label}.eval",
        task="t_selfcommit",
        study="probe_selfcommit",
        model=label,
        status="success",
        created=label,
        task_args={},
        task_metadata={
            "probe": {
                "probe": "selfcommit",
                "pair_key": "pair_id",
                "condition_key": "condition",
                "replay_under": "honest",
            }
        },
        epochs=1,
        n_samples=len(samples),
        label=label,
    )
    run.scorers["probe_scorer"] = ScorerRun("probe_scorer", [], metrics, samples)
    return run


def test_probe_section_means_gaps_and_deltas_by_hand(tmp_path):
    from cotaudit.report import probe

    nan = math.nan
    a = _run_data(
        {
            "p1-honest": {"uncommitted": 0.5},
            "p1-hinted": {"uncommitted": 0.1, "uncommitted_replay": 0.4},
            "p2-honest": {"uncommitted": nan},  # no final answer: left out
            "p2-hinted": {"uncommitted": 0.3, "uncommitted_replay": 0.9},
        },
        "a",
    )
    b = _run_data(
        {
            "p1-honest": {"uncommitted": 0.7},
            "p1-hinted": {"uncommitted": 0.2, "uncommitted_replay": 0.4},
            "p2-honest": {"uncommitted": 0.6},
            "p2-hinted": {"uncommitted": 0.5, "uncommitted_replay": 0.5},
        },
        "b",
    )
    sa, sb = (probe.section(r, tmp_path, r.label) for r in (a, b))
    assert sa.consistency.ok and sa.consistency.n_checked == sa.consistency.n_logged
    t = sa.tables["summaries"]
    assert t.row("uncommitted")["mean [95% CI]"] == pytest.approx((0.5 + 0.1 + 0.3) / 3)
    assert t.row("uncommitted")["honest"] == pytest.approx(0.5)
    assert t.row("uncommitted")["hinted"] == pytest.approx(0.2)
    # own - replayed over the replayed (hinted) samples: (0.1 - 0.4 + 0.3 - 0.9) / 2
    assert t.row("replay_gap/uncommitted")["mean [95% CI]"] == pytest.approx(-0.45)
    assert sa.data["units"] == ["p1", "p1", "p2", "p2"]
    comp = probe.compare([sa, sb], tmp_path, "c").tables["comparison"]
    # paired over the shared pairs p1, p2: b's gap (-0.2 + 0) / 2 = -0.1, minus a's -0.45
    assert comp.row("Δ replay_gap/uncommitted vs a")["b"] == pytest.approx(-0.1 + 0.45)
    assert comp.row("uncommitted")["b"] == pytest.approx(0.5)
