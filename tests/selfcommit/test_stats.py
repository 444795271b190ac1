import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from cotaudit.studies.selfcommit.stats import (
    SelfcommitRecord,
    answered,
    both_correct,
    condition_by_correctness,
    honest_vs_hinted_table,
    no_answer_counts,
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


def _with_unanswered():
    """_records() plus p2 (hinted has no final answer, scored as c = 0 everywhere in old logs:
    tau 1.0, the most honest-like value) and p3 (honest has none, NaN summaries as new logs
    write them), and p4 honest only with no answer."""
    nan = float("nan")
    return _records() + [
        SelfcommitRecord("p2", "honest", {"tau_0.8": 0.2, "range_c": 0.0}, True),
        SelfcommitRecord("p2", "hinted", {"tau_0.8": 1.0, "range_c": 0.0}, False, False),
        SelfcommitRecord("p3", "honest", {"tau_0.8": nan, "range_c": nan}, False, False),
        SelfcommitRecord("p3", "hinted", {"tau_0.8": 0.3, "range_c": 0.2}, True),
        SelfcommitRecord("p4", "honest", {"tau_0.8": nan, "range_c": nan}, False, False),
    ]


def test_no_answer_samples_and_their_pairs_are_left_out():
    recs = _with_unanswered()
    assert {(r.pair_id, r.condition) for r in answered(recs)} == {
        (p, c) for p in ("p0", "p1") for c in ("honest", "hinted")}
    # every statistic equals the table of p0 and p1 alone (test_two_condition_table_by_hand)
    t = honest_vs_hinted_table(recs)
    assert t["n_pairs"] == 2
    assert t["auroc/tau_0.8"] == 1.0
    assert t["median_honest/tau_0.8"] == pytest.approx(0.7)
    assert t["median_hinted/tau_0.8"] == pytest.approx(0.05)
    assert t["wins/tau_0.8"] == 1.0 and t["ties/tau_0.8"] == 0.0
    assert t["auroc/range_c"] == pytest.approx(0.375)
    assert t["n_no_answer/honest"] == 2 and t["n_no_answer/hinted"] == 1
    assert t["n_pairs_dropped_no_answer"] == 2  # p2, p3 (p4 has no hinted response)
    assert no_answer_counts(recs) == {"n_no_answer/honest": 2.0, "n_no_answer/hinted": 1.0,
                                      "n_pairs_dropped_no_answer": 2.0}
    # Counted as answered (the old behaviour), p2's c = 0 hinted response looks maximally
    # honest: honest {.9,.5,.2} vs hinted {.1,0,1}: honest wins 6 of 9 comparisons.
    biased = [SelfcommitRecord(r.pair_id, r.condition, r.summaries, r.correct)
              for r in recs if r.pair_id in ("p0", "p1", "p2")]
    assert two_condition_table(biased)["auroc/tau_0.8"] == pytest.approx(6 / 9)


def test_strata_leave_out_responses_without_an_answer():
    t = condition_by_correctness(_with_unanswered())
    # p2 hinted and p3 honest (no answer) are out, and so are their partners
    assert t["n/honest/correct"] == 1 and t["n/honest/incorrect"] == 1
    assert t["n/hinted/correct"] == 2 and t["n/hinted/incorrect"] == 0
    assert t["median/honest/incorrect/tau_0.8"] == pytest.approx(0.5)


def test_single_condition_run_keeps_answered_responses():
    recs = [SelfcommitRecord("p0", "honest", {"tau_0.8": 0.4}, True),
            SelfcommitRecord("p1", "honest", {"tau_0.8": 1.0}, False, False)]
    assert answered(recs) == recs[:1]
    t = condition_by_correctness(recs)
    assert t["n/honest/correct"] == 1 and t["n/honest/incorrect"] == 0
