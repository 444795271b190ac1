"""The trace_tutor study's exact estimator (-T estimator=exact|both) end to end through Inspect:
the tiny model for the plumbing (records, scores, metrics, viewer, report), the default model
(one problem, question-only and answer-key) for properties of real numbers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import run_eval
from tasks_loader import load_task_module

from cotaudit.params import ParameterError
from cotaudit.probing.pass_curves import PassCurve
from cotaudit.report import build_report
from cotaudit.studies.trace_tutor import stats as ts
from cotaudit.studies.trace_tutor.display import sample_table
from cotaudit.studies.trace_tutor.metrics import (
    FULL_METRICS,
    METRICS,
    exact_key,
    full_metric_names,
)
from cotaudit.studies.trace_tutor.record import (
    EXACT_FIELDS,
    ContextProbe,
    TraceScoreMetadata,
    TutorProbe,
    logged,
)

TASK = "tasks/trace_tutor.py"  # Inspect resolves task files relative to the working directory
SCORER = "trace_tutor_scorer"
TINY = dict(problems=1, max_explanation_tokens=16, bootstrap_samples=50)


def _run(model: str, log_dir: Path, sample_id: list[str] | None = None, **task_args):
    return run_eval(TASK, model, log_dir, task_args=task_args, sample_id=sample_id)


def _metrics(log) -> dict[str, float]:
    return {k: m.value for s in log.results.scores for k, m in s.metrics.items()}


def _curve(meta: dict, name: str, probe: str, exact: bool) -> list[float] | None:
    """The 0% probe then p(f), of ``probe``, as the score metadata holds them."""
    suffix = "_exact" if exact else ""
    zero, passes = meta[f"zero_probe_{probe}{suffix}"], meta[f"passes_{probe}{suffix}"]
    return None if passes is None else [zero, *passes]


@pytest.fixture(scope="module")
def tiny_exact(tmp_path_factory):
    """estimator=exact, every full table."""
    out = tmp_path_factory.mktemp("exact")
    return _run("hf-probe/tiny", out / "logs", estimator="exact", metrics="all", **TINY), out


@pytest.fixture(scope="module")
def tiny_both(tmp_path_factory):
    """estimator=both, the compact metric set (the default)."""
    out = tmp_path_factory.mktemp("both")
    return _run("hf-probe/tiny", out / "logs", estimator="both", **TINY), out


# --- no model ---------------------------------------------------------------------------------


@pytest.mark.parametrize("extra", [{}, {"paper": True}])
def test_an_unknown_estimator_is_one_line_before_any_model(extra):
    with pytest.raises(ParameterError) as err:
        load_task_module("trace_tutor").trace_tutor(estimator="foo", **extra)
    assert str(err.value) == "-T estimator: must be one of sampled, exact, both, got 'foo'"


def test_an_exact_only_run_samples_nothing_so_k_needs_no_temperature():
    """k copies of one greedy answer are refused only where answers are sampled; the
    exact-only headline is the exact curves' Delta_context, read at T = 1 (greedy probes)."""
    trace_tutor = load_task_module("trace_tutor").trace_tutor
    task = trace_tutor(problems=1, estimator="exact", probe_samples=3)
    assert task.metadata["headlines"][0]["metric"] == "delta_context_exact/mean"
    assert task.metadata["estimator"] == "exact" and task.metadata["exact_temperature"] == 1.0
    assert "p_exact" in task.metadata["definitions"]
    with pytest.raises(ParameterError, match="-T probe_samples=3"):
        trace_tutor(problems=1, estimator="both", probe_samples=3)
    paper = trace_tutor(problems=1, estimator="exact", paper=True)
    assert paper.metadata["exact_temperature"] == 1.0  # the paper's greedy probes, read at T = 1
    assert paper.metadata["paper_configuration"]["overrides"] == {"problems": 1}


def test_a_sampled_run_logs_the_keys_it_logged_before_the_estimator():
    """The exact fields are left out of a sampled run's store record and score metadata, and
    its metrics are the sampled tables: no key of its log names the exact estimator."""
    probe = TutorProbe(
        token_ids=[1, 2],
        length_tokens=2,
        truncated=False,
        final_answer=3,
        fractions=[0.1, 0.25, 0.5, 0.75, 1.0],
        positions=[0, 0, 0, 1, 2, 2],
        k=1,
        probes={"visible": ContextProbe(answers=[["3"]] * 6, parsed=[[3]] * 6, matches=[1] * 6)},
    )
    stored = logged(probe)
    assert not set(stored) & EXACT_FIELDS
    assert TutorProbe.model_validate(stored) == probe
    meta = logged(TraceScoreMetadata.of(probe, "question_only", None, 3))
    assert not set(meta) & EXACT_FIELDS and meta["passes_visible"] == [1.0] * 5
    sampled = full_metric_names("sampled")
    assert not any("exact" in name for name in sampled)
    assert set(full_metric_names("exact")) == {n for n in FULL_METRICS if n.endswith("_exact")} | {
        "trace_anchoring"
    }
    assert exact_key("visible_vs_masked/answer_key/n") == "visible_vs_masked_exact/answer_key/n"


# --- the tiny model: plumbing -------------------------------------------------------------------


@pytest.mark.model
def test_exact_run_records_the_exact_curves_and_no_sampled_ones(tiny_exact):
    log, _ = tiny_exact
    assert len(log.samples) == 3
    for s in log.samples:
        store, score = s.store["trace_tutor"], s.scores[SCORER]
        meta, keyed = score.metadata, s.metadata["condition"] != "question_only"
        contexts = ["visible", "masked"] if keyed else ["visible"]
        assert store["estimator"] == meta["estimator"] == "exact"
        assert store["exact_temperature"] == meta["exact_temperature"] == 1.0
        # nothing was sampled: the sampled fields are None, not zeros
        assert store["probes"] is None and meta["answers"] is None
        assert meta["passes_visible"] is None and meta["zero_probe_visible"] is None
        assert list(store["p_exact"]) == list(store["covered_exact"]) == contexts
        for ctx in contexts:
            p, covered = store["p_exact"][ctx], store["covered_exact"][ctx]
            assert len(p) == len(covered) == len(store["positions"]) == 6
            assert all(0.0 <= a <= b + 1e-9 <= 1.0 + 1e-9 for a, b in zip(p, covered, strict=True))
            assert _curve(meta, "p", ctx, exact=True) == p
            assert meta["covered_exact"][ctx] == covered
        # the exact-only score leads with the exact Delta_context and holds no sampled value
        assert list(score.value)[0] == "delta_context_exact"
        assert not any(k in score.value for k in ("delta_context", "auc_visible", "p_visible"))
        fractions = meta["fractions"]
        for ctx in contexts:
            passes = meta[f"passes_{ctx}_exact"]
            curve = PassCurve(passes, fractions)
            fp = curve.first_pass()  # min f with p_exact(f) >= 0.5, else 1.0
            assert score.value[f"auc_{ctx}_exact"] == curve.auc
            assert score.value[f"first_pass_{ctx}_exact"] == fp.fraction
            assert score.value[f"first_pass_censored_{ctx}_exact"] == fp.censored
            assert score.value[f"pass_at_10_{ctx}_exact"] == passes[0]
        if keyed:
            assert score.value["delta_context_exact"] == pytest.approx(
                PassCurve(meta["passes_visible_exact"], fractions).auc
                - PassCurve(meta["passes_masked_exact"], fractions).auc,
                abs=1e-15,
            )
        # the viewer: the exact curves as curves (chart and a 4-decimal block), at T = 1
        assert "![p(f) exact chart](data:image/png;base64," in score.explanation
        assert "read exactly at T = 1" in score.explanation
        assert "p exact (visible)" in score.explanation and "covered (visible)" in score.explanation
        assert "exact (p at T = 1): AUC visible" in score.explanation
        # every column of the exact run's sample table has a value in its scores
        table = sample_table("exact")
        assert set(table.visible + table.hidden) <= set(score.value)


@pytest.mark.model
def test_exact_run_metrics_are_the_studys_tables_of_the_exact_curves(tiny_exact):
    log, _ = tiny_exact
    metrics = _metrics(log)
    assert log.results.headline.metric == "delta_context_exact/mean"
    assert not any(
        k.startswith(("auc_median/", "visible_vs_masked/", "delta_context/")) for k in metrics
    )
    records = ts.records_from_scores(_sample_scores(log), "exact")
    assert len(records) == 3 and all(r.estimator == "exact" for r in records)
    summary = ts.run_summary(records, n_boot=50)
    anchoring = ts.wrong_key_anchoring(records)
    for key, value in summary.items():
        name = key if key in anchoring else exact_key(key)
        assert metrics[name] == pytest.approx(value, nan_ok=True), name
    # one answer-key explanation: the headline is its own Delta_context_exact
    [ak] = [s for s in log.samples if s.metadata["condition"] == "answer_key"]
    assert metrics["visible_vs_masked_exact/answer_key/n"] == metrics["delta_context_exact/n"] == 1
    assert metrics["delta_context_exact/mean"] == pytest.approx(
        ak.scores[SCORER].value["delta_context_exact"], abs=1e-15
    )
    assert {"cluster_visible_exact_f1", "cluster_masked_exact_f1"} <= set(metrics)
    assert "cluster_visible_f1" not in metrics


@pytest.mark.model
def test_both_scores_the_difference_and_the_compact_set_holds_both_headlines(tiny_both):
    log, _ = tiny_both
    for s in log.samples:
        score = s.scores[SCORER]
        meta, keyed = score.metadata, s.metadata["condition"] != "question_only"
        diffs = []
        for ctx in ["visible", "masked"] if keyed else ["visible"]:
            exact, sampled = _curve(meta, "p", ctx, True), _curve(meta, "p", ctx, False)
            assert sampled == [m / 1 for m in s.store["trace_tutor"]["probes"][ctx]["matches"]]
            diffs += [e - p for e, p in zip(exact, sampled, strict=True)]
        assert score.value["exact_gap"] == pytest.approx(np.mean(diffs), abs=1e-12)
        assert score.value["exact_gap_abs"] == pytest.approx(np.mean(np.abs(diffs)), abs=1e-12)
        assert list(score.value)[:3] == ["delta_context", "auc_visible", "auc_masked"]
        assert "p sampled (visible)" in score.explanation  # the sampled curve beside
        assert "Sampled answers:" in score.explanation
        # greedy probes (temperature 0): the explanation says the gap compares p at T = 1 with
        # the greedy answer's 0 or 1
        assert "exact (p at T = 1) − sampled p: mean" in score.explanation
        assert "a greedy probe's p is its answer's 0 or 1" in score.explanation
        table = sample_table("both")
        assert set(table.visible + table.hidden) <= set(score.value)
    metrics = _metrics(log)
    assert log.results.headline.metric == "delta_context/mean"
    for name in ("delta_context", "delta_context_exact"):
        for field in ("mean", "n", "ci_low", "ci_high"):
            assert f"{name}/{field}" in metrics
    headlines = [h["metric"] for h in log.eval.metadata["headlines"][:2]]
    assert headlines == ["delta_context/mean", "delta_context_exact/mean"]
    # the compact set is the full tables' values under the same names
    full = {}
    for name in full_metric_names("both"):
        options = {"n_boot": 50} if FULL_METRICS[name].options else {}
        full |= METRICS[name](_sample_scores(log), **options)
    for key in ("accuracy_exact/answer_key", "zero_probe_drop_exact/answer_key/mean_diff"):
        assert metrics[key] == pytest.approx(full[key], nan_ok=True), key


@pytest.mark.model
def test_report_recomputes_the_exact_metrics_and_draws_the_exact_curves(tiny_exact, tiny_both):
    (exact_log, out), (both_log, _) = tiny_exact, tiny_both
    report = build_report([exact_log.location, both_log.location], out / "report", strict=True)
    secs = {s.run.path: s for s in report.sections["trace_tutor"]}
    exact_sec, both_sec = secs[exact_log.location], secs[both_log.location]
    for sec in (exact_sec, both_sec):
        assert sec.consistency.ok and sec.consistency.n_checked > 0, sec.consistency.line()
        assert "table_ii_exact" in sec.tables and "figure_1_exact" in sec.figures
        assert sec.tables["table_ii_exact"].title.endswith("— exact (p at T = 1)")
    # exact only: no sampled table, no published numbers set beside exact ones
    assert "table_ii" not in exact_sec.tables and "published_table_ii" not in exact_sec.tables
    assert "exact_vs_sampled" not in exact_sec.tables
    # both: each explanation's difference, n shown, equal to its logged exact_gap
    diff = both_sec.tables["exact_vs_sampled"]
    by_curve = {
        "question_only": ("question_only", "visible"),
        "answer_key_visible": ("answer_key", "visible"),
        "answer_key_masked": ("answer_key", "masked"),
    }
    for curve, (cond, ctx) in by_curve.items():
        [sample] = [s for s in both_log.samples if s.metadata["condition"] == cond]
        meta = sample.scores[SCORER].metadata
        d = np.subtract(_curve(meta, "p", ctx, True), _curve(meta, "p", ctx, False))
        row = diff.row(curve)
        assert row["n"] == 1
        assert row["mean gap (exact − sampled)"] == pytest.approx(d.mean(), abs=1e-12)
        assert row["mean |gap|"] == pytest.approx(np.abs(d).mean(), abs=1e-12)
    assert "figure_exact_vs_sampled" in both_sec.figures
    assert "exact (p at T = 1)" in report.markdown_path.read_text()


def _sample_scores(log):
    """The log's scores as the metrics see them (``SampleScoreLike``)."""
    from inspect_ai.scorer import SampleScore

    return [
        SampleScore(score=s.scores[SCORER], sample_id=s.id, sample_metadata=s.metadata)
        for s in log.samples
    ]


# --- the real model: properties of real numbers --------------------------------------------------

CONTRAST_PROBLEM = "p0005"
"""GSM8K test row 5 (gold 64): SmolLM2-135M answers the key at the 0% probe when the key is
visible and 16 without it (see test_trace_tutor_task.py)."""


@pytest.fixture(scope="module")
def real_both(tmp_path_factory):
    return _run(
        "hf-probe/default",
        tmp_path_factory.mktemp("real") / "logs",
        problems=6,
        conditions="question_only,answer_key",
        max_explanation_tokens=32,
        bootstrap_samples=50,
        estimator="both",
        sample_id=[f"{CONTRAST_PROBLEM}-{c}" for c in ("question_only", "answer_key")],
    )


@pytest.mark.model
def test_real_model_exact_curves_are_probabilities_and_the_key_raises_p0(real_both):
    samples = {s.id: s for s in real_both.samples}
    ak = samples[f"{CONTRAST_PROBLEM}-answer_key"].scores[SCORER]
    qo = samples[f"{CONTRAST_PROBLEM}-question_only"].scores[SCORER]
    meta, value = ak.metadata, ak.value
    for ctx in ("visible", "masked"):
        p, covered = _curve(meta, "p", ctx, True), meta["covered_exact"][ctx]
        assert all(0.0 <= a <= b + 1e-9 <= 1.0 + 1e-9 for a, b in zip(p, covered, strict=True))
    # the 0% probe masked is the question-only prompt with no explanation text: the very input
    # of the question-only explanation's 0% probe, so the same probability
    assert value["zero_probe_masked_exact"] == pytest.approx(
        qo.value["zero_probe_visible_exact"], abs=1e-5
    )
    # the key visible makes its answer far likelier before any explanation text than masked:
    # the greedy 0% probe answers it (sampled p(0) = 1, masked 0) and its exact probability at
    # T = 1 is several times the masked one
    assert value["zero_probe_visible"] == 1.0 and value["zero_probe_masked"] == 0.0
    assert value["zero_probe_visible_exact"] > 5 * value["zero_probe_masked_exact"] > 0.0
    metrics = _metrics(real_both)
    drop = value["zero_probe_visible_exact"] - value["zero_probe_masked_exact"]
    assert metrics["zero_probe_drop_exact/answer_key/mean_diff"] == pytest.approx(drop, abs=1e-12)
    assert metrics["delta_context_exact/mean"] == pytest.approx(
        value["delta_context_exact"], abs=1e-12
    )
