"""Contrastive cluster F1: known-answer feature sets, the threshold baseline, the
contrast, and the Inspect metric on hand-built ``SampleScore`` lists."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest
from helpers import run_eval
from hypothesis import given, settings
from hypothesis import strategies as st
from inspect_ai import Task
from inspect_ai._util.registry import registry_params
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from cotaudit.cluster.f1 import cluster_f1, metric_keys
from cotaudit.scorers.cluster_f1 import (
    ClusterHypothesis,
    cluster_contrast_from_scores,
    cluster_f1_metric,
    contrastive_cluster_f1,
)

N_BOOT = 100


def _separated(n: int = 12) -> tuple[np.ndarray, list[str]]:
    """Positive class around (10, -10), negative around (0, 0): perfectly separable."""
    rng = np.random.default_rng(3)
    pos = rng.normal([10.0, -10.0], 1.0, size=(n, 2))
    neg = rng.normal([0.0, 0.0], 1.0, size=(n, 2))
    return np.vstack([pos, neg]), ["hint"] * n + ["honest"] * n


def test_perfect_separation_gives_f1_one() -> None:
    X, y = _separated()
    r = cluster_f1(X, y, "hint", [1, -1], n_boot=N_BOOT)
    m = r.metrics()
    assert (m["cluster_f1"], m["cluster_precision"], m["cluster_recall"]) == (1.0, 1.0, 1.0)
    assert (m["cluster_f1_ci_low"], m["cluster_f1_ci_high"]) == (1.0, 1.0)
    assert m["cluster_f1_optimistic"] == 1.0
    assert m["cluster_ari"] == pytest.approx(1.0)
    assert m["cluster_f1_chance"] == pytest.approx(0.5)
    assert (m["cluster_n_positive"], m["cluster_n_negative"]) == (12.0, 12.0)
    assert r.degenerate is None and r.n_boot_valid == N_BOOT


def test_swapped_direction_is_not_silently_flipped() -> None:
    X, y = _separated()
    m = cluster_f1(X, y, "hint", [-1, 1], n_boot=N_BOOT).metrics()
    assert (m["cluster_f1"], m["cluster_precision"], m["cluster_recall"]) == (0.0, 0.0, 0.0)
    assert m["cluster_f1_ci_high"] == 0.0
    assert m["cluster_f1_optimistic"] == 1.0
    assert m["cluster_ari"] == pytest.approx(1.0)


def test_identical_classes_give_chance_f1_inside_ci() -> None:
    # every feature row occurs once in each class: each cluster is exactly half positive
    rows = np.random.default_rng(5).normal(size=(15, 2))
    X = np.vstack([rows, rows])
    y = ["hint"] * 15 + ["honest"] * 15
    r = cluster_f1(X, y, "hint", [1, 1], n_boot=N_BOOT)
    assert r.precision == 0.5
    assert r.f1 == pytest.approx(r.f1_chance)
    assert r.f1_ci_low <= r.f1_chance <= r.f1_ci_high
    assert abs(r.ari) < 0.1


def test_same_distribution_ci_includes_chance() -> None:
    X = np.random.default_rng(11).normal(size=(40, 3))
    y = ["hint"] * 20 + ["honest"] * 20
    r = cluster_f1(X, y, "hint", [1, 1, -1], n_boot=N_BOOT)
    assert r.f1_ci_low <= r.f1_chance <= r.f1_ci_high
    assert r.f1_ci_low <= 0.5 <= r.f1_ci_high


def test_deterministic_across_runs() -> None:
    X = np.random.default_rng(2).normal(size=(30, 2)) + np.repeat([[1.0, 0.0], [0.0, 0.0]], 15, 0)
    y = ["hint"] * 15 + ["honest"] * 15
    a = cluster_f1(X, y, "hint", [1, 1], n_boot=N_BOOT)
    b = cluster_f1(X, y, "hint", [1, 1], n_boot=N_BOOT)
    assert json.dumps(a.contrast()) == json.dumps(b.contrast())
    assert a.f1_ci_low < a.f1_ci_high  # a real interval, reproduced exactly
    assert a.in_positive_cluster is not None and b.in_positive_cluster is not None
    assert np.array_equal(a.in_positive_cluster, b.in_positive_cluster)


def test_threshold_baseline_hand_example() -> None:
    # positive x = 3, 1, 5; negative x = 0, 2, 1; honest mean 1.0; flag x > 1:
    # TP = {3, 5}, FP = {2}, FN = {1}  ->  P = R = F1 = 2/3
    x = [3.0, 1.0, 5.0, 0.0, 2.0, 1.0]
    y = ["p", "p", "p", "n", "n", "n"]
    r = cluster_f1(x, y, "p", [1], n_boot=0)
    assert r.threshold == 1.0
    assert r.threshold_precision == pytest.approx(2 / 3)
    assert r.threshold_recall == pytest.approx(2 / 3)
    assert r.threshold_f1 == pytest.approx(2 / 3)
    # declared "positive is smaller": flag -x > -1, i.e. x < 1: only the negative 0.0
    r = cluster_f1(x, y, "p", [-1], n_boot=0)
    assert (r.threshold_precision, r.threshold_recall, r.threshold_f1) == (0.0, 0.0, 0.0)
    # n_boot = 0: no interval
    assert math.isnan(r.f1_ci_low) and math.isnan(r.f1_ci_high)


def test_threshold_uses_declared_primary_feature() -> None:
    # feature "noise" separates nothing; feature "signal" separates perfectly
    X = [[0.0, 9.0], [5.0, 8.0], [0.0, 1.0], [5.0, 1.0]]
    y = ["p", "p", "n", "n"]
    names = ["noise", "signal"]
    on_signal = cluster_f1(X, y, "p", [1, 1], feature_names=names, primary="signal", n_boot=0)
    on_noise = cluster_f1(X, y, "p", [1, 1], feature_names=names, n_boot=0)
    assert on_signal.threshold_f1 == 1.0
    assert on_noise.primary == "noise" and on_noise.threshold_f1 == pytest.approx(0.5)


def test_degenerate_inputs_give_nan_without_raising() -> None:
    one_positive = cluster_f1([[1.0], [2.0], [3.0]], ["p", "n", "n"], "p", [1])
    constant = cluster_f1([[1.0, 4.0]] * 6, ["p"] * 3 + ["n"] * 3, "p", [1, -1])
    empty = cluster_f1(np.empty((0, 2)), [], "p", [1, 1])
    for r in (one_positive, constant, empty):
        assert r.degenerate is not None
        counts = ("n_positive", "n_negative", "n_units")
        values = [v for k, v in r.metrics().items() if not k.endswith(counts)]
        assert all(math.isnan(v) for v in values)
        json.dumps(r.contrast(), allow_nan=False)
    assert one_positive.metrics()["cluster_n_positive"] == 1.0


def test_constant_feature_beside_a_varying_one() -> None:
    X = np.column_stack([[5.0] * 8, [9, 10, 11, 10, 0, 1, -1, 0]])
    r = cluster_f1(X, ["p"] * 4 + ["n"] * 4, "p", [1, 1], feature_names=["flat", "x"], n_boot=20)
    assert r.f1 == 1.0
    ranking = r.contrast()["feature_ranking"]
    assert [f["feature"] for f in ranking] == ["x", "flat"]
    assert ranking[1]["std_diff"] == 0.0


def test_contrast_nearest_samples_and_feature_ranking() -> None:
    # class means (10.05, 0) and (0.075, 0); feature "b" does not differ between them
    X = [[10.0, 0], [10.2, 0], [10.5, 1], [9.5, -1], [0.0, 0], [0.3, 0], [-0.5, 1], [0.5, -1]]
    ids = ["p0", "p1", "p2", "p3", "n0", "n1", "n2", "n3"]
    y = ["p"] * 4 + ["n"] * 4
    r = cluster_f1(X, y, "p", [1, 1], feature_names=["a", "b"], sample_ids=ids, n_boot=20)
    c = r.contrast(n_nearest=2)
    json.dumps(c, allow_nan=False)
    assert c["clusters"]["positive"]["nearest_ids"] == ["p0", "p1"]
    assert c["clusters"]["negative"]["nearest_ids"] == ["n0", "n1"]
    assert c["clusters"]["positive"]["size"] == 4
    assert c["clusters"]["positive"]["n_positive_class"] == 4
    assert c["clusters"]["positive"]["feature_means"]["a"] == pytest.approx(10.05)
    assert [f["feature"] for f in c["feature_ranking"]] == ["a", "b"]
    assert c["feature_ranking"][1]["std_diff"] == pytest.approx(0.0, abs=1e-12)
    assert c["feature_ranking"][0]["agrees_with_direction"] is True
    assert c["metrics"]["cluster_f1"] == 1.0


def test_invalid_configuration_raises() -> None:
    X, y = _separated(3)
    with pytest.raises(ValueError, match="directions"):
        cluster_f1(X, y, "hint", [1, 0])
    with pytest.raises(ValueError, match="primary"):
        cluster_f1(X, y, "hint", [1, 1], primary="nope")
    with pytest.raises(ValueError, match="finite"):
        cluster_f1([[math.nan]] * 4, ["p", "p", "n", "n"], "p", [1])
    with pytest.raises(ValueError, match="prefix"):
        metric_keys("bad prefix")


def test_metric_keys() -> None:
    assert metric_keys()[:3] == ["cluster_f1", "cluster_precision", "cluster_recall"]
    assert "threshold_f1" in metric_keys() and "cluster_ari" in metric_keys()
    assert {"masked_f1", "masked_threshold_f1"} <= set(metric_keys("masked"))


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.tuples(st.floats(-5, 5), st.floats(-5, 5), st.booleans()), min_size=4, max_size=20)
)
def test_rates_are_bounded(rows: list[tuple[float, float, bool]]) -> None:
    X = [[a, b] for a, b, _ in rows]
    y = ["p" if pos else "n" for _, _, pos in rows]
    r = cluster_f1(X, y, "p", [1, -1], n_boot=0)
    if not math.isnan(r.f1):
        assert 0.0 <= r.f1 <= r.f1_optimistic <= 1.0


# --- the Inspect metric ---------------------------------------------------------------------

FEATURES = ["a", "b"]
DIRECTIONS = {"a": 1, "b": -1}
HYPOTHESIS: dict[str, Any] = dict(
    features=FEATURES,
    class_key="condition",
    positive_class="hinted",
    negative_class="honest",
    directions=DIRECTIONS,
)
"""The metric's hypothesis in these tests: ``a`` higher and ``b`` lower in hinted than honest."""


def _sample_scores() -> list[SampleScore]:
    X, y = _separated(6)
    scores = []
    for i, ((a, b), cls) in enumerate(zip(X, y, strict=True)):
        cond = "hinted" if cls == "hint" else "honest"
        # half the samples carry "b" in Score.metadata instead of Score.value
        value = {"a": float(a), "b": float(b)} if i % 2 else {"a": float(a)}
        metadata = None if i % 2 else {"b": float(b)}
        scores.append(
            SampleScore(
                score=Score(value=value, metadata=metadata),
                sample_id=f"s{i}",
                sample_metadata={"condition": cond},
            )
        )
    # skipped: another class, no class, a NaN feature, a missing feature
    skipped = [
        ({"a": 1.0, "b": 1.0}, {"condition": "other"}),
        ({"a": 1.0, "b": 1.0}, {}),
        ({"a": math.nan, "b": 1.0}, {"condition": "honest"}),
        ({"a": 1.0}, {"condition": "hinted"}),
    ]
    return scores + [
        SampleScore(score=Score(value=value), sample_metadata=meta) for value, meta in skipped
    ]


def _metric(**kwargs: Any) -> Metric:
    return contrastive_cluster_f1(**HYPOTHESIS, n_boot=N_BOOT, **kwargs)


def _values(metric: Metric, scores: list[SampleScore]) -> dict[str, float]:
    """Call ``metric`` on ``scores`` (the ``Metric`` type also admits a deprecated signature)."""
    return cast(Callable[[list[SampleScore]], dict[str, float]], metric)(scores)


def test_metric_on_sample_scores_matches_core() -> None:
    got = _values(_metric(), _sample_scores())
    X, y = _separated(6)
    want = cluster_f1(X, y, "hint", [1, -1], n_boot=N_BOOT).metrics()
    assert got == want
    assert got["cluster_f1"] == 1.0 and got["cluster_n_positive"] == 6.0


def test_metric_empty_list_gives_nan() -> None:
    got = _values(_metric(prefix="visible"), [])
    assert list(got) == metric_keys("visible")
    assert math.isnan(got["visible_f1"]) and math.isnan(got["visible_threshold_f1"])


def test_metric_rejects_bad_configuration() -> None:
    with pytest.raises(ValueError, match="directions"):
        contrastive_cluster_f1(**_given("p", "n"), directions={"a": 2})
    with pytest.raises(ValueError, match="primary"):
        contrastive_cluster_f1(**_given("p", "n"), directions={"a": 1}, primary="b")
    with pytest.raises(ValueError, match="both"):
        contrastive_cluster_f1(**_given("p", "p"), directions={"a": 1})
    with pytest.raises(ValueError, match="prefix"):
        contrastive_cluster_f1(**_given("p", "n"), directions={"a": 1}, prefix="a b")
    with pytest.raises(TypeError, match="missing options directions"):
        contrastive_cluster_f1(**_given("p", "n"))


def _given(positive: str, negative: str) -> dict[str, Any]:
    """Feature ``a``, class key ``c``, the two classes."""
    return dict(features=["a"], class_key="c", positive_class=positive, negative_class=negative)


def test_contrast_from_scores() -> None:
    hypothesis = ClusterHypothesis(FEATURES, "condition", "hinted", "honest", DIRECTIONS)
    c = cluster_contrast_from_scores(_sample_scores(), hypothesis, n_boot=0)
    json.dumps(c, allow_nan=False)
    assert c["n_skipped"] == 4 and c["negative_class"] == "honest"
    assert set(c["clusters"]["positive"]["nearest_ids"]) <= {f"s{i}" for i in range(6)}
    assert c["metrics"]["cluster_f1"] == 1.0


def test_metric_in_a_real_eval(tmp_path: Path) -> None:
    @solver
    def passthrough() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            return state

        return solve

    @scorer(metrics=[_metric(primary="b")])
    def features() -> Scorer:
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value={f: state.metadata[f] for f in FEATURES})

        return score

    X, y = _separated(4)
    samples = [
        Sample(
            input="q",
            id=i,
            metadata={"condition": "hinted" if c == "hint" else "honest", "a": a, "b": b},
        )
        for i, ((a, b), c) in enumerate(zip(X.tolist(), y, strict=True))
    ]
    task = Task(dataset=samples, solver=passthrough(), scorer=features())
    log = run_eval(task, "mockllm/model", tmp_path)
    assert log.results is not None
    metrics = log.results.scores[0].metrics
    assert metrics["cluster_f1"].value == 1.0
    assert metrics["threshold_f1"].params["primary"] == "b"


# --- unit-level interval --------------------------------------------------------------------


def _two_problem_units(m: int = 5) -> tuple[np.ndarray, list[str], list[str]]:
    """Two units of m positive and m negative samples, one feature (direction +1).

    Unit A separates as declared (positive near 10, negative near 0): alone, F1 = 1. Unit B is
    reversed (positive near 0, negative near 10): alone, the high cluster is all negative,
    F1 = 0. Pooled: the high cluster holds A's m positives and B's m negatives, so
    TP = FP = FN = m and F1 = 2m / 4m = 0.5.
    """
    jitter = 0.1 * np.arange(m)
    x = np.concatenate([10 + jitter, jitter, jitter, 10 + jitter])
    labels = (["p"] * m + ["n"] * m) * 2
    units = ["A"] * (2 * m) + ["B"] * (2 * m)
    return x, labels, units


def test_unit_interval_by_hand_and_wider_than_row_level() -> None:
    x, labels, units = _two_problem_units()
    r = cluster_f1(x, labels, "p", [1], units=units, unit_name="pair_id", n_boot=400, seed=0)
    # resamples (A,A): F1 1; (A,B), (B,A): 0.5; (B,B): 0, a quarter each at the extremes
    assert r.f1 == 0.5 and r.n_units == 2 and r.n_collapsed == 0
    assert (r.f1_ci_low, r.f1_ci_high) == (0.0, 1.0)
    assert r.contrast()["bootstrap"]["unit"] == "pair_id"
    # row-level (every sample its own unit, drawn within its class): TP ~ Bin(10, 1/2) and
    # FP ~ Bin(10, 1/2), F1 = 2TP / (TP + FP + 10) rarely reaches 0 or 1
    rows = cluster_f1(x, labels, "p", [1], n_boot=400, seed=0)
    assert rows.n_units == 20 and rows.contrast()["bootstrap"]["unit"] == "sample"
    assert 0.0 < rows.f1_ci_low and rows.f1_ci_high < 1.0


def test_one_unit_per_sample_is_the_row_level_interval() -> None:
    X, y = _separated(8)
    X = X + np.random.default_rng(9).normal(0, 8, X.shape)  # overlapping: a real interval
    rows = cluster_f1(X, y, "hint", [1, -1], n_boot=60, seed=4)
    units = cluster_f1(X, y, "hint", [1, -1], units=[f"u{i}" for i in range(16)], n_boot=60, seed=4)
    assert rows.f1_ci_low < rows.f1_ci_high
    assert (units.f1_ci_low, units.f1_ci_high) == (rows.f1_ci_low, rows.f1_ci_high)


def test_identical_rows_of_one_unit_are_collapsed() -> None:
    x, labels, units = _two_problem_units(3)
    # unit A's first positive sample scored twice (e.g. one report under two factor levels), and
    # a row equal to it in unit B (another problem that happens to agree: kept)
    dup_x = np.concatenate([x, [10.0, 10.0]])
    dup = cluster_f1(
        dup_x,
        labels + ["p", "p"],
        "p",
        [1],
        units=units + ["A", "B"],
        sample_ids=list(range(14)),
        n_boot=0,
    )
    base = cluster_f1(
        np.concatenate([x, [10.0]]), labels + ["p"], "p", [1], units=units + ["B"], n_boot=0
    )
    assert dup.n_collapsed == 1 and dup.n_positive == 7 and 12 not in dup.sample_ids
    assert dup.metrics() == base.metrics()


def _paired_scores() -> list[SampleScore]:
    X, y = _separated(6)
    return [
        SampleScore(
            score=Score(value={"a": float(a), "b": float(b)}),
            sample_id=f"s{i}",
            sample_metadata={
                "condition": "hinted" if c == "hint" else "honest",
                "pair_id": f"p{i % 6}",
            },
        )
        for i, ((a, b), c) in enumerate(zip(X, y, strict=True))
    ]


def test_metric_unit_key_resamples_pairs() -> None:
    got = _values(_metric(unit_key="pair_id"), _paired_scores())
    assert got["cluster_n_units"] == 6.0 and got["cluster_n_positive"] == 6.0
    X, y = _separated(6)
    want = cluster_f1(
        X,
        y,
        "hint",
        [1, -1],
        units=[f"p{i % 6}" for i in range(12)],
        unit_name="pair_id",
        n_boot=N_BOOT,
    ).metrics()
    assert got == want
    no_pair = _paired_scores()
    no_pair[3] = SampleScore(
        score=no_pair[3].score, sample_id="s3", sample_metadata={"condition": "hinted"}
    )
    with pytest.raises(ValueError, match="sample 's3' has no sample_metadata field 'pair_id'"):
        _values(_metric(unit_key="pair_id"), no_pair)


def test_hypothesis_of_a_metrics_options() -> None:
    options = dict(HYPOTHESIS, prefix="visible", n_boot=7)
    h = ClusterHypothesis.of(options)
    assert h.features == tuple(FEATURES) and h.directions == DIRECTIONS
    # options a log leaves out take their defaults; the others are not the hypothesis's
    assert (h.primary, h.unit_key, h.skip_whole_unit) == (None, None, False)
    assert h.with_unit("pair_id").unit_key == "pair_id" and h.unit_key is None
    # back to the metric's options: what was declared, defaults left out
    assert h.options() == {k: v for k, v in options.items() if k not in ("prefix", "n_boot")}
    metric = cluster_f1_metric(h.with_unit("pair_id"), prefix="visible")
    assert registry_params(metric) == h.options() | {"unit_key": "pair_id", "prefix": "visible"}


def test_the_report_recomputes_the_logged_metric() -> None:
    from cotaudit.logs.data import MetricDef
    from cotaudit.report.cluster import recompute

    options = dict(HYPOTHESIS, prefix="visible", n_boot=N_BOOT)
    logged = _values(contrastive_cluster_f1(**options), _sample_scores())
    defs = [MetricDef("contrastive_cluster_f1", options), MetricDef("accuracy", {})]
    out, contrasts = recompute(_sample_scores(), defs)
    assert out == logged and out["visible_f1"] == 1.0
    assert [o for o, _ in contrasts] == [options]
    assert contrasts[0][1]["n_skipped"] == 4
