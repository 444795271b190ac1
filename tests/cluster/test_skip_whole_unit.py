"""``skip_whole_unit`` of the contrastive cluster F1: a sample skipped for a non-finite feature
takes its unit's other samples with it (as selfcommit's no-answer responses leave out their
pair). Hand-built ``SampleScore`` lists; the F1 derived by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import one_feature_contrast
from inspect_ai.scorer import SampleScore, Score
from tasks_loader import load_task_module

from cotaudit.cluster.scores import ClusterHypothesis, cluster_f1_inputs
from cotaudit.report import compare_ci
from cotaudit.scorers.cluster_f1 import cluster_contrast_from_scores, contrastive_cluster_f1

# p0, p1: honest low, hinted high (as declared); p2: an honest 10.5 whose hinted partner has
# no value (NaN: selfcommit's response with no final answer)
ROWS = [
    ("p0", "honest", 0.0),
    ("p0", "hinted", 10.0),
    ("p1", "honest", 1.0),
    ("p1", "hinted", 11.0),
    ("p2", "honest", 10.5),
    ("p2", "hinted", math.nan),
]
OPTIONS = one_feature_contrast("x", "hinted", "honest", unit_key="pair_id", n_boot=50)


def _scores() -> list[SampleScore]:
    return [
        SampleScore(
            score=Score(value={"x": x}),
            sample_id=f"{p}-{c}",
            sample_metadata={"condition": c, "pair_id": p},
        )
        for p, c, x in ROWS
    ]


def test_the_partner_of_a_skipped_sample_is_kept_by_default_and_dropped_on_request():
    # default: p2's honest 10.5 stays; 2-means {0, 1} | {10, 10.5, 11}, the high cluster is
    # the hinted one: TP = 2, FP = 1 (10.5), FN = 0, F1 = 2*2 / (2*2 + 1 + 0) = 0.8
    kept = contrastive_cluster_f1(**OPTIONS)(_scores())
    assert kept["cluster_f1"] == pytest.approx(0.8)
    assert (kept["cluster_n_positive"], kept["cluster_n_negative"]) == (2, 3)
    # whole units: p2 leaves entirely; {0, 1} | {10, 11}: F1 = 1
    whole = contrastive_cluster_f1(**OPTIONS, skip_whole_unit=True)(_scores())
    assert whole["cluster_f1"] == 1.0
    assert (whole["cluster_n_positive"], whole["cluster_n_negative"]) == (2, 2)
    assert whole["cluster_n_units"] == 2
    hypothesis = ClusterHypothesis.of(OPTIONS | {"skip_whole_unit": True})
    rows, labels, ids, units = cluster_f1_inputs(_scores(), hypothesis)
    assert ids == ["p0-honest", "p0-hinted", "p1-honest", "p1-hinted"]
    assert units == ["p0", "p0", "p1", "p1"] and rows == [[0.0], [10.0], [1.0], [11.0]]
    contrast = cluster_contrast_from_scores(_scores(), hypothesis, n_boot=50)
    assert contrast["n_skipped"] == 2  # the NaN sample and its partner


def test_skip_whole_unit_needs_a_unit():
    options = {k: v for k, v in OPTIONS.items() if k != "unit_key"}
    with pytest.raises(ValueError, match="skip_whole_unit needs a unit_key"):
        contrastive_cluster_f1(**options, skip_whole_unit=True)


def test_the_report_recomputes_with_the_option_the_log_declares():
    options = {k: v for k, v in OPTIONS.items() if k != "n_boot"}
    for whole, n in ((False, 5), (True, 4)):
        rows = compare_ci.cluster_rows(_scores(), options | {"skip_whole_unit": whole}, "pair_id")
        assert len(rows.units) == n
        assert rows.statistic(np.arange(n)) == pytest.approx(1.0 if whole else 0.8)
    # a log whose metric options lack the option: the default, the partner is kept
    assert len(compare_ci.cluster_rows(_scores(), options, "pair_id").units) == 5


def test_selfcommit_declares_whole_pairs():
    hypothesis = load_task_module("selfcommit").CLUSTER_HYPOTHESIS
    assert hypothesis.skip_whole_unit is True and hypothesis.unit_key == "pair_id"
