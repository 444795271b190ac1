"""Resampling statistics on hand-made continuations: r(t), resampling and counterfactual
importance (Thought Anchors' definitions) and their bootstrap intervals."""

from __future__ import annotations

import math

import pytest

from cotaudit.probing.resampling import (
    CutRollouts,
    answer_kl,
    chunk_importance,
    importance_intervals,
    reach_curve,
    reach_share,
)


def test_reach_share_counts_the_reference_and_not_missing_answers():
    assert reach_share([7, 7, None, 3], 7) == 0.5
    assert reach_share([7, 7], None) == 0.0
    assert math.isnan(reach_share([], 7))


def test_answer_kl_by_hand():
    # p = (3/4, 1/4) over {7, 3}; q = (1/4, 3/4): D = 3/4 ln 3 + 1/4 ln(1/3) = 1/2 ln 3
    assert answer_kl([7, 7, 7, 3], [7, 3, 3, 3]) == pytest.approx(0.5 * math.log(3), abs=1e-8)
    assert answer_kl([7, 7], [7, None, 7]) == pytest.approx(0.0, abs=1e-12)
    # an answer q never gave: log((1 + a) / (1 + 2a)) / (a / (2 + 2a)), a = 1e-9, ~ ln(2e9)
    assert answer_kl([7], [3, 3]) == pytest.approx(math.log(2 / 1e-9), rel=1e-6)
    assert math.isnan(answer_kl([None], [7]))


def test_chunk_importance_by_hand():
    cuts = [
        CutRollouts((3, 3, 7, None), (True, True, False, False)),  # r = 1/4
        CutRollouts((7, 7, 7, 3), (False, True, False, False)),  # r = 3/4
        CutRollouts((7, 7, 7, 7)),  # r = 1
    ]
    assert reach_curve(cuts, 7) == [0.25, 0.75, 1.0]
    first, second = chunk_importance(cuts, 7)
    assert first.resampling == pytest.approx(0.5) and second.resampling == pytest.approx(0.25)
    # chunk 0: P_0 over answered (3, 3, 7) = (2/3, 1/3), P_1 = (1/4 for 3, 3/4 for 7)
    kl = 2 / 3 * math.log((2 / 3) / (1 / 4)) + 1 / 3 * math.log((1 / 3) / (3 / 4))
    assert first.resampling_kl == pytest.approx(kl, abs=1e-8)
    # counterfactual: the dissimilar continuations from cut 0 both answer 3 (r = 0)
    assert first.counterfactual == pytest.approx(answer_kl([3, 3], cuts[1].answers))
    assert first.counterfactual_accuracy == pytest.approx(0.0 - 0.75)
    # chunk 1: the one dissimilar continuation answers 7; cut 2 all 7: no divergence
    assert second.counterfactual == pytest.approx(0.0, abs=1e-12)
    assert second.counterfactual_accuracy == pytest.approx(0.0)


def test_no_dissimilar_continuation_leaves_counterfactual_undefined():
    [only] = chunk_importance([CutRollouts((7, 3), (False, False)), CutRollouts((7, 7))], 7)
    assert math.isnan(only.counterfactual) and math.isnan(only.counterfactual_accuracy)
    assert only.resampling == pytest.approx(0.5)


def test_bootstrap_intervals_cover_the_estimate_and_shrink_with_more_continuations():
    def statistic(cuts):
        return [c.resampling for c in chunk_importance(cuts, 7)]

    few = [CutRollouts((7, 3) * 5), CutRollouts((7, 7, 7, 3) * 3)]  # r = 0.5, 0.75
    many = [CutRollouts((7, 3) * 50), CutRollouts((7, 7, 7, 3) * 25)]
    ((lo_few, hi_few, n_few),) = importance_intervals(few, statistic, n_boot=400)
    ((lo_many, hi_many, _),) = importance_intervals(many, statistic, n_boot=400)
    assert n_few == 400
    assert lo_few <= 0.25 <= hi_few and lo_many <= 0.25 <= hi_many
    assert hi_many - lo_many < (hi_few - lo_few) / 2  # ~1/sqrt(10) as wide
    # the same seed gives the same interval
    assert importance_intervals(few, statistic, n_boot=400)[0][:2] == (lo_few, hi_few)


def test_dissimilar_flags_match_the_answers():
    with pytest.raises(ValueError, match="one dissimilar flag per continuation"):
        CutRollouts((7, 3), (True,))
