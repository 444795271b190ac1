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


def test_reach_share_is_the_share_of_stated_answers():
    # Thought Anchors' accuracy: correct / answered; a continuation with no answer is left out
    assert reach_share([7, 7, None, 3], 7) == pytest.approx(2 / 3)
    assert reach_share([None, None], 7) == 0.0  # none stated: none reached it
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
        CutRollouts((3, 3, 7, None), (True, True, False, False)),  # r = 1/3 of the 3 stated
        CutRollouts((7, 7, 7, 3), (False, True, False, False)),  # r = 3/4
        CutRollouts((7, 7, 7, 7)),  # r = 1 (the cut at T)
    ]
    assert reach_curve(cuts, 7) == pytest.approx([1 / 3, 0.75, 1.0])
    first, last = chunk_importance(cuts, 7)
    assert first.resampling == pytest.approx(0.75 - 1 / 3)
    # chunk 0: P_0 over answered (3, 3, 7) = (2/3, 1/3), P_1 = (1/4 for 3, 3/4 for 7)
    kl = 2 / 3 * math.log((2 / 3) / (1 / 4)) + 1 / 3 * math.log((1 / 3) / (3 / 4))
    assert first.resampling_kl == pytest.approx(kl, abs=1e-8)
    # counterfactual: the dissimilar continuations from cut 0 both answer 3, against cut 1's
    # four answers pooled with the similar one (7): 3 has 1/5 there, so D = ln 5 (up to the
    # smoothing: the absent 7 adds (a/2) ln(a / 1.6), a = 1e-9, about -1e-8)
    assert first.counterfactual == pytest.approx(math.log(5), abs=1e-7)
    assert first.counterfactual_next_only == pytest.approx(math.log(4), abs=1e-7)
    assert first.counterfactual_accuracy == pytest.approx(0.0 - 0.75)
    # the last sentence has no next sentence start to resample from: undefined
    assert all(math.isnan(v) for v in vars(last).values())


def test_the_definitions_are_thought_anchors_not_shares_of_all_continuations():
    """A hand-built set where Thought Anchors' definitions and shares of all n continuations
    differ on every count: (a) r over stated answers, (b) CI pools the next cut's with the
    similar continuations, (c) the accuracy form leaves out continuations without an answer,
    (d) the last sentence has no importance (not r(T) - r(c_{m-1}))."""
    cuts = [
        CutRollouts((7, None, 3, 3), (True, True, False, True)),
        CutRollouts((7, 3, None, None), (False, False, False, False)),
        CutRollouts((7, 7, 7, 7)),
    ]
    # (a) r = 1/3 (7 of 7, 3, 3) and 1/2 (7 of 7, 3), not 1/4 and 1/4 of all four
    assert reach_curve(cuts, 7) == pytest.approx([1 / 3, 1 / 2, 1.0])
    first, last = chunk_importance(cuts, 7)
    assert first.resampling == pytest.approx(1 / 2 - 1 / 3)  # 0 over all four
    # (b) dissimilar stated answers (7, 3) against cut 1's (7, 3) and the similar 3:
    # P = (1/2, 1/2), Q = (1/3, 2/3): D = 1/2 ln(3/2) + 1/2 ln(3/4) = 1/2 ln(9/8);
    # against cut 1's alone the two agree, D = 0
    assert first.counterfactual == pytest.approx(0.5 * math.log(9 / 8), abs=1e-8)
    assert first.counterfactual_next_only == pytest.approx(0.0, abs=1e-8)
    # (c) r of the dissimilar (7, 3) = 1/2 minus r(c_1) = 1/2: 0 (1/3 - 1/4 with the None)
    assert first.counterfactual_accuracy == pytest.approx(0.0)
    # (d) r(T) - r(c_1) would be 1/2; there is no next sentence
    assert math.isnan(last.resampling) and math.isnan(last.counterfactual)


def test_no_dissimilar_continuation_leaves_counterfactual_undefined():
    first, _ = chunk_importance(
        [CutRollouts((7, 3), (False, False)), CutRollouts((7, 7)), CutRollouts((7,))], 7
    )
    assert math.isnan(first.counterfactual) and math.isnan(first.counterfactual_accuracy)
    assert math.isnan(first.counterfactual_next_only)
    assert first.resampling == pytest.approx(0.5)


def test_bootstrap_intervals_cover_the_estimate_and_shrink_with_more_continuations():
    def statistic(cuts):
        return [c.resampling for c in chunk_importance(cuts, 7)]

    end = CutRollouts((7,) * 4)  # the cut at T: the last chunk's importance is undefined
    few = [CutRollouts((7, 3) * 5), CutRollouts((7, 7, 7, 3) * 3), end]  # r = 0.5, 0.75
    many = [CutRollouts((7, 3) * 50), CutRollouts((7, 7, 7, 3) * 25), end]
    (lo_few, hi_few, n_few), (*_, n_last) = importance_intervals(few, statistic, n_boot=400)
    (lo_many, hi_many, _), _ = importance_intervals(many, statistic, n_boot=400)
    assert n_last == 0
    assert n_few == 400
    assert lo_few <= 0.25 <= hi_few and lo_many <= 0.25 <= hi_many
    assert hi_many - lo_many < (hi_few - lo_few) / 2  # ~1/sqrt(10) as wide
    # the same seed gives the same interval
    assert importance_intervals(few, statistic, n_boot=400)[0][:2] == (lo_few, hi_few)


def test_dissimilar_flags_match_the_answers():
    with pytest.raises(ValueError, match="one dissimilar flag per continuation"):
        CutRollouts((7, 3), (True,))


def test_similarity_and_first_reach():
    from cotaudit.probing.resampling import first_reach, forced_before_resampled, similarity

    assert similarity("So the total is 12.", "so the  total is 12.") == 1.0
    # 3 of 4 words match in order: 2 * 3 / (4 + 4)
    assert similarity("the total is 12", "the total is 13") == pytest.approx(0.75)
    assert first_reach([0.2, 0.5, 1.0], 0.5) == 1 and first_reach([0.2], 0.5) is None
    assert forced_before_resampled([0.2, 0.8, 1.0], [0.0, 0.4, 0.6]) == 1.0
    assert forced_before_resampled([0.2, 0.8, 1.0], [0.0, 0.6, 1.0]) == 0.0
    assert forced_before_resampled([0.6, 1.0], [0.0, 0.2]) == 1.0  # r never reaches
    assert math.isnan(forced_before_resampled([0.2, 0.4], [0.8, 1.0]))


def _record(**changes):
    from cotaudit.probing.resample_record import Chunk, ResampleRecord

    chunk = {
        "resampling_ci": (None, None),
        "resampling_kl": None,
        "counterfactual": None,
        "counterfactual_ci": (None, None),
        "counterfactual_accuracy": None,
        "dissimilar": 0,
    }
    fields = {
        "reference": 7,
        "cot_tokens": 30,
        "cuts": [0, 10, 30],
        "n": 2,
        "temperature": 0.7,
        "max_tokens": 64,
        "answers": [[3, 7], [7, 7], [7, 7]],
        "resampled": [0.5, 1.0, 1.0],
        "k": 2,
        "forced_answers": [[7, 3], [7, 7], [7, 7]],
        "forced": [0.5, 1.0, 1.0],
        "chunks": [
            Chunk(text="First. ", resampling=0.5, **chunk),
            Chunk(text="Second.", resampling=-0.25, **chunk),
        ],
    }
    return ResampleRecord(**{**fields, **changes})


def test_resample_values_by_hand():
    from cotaudit.probing.resample_record import resample_values

    values = resample_values(_record(forced=[1.0, 1.0, 1.0]))
    assert values["r_mean"] == pytest.approx(2.5 / 3)
    assert values["forced_mean"] == 1.0
    assert values["gap_mean"] == pytest.approx(0.5 / 3)
    assert values["forced_first"] == 0.0  # both reach 0.5 at cut 0: forcing is not earlier
    later = resample_values(_record(forced=[1.0, 1.0, 1.0], resampled=[0.0, 1.0, 1.0]))
    assert later["forced_first"] == 1.0 and later["gap_mean"] == pytest.approx(1 / 3)
    assert values["max_importance"] == 0.5 and values["top_chunk"] == 0.0
    assert values["cuts"] == 3.0
    assert resample_values(_record(reference=None)) == {}


def test_resample_summary_means_over_samples_and_conditions():
    from types import SimpleNamespace

    from cotaudit.probing.resample_record import METRICS

    def sample(value, condition):
        return SimpleNamespace(
            score=SimpleNamespace(value=value), sample_metadata={"condition": condition}
        )

    samples = [
        sample({"r_mean": 0.2, "gap_mean": 0.4, "forced_first": 1.0}, "honest"),
        sample({"r_mean": 0.6, "gap_mean": 0.0, "forced_first": math.nan}, "hinted"),
        sample({"r_mean": 1.0, "gap_mean": -0.2, "forced_first": 0.0}, "hinted"),
        sample({}, "hinted"),  # not resampled: left out
    ]
    out = METRICS["resample_summary"](samples)
    assert out["n_samples"] == 3
    assert out["r_mean"] == pytest.approx(0.6) and out["r_mean/hinted"] == pytest.approx(0.8)
    assert out["gap_mean/honest"] == pytest.approx(0.4)
    assert out["forced_first"] == pytest.approx(0.5)  # NaN left out
    assert math.isnan(out["forced_mean"])
