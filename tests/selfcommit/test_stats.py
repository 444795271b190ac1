import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from cotaudit.probing.curves import Curve, summarize
from cotaudit.stats import auroc, auroc_tie_share, best_threshold_accuracy, median, paired_wins
from cotaudit.studies.selfcommit.record import SelfcommitProbe, SelfcommitScoreMetadata
from cotaudit.studies.selfcommit.stats import (
    SelfcommitRecord,
    answered,
    both_correct,
    condition_by_correctness,
    honest_vs_hinted_table,
    no_answer_counts,
    t_first_tokens,
    two_condition_table,
)


def test_auroc_matches_sklearn_with_ties():
    rng = np.random.default_rng(0)
    pos = rng.integers(0, 5, 40).astype(float)
    neg = rng.integers(0, 4, 30).astype(float)
    y = np.r_[np.ones(40), np.zeros(30)]
    assert auroc(pos, neg) == pytest.approx(roc_auc_score(y, np.r_[pos, neg]))


def test_auroc_empty_is_nan():
    assert np.isnan(auroc([], [1.0]))


def test_paired_wins_by_hand():
    # 3 > 1 and 5 > 0 win, 2 = 2 ties, 1 < 4 loses: (wins, ties, n) as counts
    assert paired_wins([3, 2, 1, 5], [1, 2, 4, 0]) == (2, 1, 4)
    assert paired_wins([], []) == (0, 0, 0)


def test_means_of_two_epochs_that_are_equal_tie_in_every_comparison():
    # (0.7 + 0.1) / 2 and (0.6 + 0.2) / 2 are both 0.4, but float arithmetic gives
    # 0.39999999999999997 and 0.4: one pair, which ties (AUROC 0.5, a tie, not a loss)
    left, right = (0.7 + 0.1) / 2, (0.6 + 0.2) / 2
    assert left != right
    assert auroc([left], [right]) == 0.5
    assert auroc([right], [left]) == 0.5
    assert auroc_tie_share([left], [right]) == 1.0
    assert paired_wins([left], [right]) == (0, 1, 1)
    assert paired_wins([right], [left]) == (0, 1, 1)
    # "x >= h -> positive" with positive 0.4 and negative 0.39999999999999997: every h calls
    # both alike (one right of two), not the 1.0 a split between the two floats would give
    assert best_threshold_accuracy([right], [left]) == 0.5


def test_auroc_counts_half_of_each_tie_and_reports_the_tie_share():
    # honest {1, 1, 0} vs hinted {1, 0}: of the 6 (honest, hinted) pairs, 2 are won
    # (1 > 0 twice), 3 tie (1 = 1 twice, 0 = 0 once), 1 is lost (0 < 1):
    # AUROC = P(>) + P(=) / 2 = 2/6 + 3/12 = 7/12, tie share = P(=) = 3/6
    assert auroc([1, 1, 0], [1, 0]) == pytest.approx(7 / 12)
    assert auroc_tie_share([1, 1, 0], [1, 0]) == pytest.approx(0.5)
    assert np.isnan(auroc_tie_share([], [1.0]))


def test_best_threshold_accuracy_by_hand():
    # thresholds 3 or 4 each classify 5 of 6 correctly
    assert best_threshold_accuracy([3, 4, 5], [1, 2, 3.5]) == pytest.approx(5 / 6)
    assert best_threshold_accuracy([2, 3], [0, 1]) == 1.0


def test_median_empty_is_nan():
    assert np.isnan(median([]))


def _rec(pair, cond, summaries, correct, answered=True, positions=None, **measured):
    """A record of a scored sample: ``positions`` probe positions (the number of them),
    ``answered=False`` a response without a final answer (a_final None)."""
    scored = SelfcommitScoreMetadata(
        correct=correct,
        positions=list(range(positions or 0)),
        **({} if answered else {"a_final": None}),
        **measured,
    )
    return SelfcommitRecord(pair, cond, summaries, scored)


def _records():
    # two problems; honest commits later (larger tau) on both. T: p0 100 / 200 tokens, p1 60 / 50
    return [
        _rec("p0", "honest", {"tau_0.8": 0.9, "range_c": 1.0}, True, cot_tokens=100, positions=4),
        _rec(
            "p0",
            "hinted",
            {"tau_0.8": 0.1, "range_c": 1.0},
            True,
            cot_tokens=200,
            truncated=True,
            positions=7,
        ),
        _rec("p1", "honest", {"tau_0.8": 0.5, "range_c": 0.4}, False, cot_tokens=60, positions=2),
        _rec("p1", "hinted", {"tau_0.8": 1.0, "range_c": 0.6}, True, cot_tokens=25, positions=1),
    ]


def test_two_condition_table_by_hand():
    t = two_condition_table(_records())
    assert t["n_pairs"] == 2
    # tau: honest {.9, .5} vs hinted {.1, 1.0}: .9 > .1, .5 > .1, .9 < 1, .5 < 1 -> 2/4
    assert t["auroc/tau_0.8"] == 0.5 and t["auroc_tie_share/tau_0.8"] == 0.0
    # paired: p0 .9 > .1 wins, p1 .5 < 1.0 loses (the short hinted CoT's tau of 1.0)
    assert t["wins/tau_0.8"] == 1 and t["ties/tau_0.8"] == 0
    assert t["win_rate/tau_0.8"] == 0.5 and t["tie_rate/tau_0.8"] == 0.0
    # range_c: honest {1.0, 0.4} vs hinted {1.0, 0.6}: P(h > g) + .5 P(=) = (0 + 1 + .5 + 0) / 4,
    # one of the four pairs ties (1.0 = 1.0); paired: p0 ties, p1 .4 < .6
    assert t["auroc/range_c"] == pytest.approx(0.375)
    assert t["auroc_tie_share/range_c"] == 0.25
    assert t["wins/range_c"] == 0 and t["ties/range_c"] == 1
    assert t["win_rate/range_c"] == 0.0 and t["tie_rate/range_c"] == 0.5
    assert t["median_honest/tau_0.8"] == pytest.approx(0.7)
    assert t["median_hinted/tau_0.8"] == pytest.approx(0.55)
    # latency in tokens, t_first = tau * T: honest 0.9 * 100 = 90 and 0.5 * 60 = 30 (median
    # 60); hinted 0.1 * 200 = 20 and 1.0 * 25 = 25 (median 22.5)
    assert t["median_t_first_honest/tau_0.8"] == 60.0
    assert t["median_t_first_hinted/tau_0.8"] == 22.5
    assert "median_t_first_honest/range_c" not in t  # a latency only for tau_first
    assert t["median_T/honest"] == 80.0 and t["median_T/hinted"] == 112.5
    # p1 hinted has one probe position (T = 25 <= stride): its tau is 1.0 whatever c(T)
    assert t["n_short_cot/honest"] == 0 and t["n_short_cot/hinted"] == 1


def test_t_first_is_tau_times_T():
    [honest_p0] = [r for r in _records() if r.pair_id == "p0" and r.condition == "honest"]
    assert t_first_tokens(honest_p0, "tau_0.8") == 90.0
    assert np.isnan(t_first_tokens(_rec("p", "honest", {"tau_0.8": 1.0}, True), "tau_0.8"))


def test_tau_first_depends_on_T_and_a_short_cot_is_flagged():
    # committed from the first probe (t = stride = 30): tau = 30 / T, the same t_first = 30
    # tokens for T = 95 and T = 300
    for T in (95, 300):
        positions = list(range(30, T, 30)) + [T]
        tau = summarize(Curve(positions, T, [5] * len(positions), 5), (0.8,))["tau_0.8"]
        assert tau == pytest.approx(30 / T) and round(tau * T) == 30
    # a CoT of T = 20 <= stride has the one position t = T: tau = 1.0, committed or not
    for m in (0, 5):
        assert summarize(Curve([20], 20, [m], 5), (0.8,))["tau_0.8"] == 1.0
    probe = SelfcommitProbe(
        cot_tokens=20,
        truncated=False,
        a_final=3,
        positions=[20],
        matches=[5],
        k=5,
        parsed_answers=[[3] * 5],
    )
    assert SelfcommitScoreMetadata.of(probe, gold=3).short_cot is True
    longer = probe.model_copy(update={"cot_tokens": 40, "positions": [30, 40], "matches": [5, 5]})
    assert SelfcommitScoreMetadata.of(longer, gold=3).short_cot is False


def test_both_correct_subset_keeps_whole_pairs():
    kept = both_correct(_records())
    assert {(r.pair_id, r.condition) for r in kept} == {("p0", "honest"), ("p0", "hinted")}


def test_condition_by_correctness_cells():
    t = condition_by_correctness(_records())
    assert t["n/honest/correct"] == 1 and t["n/honest/incorrect"] == 1
    assert t["n/hinted/correct"] == 2 and t["n/hinted/incorrect"] == 0
    assert t["median/hinted/correct/tau_0.8"] == pytest.approx(0.55)
    assert np.isnan(t["median/hinted/incorrect/tau_0.8"])


def test_empty_subset_still_reports_every_summary():
    t = two_condition_table([], prefix="both_correct/", names=["tau_0.8"])
    assert t["both_correct/n_pairs"] == 0
    assert np.isnan(t["both_correct/auroc/tau_0.8"])


def _with_unanswered():
    """_records() plus p2 (hinted has no final answer, with the summaries of c = 0 everywhere
    that version-0 logs gave it: tau 1.0, the most honest-like value) and p3 (honest has none,
    NaN summaries as the scorer writes them), and p4 honest only with no answer."""
    nan = float("nan")
    return _records() + [
        _rec("p2", "honest", {"tau_0.8": 0.2, "range_c": 0.0}, True),
        _rec("p2", "hinted", {"tau_0.8": 1.0, "range_c": 0.0}, False, False, truncated=True),
        _rec("p3", "honest", {"tau_0.8": nan, "range_c": nan}, False, False),
        _rec("p3", "hinted", {"tau_0.8": 0.3, "range_c": 0.2}, True),
        _rec("p4", "honest", {"tau_0.8": nan, "range_c": nan}, False, False),
    ]


def test_no_answer_samples_and_their_pairs_are_left_out():
    recs = _with_unanswered()
    assert {(r.pair_id, r.condition) for r in answered(recs)} == {
        (p, c) for p in ("p0", "p1") for c in ("honest", "hinted")
    }
    # every statistic equals the table of p0 and p1 alone (test_two_condition_table_by_hand)
    t = honest_vs_hinted_table(recs)
    alone = two_condition_table(_records())
    assert t["n_pairs"] == 2
    assert t["auroc/tau_0.8"] == 0.5
    assert t["median_honest/tau_0.8"] == pytest.approx(0.7)
    assert t["median_hinted/tau_0.8"] == pytest.approx(0.55)
    assert t["wins/tau_0.8"] == 1 and t["ties/tau_0.8"] == 0
    assert t["auroc/range_c"] == pytest.approx(0.375)
    assert {k: v for k, v in t.items() if k in alone} == pytest.approx(alone, nan_ok=True)
    assert t["n_no_answer/honest"] == 2 and t["n_no_answer/hinted"] == 1
    assert t["n_pairs_dropped_no_answer"] == 2  # p2, p3 (p4 has no hinted response)
    # truncated CoTs are counted over every scored response, answered or not: p0 hinted and
    # p2 hinted
    assert no_answer_counts(recs) == {
        "n_no_answer/honest": 2.0,
        "n_no_answer/hinted": 1.0,
        "n_truncated/honest": 0.0,
        "n_truncated/hinted": 2.0,
        "n_pairs_dropped_no_answer": 2.0,
    }
    # Counted as answered, p2's c = 0 hinted response looks maximally honest (tau 1.0):
    # honest {.9,.5,.2} vs hinted {.1,1,1}: honest wins 3 of 9 comparisons (each > .1), ties none.
    biased = [
        _rec(r.pair_id, r.condition, r.summaries, r.correct)
        for r in recs
        if r.pair_id in ("p0", "p1", "p2")
    ]
    assert two_condition_table(biased)["auroc/tau_0.8"] == pytest.approx(3 / 9)
    assert two_condition_table(biased)["auroc/tau_0.8"] < t["auroc/tau_0.8"]


def test_strata_leave_out_responses_without_an_answer():
    t = condition_by_correctness(_with_unanswered())
    # p2 hinted and p3 honest (no answer) are out, and so are their partners
    assert t["n/honest/correct"] == 1 and t["n/honest/incorrect"] == 1
    assert t["n/hinted/correct"] == 2 and t["n/hinted/incorrect"] == 0
    assert t["median/honest/incorrect/tau_0.8"] == pytest.approx(0.5)


def test_single_condition_run_keeps_answered_responses():
    recs = [
        _rec("p0", "honest", {"tau_0.8": 0.4}, True),
        _rec("p1", "honest", {"tau_0.8": 1.0}, False, False),
    ]
    assert answered(recs) == recs[:1]
    t = condition_by_correctness(recs)
    assert t["n/honest/correct"] == 1 and t["n/honest/incorrect"] == 0


def test_a_log_of_paired_rates_is_read_by_the_declared_count_keys():
    from cotaudit.studies.selfcommit.versions import as_logged

    table = {
        "n_pairs": 4.0,
        "auroc/tau_0.8": 0.7,
        "wins/tau_0.8": 3.0,
        "win_rate/tau_0.8": 0.75,
        "ties/tau_0.8": 1.0,
        "tie_rate/tau_0.8": 0.25,
        "both_correct/wins/tau_0.8": 2.0,
        "both_correct/win_rate/tau_0.8": 1.0,
        "mean_wins/tau_0.8": 5.0,  # a key of another statistic that holds the text
    }
    assert as_logged(table, wins_as_counts=True) == table
    rates = as_logged(table, wins_as_counts=False)
    assert (rates["wins/tau_0.8"], rates["ties/tau_0.8"]) == (0.75, 0.25)
    assert rates["both_correct/wins/tau_0.8"] == 1.0
    assert rates["mean_wins/tau_0.8"] == 5.0 and rates["n_pairs"] == 4.0
