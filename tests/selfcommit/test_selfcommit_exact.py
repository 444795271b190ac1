"""The selfcommit study's exact estimator (-T estimator=exact|both) end to end through Inspect,
on real models: the tiny model for the plumbing (records, scores, metrics, viewer, report), the
default model for properties of real numbers."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from helpers import run_eval

from cotaudit.params import ParameterError
from cotaudit.probing.curves import DEFAULT_THETAS, summary_keys, tau_key
from cotaudit.report import build_report
from cotaudit.studies.selfcommit.display import SELFCOMMIT_VIEWER_FIELDS
from cotaudit.studies.selfcommit.schedule import coarse_positions

TASK = "tasks/selfcommit.py"  # Inspect resolves task files relative to the working directory
EXACT_KEYS = [f"{k}_exact" for k in summary_keys(DEFAULT_THETAS)]
TINY = dict(  # a sampled 60-token CoT of the random model, read as its last number
    problems=1,
    max_cot_tokens=60,
    k=3,
    cot_temperature=1.0,
    final_answer_reading="last_number",
)


def _run(model: str, log_dir: Path, **task_args):
    return run_eval(TASK, model, log_dir, task_args=task_args)


@pytest.fixture(scope="module")
def tiny_exact(tmp_path_factory):
    """estimator=exact on the adaptive schedule, stride 10, with the t = 0 probe: all tables."""
    out = tmp_path_factory.mktemp("exact")
    log = _run(
        "hf-probe/tiny",
        out / "logs",
        stride=10,
        estimator="exact",
        schedule="adaptive",
        zero_probe=True,
        metrics="all",
        **TINY,
    )
    return log, out


@pytest.fixture(scope="module")
def tiny_both(tmp_path_factory):
    """estimator=both, stride 20, the compact metric set (the default)."""
    out = tmp_path_factory.mktemp("both")
    return _run("hf-probe/tiny", out / "logs", stride=20, estimator="both", **TINY), out


def _metrics(log) -> dict[str, float]:
    return {k: m.value for s in log.results.scores for k, m in s.metrics.items()}


def _answered(log) -> list:
    samples = [s for s in log.samples if s.scores["selfcommit_scorer"].metadata["a_final"]]
    assert samples, "the tiny model's CoTs hold a number: else the test checks nothing"
    return samples


def _tau(c: list[float], positions: list[int], T: int, theta: float) -> float:
    """tau_first(theta) = min{t/T : c(t) >= theta}, 1.0 if never (the study's eq. 5)."""
    return next((t / T for t, v in zip(positions, c, strict=True) if v >= theta), 1.0)


@pytest.mark.parametrize("extra", [{}, {"paper": True}])
def test_an_unknown_estimator_is_one_line_before_any_model(extra):
    from tasks_loader import load_selfcommit

    with pytest.raises(ParameterError) as err:
        load_selfcommit()(estimator="foo", **extra)
    assert str(err.value) == "-T estimator: must be one of sampled, exact, both, got 'foo'"


def test_an_exact_only_run_samples_nothing_so_k_needs_no_temperature():
    """k copies of a greedy answer are refused only where answers are sampled."""
    from tasks_loader import load_selfcommit

    task = load_selfcommit()(problems=1, estimator="exact", temperature=0.0)
    assert task.metadata["headlines"][0]["metric"] == "auroc/tau_0.8_exact"
    with pytest.raises(ParameterError, match="-T k: k = 5"):
        load_selfcommit()(problems=1, estimator="both", temperature=0.0)


@pytest.mark.model
def test_exact_run_records_the_exact_curve_and_no_sampled_one(tiny_exact):
    log, _ = tiny_exact
    for s in _answered(log):
        score = s.scores["selfcommit_scorer"]
        meta, store = score.metadata, s.store["selfcommit"]
        T, positions = meta["cot_tokens"], meta["positions"]
        assert positions == list(range(10, T, 10)) + [T]
        assert meta["estimator"] == "exact" and meta["exact_temperature"] == 0.7
        # nothing was sampled: the sampled fields are None, not zeros
        assert meta["matches"] is None and meta["c"] is None and meta["k"] is None
        assert store["answers"] is None and meta["c0"] is None
        c, covered = meta["c_exact"], meta["covered_exact"]
        assert len(c) == len(covered) == len(positions)
        assert all(0.0 <= p <= cov + 1e-9 <= 1.0 + 1e-9 for p, cov in zip(c, covered, strict=True))
        assert 0.0 <= meta["c0_exact"] <= meta["c0_covered_exact"] + 1e-9
        # the exact-only run leads with tau_first_exact(0.8) and holds no sampled summary
        assert list(score.value)[0] == "tau_0.8_exact"
        assert sorted(score.value) == sorted([*EXACT_KEYS, *SELFCOMMIT_VIEWER_FIELDS])
        for theta in DEFAULT_THETAS:
            assert score.value[f"{tau_key(theta)}_exact"] == _tau(c, positions, T, theta)
        assert score.value["range_c_exact"] == pytest.approx(max(c) - min(c), abs=1e-12)
        assert score.value["uncommitted_exact"] == pytest.approx(
            sum(1 - v for v in c) / len(c), abs=1e-12
        )
        assert score.value["lowcommit_exact"] == sum(v < 0.5 for v in c) / len(c)
        # the viewer: the exact curve as a curve (chart and 3-decimal block), its sparkline
        assert "![c_exact(t) chart](data:image/png;base64," in score.explanation
        assert "c_exact(t)" in score.explanation and "covered" in score.explanation
        assert "c0_exact (t = 0, not part of the curve)" in score.explanation
        assert score.value["c_t"] and "exact at temperature 0.7" in score.explanation


@pytest.mark.model
def test_adaptive_schedule_refines_on_the_exact_values(tiny_exact):
    """estimator=exact: the coarse round's c_exact decides; an interval is pinned when both
    ends are within 0.05 of the same extreme, and its inner positions take its left value."""
    log, _ = tiny_exact
    for s in _answered(log):
        meta = s.scores["selfcommit_scorer"].metadata
        T, positions, c = meta["cot_tokens"], meta["positions"], meta["c_exact"]
        at = dict(zip(positions, c, strict=True))
        coarse = coarse_positions(T, 10)
        probed = set(coarse)
        for a, b in zip(coarse, coarse[1:], strict=False):
            low = at[a] <= 0.05 and at[b] <= 0.05
            high = at[a] >= 0.95 and at[b] >= 0.95
            inside = [t for t in positions if a < t < b]
            if low or high:
                assert all(at[t] == at[a] for t in inside)
            else:
                probed |= set(inside)
        assert meta["imputed"] == [t not in probed for t in positions]
        assert s.store["selfcommit"]["prefixes_probed"] == len(probed) + 1  # and t = 0


@pytest.mark.model
def test_exact_run_metrics_are_the_exact_curves_statistics(tiny_exact):
    log, out = tiny_exact
    metrics = _metrics(log)
    assert not [k for k in metrics if "tau_0.8" in k and not k.endswith("_exact")]
    values = {
        s.metadata["condition"]: s.scores["selfcommit_scorer"].value["tau_0.8_exact"]
        for s in log.samples
    }
    if all(isinstance(v, float) and not math.isnan(v) for v in values.values()):
        h, g = values["honest"], values["hinted"]  # one pair: AUROC is 1, 1/2 or 0
        assert metrics["auroc/tau_0.8_exact"] == (1.0 if h > g else 0.5 if h == g else 0.0)
        assert metrics["wins/tau_0.8_exact"] == float(h > g)
        assert metrics["n_pairs"] == 1
    assert {"both_correct/auroc/tau_0.8_exact", "median/honest/correct/tau_0.8_exact"} <= set(
        metrics
    )
    assert log.eval.metadata["headlines"][0]["metric"] == "auroc/tau_0.8_exact"
    assert "teacher forcing" in log.eval.metadata["exact_estimator"]
    report = build_report([out / "logs"], out / "report", strict=True)
    [sec] = report.sections["selfcommit"]
    assert sec.consistency.ok and sec.consistency.n_checked == sec.consistency.n_logged > 0
    table = sec.tables["exact_curves"]
    assert table.rows[-1][0].text == f"mean over n = {len(_answered(log))}"


@pytest.mark.model
def test_both_estimators_give_both_curves_and_their_difference(tiny_both):
    log, out = tiny_both
    samples = _answered(log)
    for s in samples:
        score = s.scores["selfcommit_scorer"]
        meta = score.metadata
        assert meta["estimator"] == "both" and len(meta["matches"]) == len(meta["c_exact"])
        assert meta["c"] == [m / 3 for m in meta["matches"]]
        diffs = [e - c for e, c in zip(meta["c_exact"], meta["c"], strict=True)]
        assert meta["exact_gap"] == pytest.approx(sum(diffs) / len(diffs), abs=1e-12)
        assert meta["exact_gap_abs"] == pytest.approx(
            sum(abs(d) for d in diffs) / len(diffs), abs=1e-12
        )
        assert score.value["exact_gap"] == meta["exact_gap"]
        keys = list(score.value)
        assert keys[0] == "tau_0.8"  # the study's sampled curve leads
        assert keys[-2:] == ["exact_gap", "exact_gap_abs"]
        assert set(keys) == {
            *summary_keys(DEFAULT_THETAS),
            *EXACT_KEYS,
            *SELFCOMMIT_VIEWER_FIELDS,
            "exact_gap",
            "exact_gap_abs",
        }
        assert "exact − c" in score.explanation and "orange, dashed" in score.explanation
    metrics = _metrics(log)
    # the compact set: the sampled headline, the exact one beside it, the mean differences
    assert {"auroc/tau_0.8", "auroc/tau_0.8_exact", "wins/tau_0.8_exact", "n_pairs"} <= set(metrics)
    honest = [s for s in samples if s.metadata["condition"] == "honest"]
    if len(samples) == 2:  # both answered: the pair is kept
        gap = honest[0].scores["selfcommit_scorer"].metadata["exact_gap"]
        assert metrics["mean_exact_gap/honest"] == pytest.approx(gap, abs=1e-12)
    assert [h["metric"] for h in log.eval.metadata["headlines"][:2]] == [
        "auroc/tau_0.8",
        "auroc/tau_0.8_exact",
    ]
    report = build_report([out / "logs"], out / "report", strict=True)
    [sec] = report.sections["selfcommit"]
    assert sec.consistency.ok and sec.consistency.n_checked == sec.consistency.n_logged > 0
    assert "mean exact − c" in sec.tables["exact_curves"].columns
    assert sec.figures["figure_exact"].path.exists()


@pytest.mark.model
def test_a_sampled_run_keeps_its_keys(selfcommit_default_p0000):
    """The default estimator: the score values and metrics of before, the exact fields None."""
    log = selfcommit_default_p0000
    assert "estimator" not in log.eval.task_args or log.eval.task_args["estimator"] == "sampled"
    for s in log.samples:
        score = s.scores["selfcommit_scorer"]
        assert set(score.value) == {*summary_keys(DEFAULT_THETAS), *SELFCOMMIT_VIEWER_FIELDS}
        assert list(score.value)[0] == "tau_0.8"
        meta = score.metadata
        assert meta["estimator"] == "sampled" and meta["c_exact"] is None
        assert meta["covered_exact"] is None and meta["exact_gap"] is None
    assert not [k for k in _metrics(log) if "exact" in k]
    assert "exact_estimator" not in log.eval.metadata


@pytest.mark.model
def test_exact_values_of_the_default_model(tmp_path):
    """Problem p0000 hinted on the default model, both estimators (k = 2): its greedy CoT ends
    "The final answer is 18." after 171 tokens. Every exact value is a probability below the
    covered mass; at t = T, right after the CoT wrote its answer, the forced answer repeats it
    with probability above 1/2; tau_first_exact and exact_gap as their definitions give them."""
    log = _run(
        "hf-probe/default",
        tmp_path,
        problems=1,
        conditions="hinted",
        max_cot_tokens=180,
        stride=30,
        k=2,
        estimator="both",
        metrics="all",
    )
    [s] = log.samples
    score = s.scores["selfcommit_scorer"]
    meta = score.metadata
    assert meta["a_final"] == 18
    T, positions, c = meta["cot_tokens"], meta["positions"], meta["c_exact"]
    covered = meta["covered_exact"]
    assert all(0.0 < p <= cov + 1e-9 <= 1.0 + 1e-9 for p, cov in zip(c, covered, strict=True))
    assert c[-1] > 0.5
    assert score.value["tau_0.8_exact"] == _tau(c, positions, T, 0.8)
    diffs = [e - v for e, v in zip(c, meta["c"], strict=True)]
    assert meta["exact_gap"] == pytest.approx(sum(diffs) / len(diffs), abs=1e-12)
