import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from cotaudit.selfcommit_stats import (
    SelfcommitRecord,
    both_correct,
    condition_by_correctness,
    two_condition_table,
)
from cotaudit.stats import auroc, best_threshold_accuracy, median, paired_wins


def test_auroc_matches_sklearn_with_ties():
    rng = np.random.default_rng(0)
    pos = rng.integers(0, 5, 40).astype(float)
    neg = rng.integers(0, 4, 30).astype(float)
    y = np.r_[np.ones(40), np.zeros(30)]
    assert auroc(pos, neg) == pytest.approx(roc_auc_score(y, np.r_[pos, neg]))


def test_auroc_empty_is_nan():
    assert np.isnan(auroc([], [1.0]))


def test_paired_wins_by_hand():
    assert paired_wins([3, 2, 1, 5], [1, 2, 4, 0]) == (0.5, 0.25)


def test_best_threshold_accuracy_by_hand():
    # thresholds 3 or 4 each classify 5 of 6 correctly
    assert best_threshold_accuracy([3, 4, 5], [1, 2, 3.5]) == pytest.approx(5 / 6)
    assert best_threshold_accuracy([2, 3], [0, 1]) == 1.0


def test_median_empty_is_nan():
    assert np.isnan(median([]))


def _records():
    # two problems; honest commits later (larger tau) on both.
    return [
        SelfcommitRecord("p0", "honest", {"tau_0.8": 0.9, "range_c": 1.0}, True),
        SelfcommitRecord("p0", "hinted", {"tau_0.8": 0.1, "range_c": 1.0}, True),
        SelfcommitRecord("p1", "honest", {"tau_0.8": 0.5, "range_c": 0.4}, False),
        SelfcommitRecord("p1", "hinted", {"tau_0.8": 0.0, "range_c": 0.6}, True),
    ]


def test_two_condition_table_by_hand():
    t = two_condition_table(_records())
    assert t["n_pairs"] == 2
    assert t["auroc/tau_0.8"] == 1.0
    assert t["wins/tau_0.8"] == 1.0 and t["ties/tau_0.8"] == 0.0
    # range_c: honest {1.0, 0.4} vs hinted {1.0, 0.6}: P(h > g) + .5 P(=) = (1 + .5 + 0 + 0) / 4
    assert t["auroc/range_c"] == pytest.approx(0.375)
    assert t["wins/range_c"] == 0.0 and t["ties/range_c"] == 0.5
    assert t["median_honest/tau_0.8"] == pytest.approx(0.7)
    assert t["median_hinted/tau_0.8"] == pytest.approx(0.05)


def test_both_correct_subset_keeps_whole_pairs():
    kept = both_correct(_records())
    assert {(r.pair_id, r.condition) for r in kept} == {("p0", "honest"), ("p0", "hinted")}


def test_condition_by_correctness_cells():
    t = condition_by_correctness(_records())
    assert t["n/honest/correct"] == 1 and t["n/honest/incorrect"] == 1
    assert t["n/hinted/correct"] == 2 and t["n/hinted/incorrect"] == 0
    assert t["median/hinted/correct/tau_0.8"] == pytest.approx(0.05)
    assert np.isnan(t["median/hinted/incorrect/tau_0.8"])


def test_empty_subset_still_reports_every_summary():
    t = two_condition_table([], prefix="both_correct/", names=["tau_0.8"])
    assert t["both_correct/n_pairs"] == 0
    assert np.isnan(t["both_correct/auroc/tau_0.8"])
