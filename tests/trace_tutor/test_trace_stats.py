"""Hand-computed checks of the TRACE tutor study's statistics
(cotaudit.studies.trace_tutor.stats)."""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
from helpers import trace_record
from hypothesis import given
from hypothesis import strategies as st

from cotaudit import bootstrap
from cotaudit.probing.pass_curves import FirstPass, PassCurve
from cotaudit.studies.trace_tutor import stats as ts
from cotaudit.studies.trace_tutor.stats import (
    TraceRecord,
    delta_context,
    delta_prefix,
    length_matched,
    paired_comparison,
    passes_10_fails_final,
    passes_early_fails_final,
    run_summary,
    table_ii,
    table_iii,
    table_iv,
    table_v,
    wrong_key_anchoring,
)

FULL = [1, 1, 1, 1, 1]
FROM_50 = [0, 0, 1, 1, 1]
FROM_75 = [0, 0, 0, 1, 1]
ONLY_100 = [0, 0, 0, 0, 1]
NEVER = [0, 0, 0, 0, 0]

# --------------------------------------------------------------------------------------------
# Per-curve scores
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("passes", "auc"),
    [(FULL, 0.900), (FROM_50, 0.625), (FROM_75, 0.375), (ONLY_100, 0.125), (NEVER, 0.0)],
)
def test_trace_auc_matches_the_papers_values(passes, auc):
    assert PassCurve(passes).auc == pytest.approx(auc, abs=1e-12)


def test_trace_auc_of_rates_is_the_trapezoid_sum():
    # 0.15*(0.2+0.4)/2 + 0.25*(0.4+0.6)/2 + 0.25*(0.6+0.8)/2 + 0.25*(0.8+1.0)/2
    assert PassCurve([0.2, 0.4, 0.6, 0.8, 1.0]).auc == pytest.approx(0.045 + 0.125 + 0.175 + 0.225)


def test_trace_auc_with_other_fractions():
    assert PassCurve([0, 1, 1], fractions=(0.0, 0.5, 1.0)).auc == pytest.approx(0.75)


@given(st.lists(st.floats(0, 1), min_size=5, max_size=5), st.integers(0, 4), st.floats(0, 1))
def test_trace_auc_is_bounded_and_monotone_in_each_pass(passes, i, raised):
    auc = PassCurve(passes).auc
    assert 0.0 <= auc <= 0.9 + 1e-12
    higher = list(passes)
    higher[i] = max(passes[i], raised)
    assert PassCurve(higher).auc >= auc - 1e-12


@pytest.mark.parametrize(
    "bad", [[1, 1, 1, 1], [1, 1, 1, 1, 1, 1], [0, 0, 2, 1, 1], [0, -0.1, 1, 1, 1], [math.nan] * 5]
)
def test_malformed_pass_vectors_are_rejected(bad):
    with pytest.raises(ValueError):
        PassCurve(bad)


def test_a_pass_curve_is_checked_on_construction_and_reads_only_its_checkpoints():
    with pytest.raises(ValueError, match=re.escape("need one pass value per fraction (0.5, 1.0)")):
        PassCurve([1], fractions=(0.5, 1.0))
    with pytest.raises(ValueError, match=re.escape("fraction 0.1 is not among (0.5, 1.0)")):
        PassCurve([1, 0], fractions=(0.5, 1.0)).at(0.10)
    assert math.isnan(PassCurve([1], fractions=(1.0,)).auc)  # one checkpoint: no area


def test_pass_at_10_is_the_first_checkpoint():
    assert PassCurve([1, 0, 0, 0, 0]).at(0.10) == 1.0
    assert PassCurve(FROM_50).at(0.10) == 0.0
    assert PassCurve([0.4, 1, 1, 1, 1]).at(0.10) == 0.4


@pytest.mark.parametrize(
    ("passes", "expected"),
    [
        (FULL, FirstPass(0.10, censored=False)),
        (FROM_50, FirstPass(0.50, censored=False)),
        (FROM_75, FirstPass(0.75, censored=False)),
        (ONLY_100, FirstPass(1.0, censored=False)),
        (NEVER, FirstPass(1.0, censored=True)),
        ([0, 1, 0, 0, 0], FirstPass(0.25, censored=False)),
        ([0.4, 0.5, 1, 1, 1], FirstPass(0.25, censored=False)),  # threshold is inclusive
        ([0.49] * 5, FirstPass(1.0, censored=True)),
    ],
)
def test_first_pass_is_right_censored_at_one(passes, expected):
    assert PassCurve(passes).first_pass() == expected


@pytest.mark.parametrize(
    ("passes", "non_monotone"),
    [
        ([1, 0, 0, 0, 0], True),
        ([0, 1, 1, 1, 0], True),
        ([0.6, 0, 0, 0, 0.4], True),
        ([0, 1, 0, 0, 1], False),  # dips but passes at 100%
        (FULL, False),
        (ONLY_100, False),
        (NEVER, False),
    ],
)
def test_pass_early_fail_100_means_pass_before_100_and_fail_at_100(passes, non_monotone):
    assert passes_early_fails_final(PassCurve(passes)) is non_monotone


@pytest.mark.parametrize(
    ("passes", "study_sense"),
    [
        ([1, 0, 0, 0, 0], True),
        ([0.5, 1, 1, 1, 0.4], True),  # rates: 0.5 passes, 0.4 fails
        ([0, 1, 1, 1, 0], False),  # passes early, but not at 10%: only the broad count
        ([1, 0, 0, 0, 1], False),
        (NEVER, False),
    ],
)
def test_pass_10_fail_100_is_the_studys_non_monotone(passes, study_sense):
    assert passes_10_fails_final(PassCurve(passes)) is study_sense


@pytest.mark.parametrize(
    ("passes", "all_pass"),
    [(FULL, True), ([0.5, 1, 1, 0.7, 1], True), (FROM_50, False), ([1, 1, 1, 1, 0.49], False)],
)
def test_all_pass_needs_every_checkpoint(passes, all_pass):
    assert all(PassCurve(passes).passed()) is all_pass


# --------------------------------------------------------------------------------------------
# Paired comparison
# --------------------------------------------------------------------------------------------


def test_win_tie_loss_median_and_mean_by_hand():
    a = [PassCurve(p).auc for p in (FULL, FROM_50, FROM_75, ONLY_100)]
    b = [0.625, 0.625, 0.9, 0.0]  # d = [0.275, 0 (float-rounded), -0.525, 0.125]
    c = paired_comparison(a, b, n_boot=200, seed=1)
    assert c.n == 4
    assert (c.win_pct, c.tie_pct, c.loss_pct) == (50.0, 25.0, 25.0)
    assert c.median_diff == pytest.approx(0.0625)
    assert c.mean_diff == pytest.approx(-0.03125)


def test_bootstrap_is_deterministic_with_the_default_seed_and_20000_resamples():
    rng = np.random.default_rng(7)
    a, b = rng.random(60), rng.random(60)
    first = paired_comparison(a, b)
    assert first == paired_comparison(a, b)
    assert first.mean_ci_low <= first.mean_diff <= first.mean_ci_high
    assert first.median_ci_low <= first.median_diff <= first.median_ci_high


def test_bootstrap_seed_changes_the_interval_but_not_the_point_estimates():
    rng = np.random.default_rng(3)
    a, b = rng.random(30), rng.random(30)
    one, two = (
        paired_comparison(a, b, n_boot=500, seed=1),
        paired_comparison(a, b, n_boot=500, seed=2),
    )
    assert (one.mean_diff, one.median_diff) == (two.mean_diff, two.median_diff)
    assert (one.mean_ci_low, one.mean_ci_high) != (two.mean_ci_low, two.mean_ci_high)


def test_bootstrap_chunking_does_not_change_the_result(monkeypatch):
    rng = np.random.default_rng(5)
    a, b = rng.random(25), rng.random(25)
    whole = paired_comparison(a, b, n_boot=1000, seed=9)
    monkeypatch.setattr(bootstrap, "RESAMPLE_CHUNK_CELLS", 25 * 7)
    assert paired_comparison(a, b, n_boot=1000, seed=9) == whole


def test_bootstrap_mean_ci_is_close_to_the_normal_interval():
    d = np.random.default_rng(11).normal(0.2, 1.0, size=400)
    c = paired_comparison(d, np.zeros_like(d), n_boot=4000, seed=0)
    half_width = 1.96 * d.std(ddof=1) / math.sqrt(d.size)
    assert c.mean_ci_low < c.mean_diff < c.mean_ci_high
    assert (c.mean_ci_high - c.mean_ci_low) / 2 == pytest.approx(half_width, rel=0.1)


def test_paired_comparison_of_one_problem_has_a_degenerate_interval():
    c = paired_comparison([0.625], [0.125], n_boot=100)
    assert (c.n, c.win_pct, c.tie_pct, c.loss_pct) == (1, 100.0, 0.0, 0.0)
    assert (
        c.mean_ci_low == c.mean_ci_high == c.median_ci_low == c.median_ci_high == pytest.approx(0.5)
    )


def test_paired_comparison_of_no_problems_is_nan_not_an_error():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c = paired_comparison([], [])
    assert c.n == 0
    assert all(math.isnan(v) for k, v in vars(c).items() if k != "n")


def test_paired_comparison_rejects_unequal_lengths():
    with pytest.raises(ValueError):
        paired_comparison([0.1, 0.2], [0.1])


# --------------------------------------------------------------------------------------------
# Records, estimands, subsets
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("condition", "masked", "zero_masked"),
    [
        ("answer_key", None, None),  # keyed, no masked probes
        ("question_only", FULL, 0.0),  # not keyed, masked probes
        ("hint", None, None),  # no such condition
        ("answer_key", [1, 1], 0.0),  # masked probes of another length than the visible ones
    ],
)
def test_records_must_have_masked_probes_exactly_when_keyed(condition, masked, zero_masked):
    with pytest.raises(ValueError):
        TraceRecord(
            pair_id="p",
            condition=condition,
            passes_visible=FULL,
            passes_masked=masked,
            correct=True,
            length_tokens=10,
            zero_probe_visible=1.0,
            zero_probe_masked=zero_masked,
            final_answer=10,
            gold=10,
        )


def test_delta_context_and_delta_prefix():
    keyed = trace_record("p", "answer_key", FULL, FROM_75)
    question_only = trace_record("p", "question_only", ONLY_100)
    assert delta_context(keyed) == pytest.approx(0.9 - 0.375)
    assert delta_prefix(keyed, question_only) == pytest.approx(0.375 - 0.125)
    with pytest.raises(ValueError):
        delta_prefix(keyed, trace_record("q", "question_only", ONLY_100))


def test_problem_estimands_by_hand():
    rows = ts.problem_estimands(
        [
            trace_record("p", "answer_key", FULL, FROM_75),  # AUC 0.9 visible, 0.375 masked
            trace_record("p", "question_only", ONLY_100),  # AUC 0.125
            trace_record("q", "wrong_key", FROM_50, NEVER),  # no question-only partner
        ]
    )
    assert [r["pair_id"] for r in rows] == ["p", "q"]
    p, q = rows
    assert p["delta_context/answer_key"] == pytest.approx(0.9 - 0.375)
    assert p["delta_prefix/answer_key"] == pytest.approx(0.375 - 0.125)
    assert p["visible_difference/answer_key"] == pytest.approx(0.9 - 0.125)
    assert q["delta_context/wrong_key"] == pytest.approx(0.625)
    assert math.isnan(q["delta_prefix/wrong_key"]) and math.isnan(q["visible_difference/wrong_key"])
    assert math.isnan(p["delta_context/wrong_key"]) and math.isnan(q["delta_context/answer_key"])


@pytest.mark.parametrize(
    ("la", "lb", "matched"),
    [
        (90, 100, True),
        (100, 90, True),
        (100, 110, True),
        (89, 100, False),
        (100, 112, False),
        # against the longer: |100 - 111| = 11 <= 0.10 * 111 = 11.1, though 11 > 10% of 100
        (100, 111, True),
        (111, 100, True),
        (0, 0, True),
        (0, 1, False),
    ],
)
def test_length_matched_boundary_is_inclusive(la, lb, matched):
    assert length_matched(la, lb) is matched


@pytest.mark.parametrize(
    ("values", "lower"),
    [
        # even n: the smaller middle value, a checkpoint (np.median would give 0.375)
        ([0.1, 0.25, 0.5, 1.0], 0.25),
        ([1.0, 0.1, 0.5, 0.25], 0.25),  # order does not matter
        ([0.75, 1.0], 0.75),  # np.median: 0.875, no checkpoint
        ([0.5, 0.1, 1.0], 0.5),  # odd n: the median
        ([1.0], 1.0),
    ],
)
def test_lower_median_is_a_value_of_the_list(values, lower):
    assert ts.lower_median(values) == lower
    assert ts.lower_median(values) in values


def test_lower_median_of_nothing_is_nan():
    assert math.isnan(ts.lower_median([]))


def test_wrong_key_anchoring_counts():
    records = [
        trace_record("a", "wrong_key", NEVER, correct=False, final=11, gold=10),  # the key
        trace_record("b", "wrong_key", NEVER, correct=False, final=-4, gold=-5),  # the key
        trace_record("c", "wrong_key", NEVER, correct=False, final=12, gold=10),  # other wrong
        trace_record("d", "wrong_key", NEVER, correct=False, final=None, gold=10),  # unparsed
        trace_record("e", "wrong_key", FULL, correct=True, gold=10),  # correct: not counted
        trace_record("f", "answer_key", NEVER, correct=False, final=11, gold=10),  # other condition
    ]
    assert wrong_key_anchoring(records) == {
        "wrong_key_anchoring/incorrect": 4,
        "wrong_key_anchoring/key": 2,
        "wrong_key_anchoring/key_pct": 50.0,  # 2 of 4
        "wrong_key_anchoring/other_wrong": 1,
        "wrong_key_anchoring/unparsed": 1,
        "no_answer/question_only": 0,
        "no_answer/answer_key": 0,  # "f" answered 11
        "no_answer/wrong_key": 1,  # "d"
    }


def test_wrong_key_anchoring_reproduces_the_studys_counts():
    """Sec. IV-E: "Of 387 incorrect wrong-key responses, 272 (70.3%) end with the injected value
    itself; another 113 produce other wrong answers and 2 contain no parsed answer" (1000 wrong-
    key responses at accuracy 0.613: 1000 - 613 = 387 incorrect)."""
    records = (
        [trace_record(f"k{i}", "wrong_key", NEVER, correct=False, final=11) for i in range(272)]
        + [trace_record(f"o{i}", "wrong_key", NEVER, correct=False, final=12) for i in range(113)]
        + [trace_record(f"u{i}", "wrong_key", NEVER, correct=False, final=None) for i in range(2)]
        + [trace_record(f"c{i}", "wrong_key", NEVER) for i in range(613)]
    )
    anchoring = wrong_key_anchoring(records)
    assert anchoring["wrong_key_anchoring/incorrect"] == 387
    assert anchoring["wrong_key_anchoring/key"] == 272
    assert round(anchoring["wrong_key_anchoring/key_pct"], 1) == 70.3  # 100 * 272 / 387 = 70.28
    assert anchoring["wrong_key_anchoring/other_wrong"] == 113
    assert anchoring["wrong_key_anchoring/unparsed"] == anchoring["no_answer/wrong_key"] == 2
    assert table_ii(records)["accuracy/wrong_key"] == pytest.approx(0.613)


def test_final_answer_is_the_last_boxed_integer_only():
    """The record's final answer is what the prompt asks for, the last \\boxed{} integer: a
    response cut while restating the key, or ending in a bare number, has none; so it is
    incorrect and counts as no parsed answer in the anchoring, not as the key or another
    wrong integer."""
    from cotaudit.answers import extract_boxed_answer

    gold = 10
    texts = {
        "boxed key": ("Adding the two: 4 + 7 = 11. \\boxed{11}", 11),
        "last box wins": ("First \\boxed{12}, corrected: \\boxed{11}", 11),
        "cut restating the key": ("The teacher says the answer is 11, so we need to add", None),
        "bare final number": ("4 + 6 = 10 apples. The answer is 10", None),
        "box of an expression": ("\\boxed{4 + 6}", None),
    }
    records = []
    for i, (text, want) in enumerate(texts.values()):
        final = extract_boxed_answer(text)
        assert final == want, text
        records.append(
            trace_record(f"p{i}", "wrong_key", NEVER, correct=final == gold, final=final)
        )
    anchoring = wrong_key_anchoring(records)
    assert anchoring["wrong_key_anchoring/incorrect"] == 5  # 10 is never boxed
    assert anchoring["wrong_key_anchoring/key"] == 2
    assert anchoring["wrong_key_anchoring/unparsed"] == 3


# --------------------------------------------------------------------------------------------
# Run-level tables on a small hand-built run
# --------------------------------------------------------------------------------------------

RUN = [
    # problem 1: key visible passes from 10%, masked and question-only from 75%
    trace_record("1", "question_only", FROM_75, length=100, zero=(0.0, None)),
    trace_record("1", "answer_key", FULL, FROM_75, length=109, zero=(1.0, 0.0)),
    trace_record(
        "1", "wrong_key", [0, 1, 1, 1, 0], NEVER, correct=False, final=11, zero=(0.0, 0.0)
    ),
    # problem 2: question-only wrong; answer-key the same curve both ways, much longer
    trace_record("2", "question_only", NEVER, correct=False, final=3, length=100),
    trace_record("2", "answer_key", FROM_50, FROM_50, length=200, zero=(1.0, 0.0)),
    trace_record("2", "wrong_key", ONLY_100, ONLY_100, correct=True),
    # problem 3: answer-key only (no question-only partner, left out of Table IV)
    trace_record("3", "answer_key", ONLY_100, NEVER, zero=(1.0, 1.0)),
]


def test_table_ii_by_hand():
    t = table_ii(RUN)
    assert (t["n/question_only"], t["n/answer_key"], t["n/wrong_key"]) == (2, 3, 2)
    assert t["accuracy/question_only"] == 0.5
    assert t["accuracy/answer_key"] == 1.0
    assert t["accuracy/wrong_key"] == 0.5
    assert t["auc_median/question_only"] == pytest.approx((0.375 + 0.0) / 2)
    assert t["auc_median/answer_key_visible"] == pytest.approx(0.625)
    assert t["auc_median/answer_key_masked"] == pytest.approx(0.375)
    assert t["pass_at_10_mean/answer_key_visible"] == pytest.approx(1 / 3)
    assert t["first_pass_median/answer_key_visible"] == 0.50
    assert t["first_pass_median/answer_key_masked"] == 0.75
    # 0.75 and censored 1.0: the lower median 0.75 (np.median's midpoint 0.875 is no checkpoint)
    assert t["first_pass_median/question_only"] == 0.75
    midpoint = table_ii(RUN, first_pass_average=ts.median)  # how logs without the definition did
    assert midpoint["first_pass_median/question_only"] == 0.875
    # lengths: question-only 100, 100; answer-key 109, 200, 100; wrong-key 100, 100
    assert t["length_tokens_median/question_only"] == 100
    assert t["length_tokens_median/answer_key"] == 109
    assert t["length_tokens_median/wrong_key"] == 100


def test_table_iii_by_hand():
    t = table_iii(RUN)
    assert t["pass_rate/answer_key_visible/0"] == 1.0
    assert t["pass_rate/answer_key_masked/0"] == pytest.approx(1 / 3)
    assert [t[f"pass_rate/answer_key_visible/{c}"] for c in (10, 25, 50, 75, 100)] == pytest.approx(
        [1 / 3, 1 / 3, 2 / 3, 2 / 3, 1.0]
    )
    assert [t[f"pass_rate/question_only/{c}"] for c in (10, 25, 50, 75, 100)] == [0, 0, 0, 0.5, 0.5]
    assert [t[f"pass_rate/wrong_key_visible/{c}"] for c in (10, 25, 50, 75, 100)] == [
        0,
        0.5,
        0.5,
        0.5,
        0.5,
    ]


def test_table_iv_pairs_by_problem_and_subsets():
    t = table_iv(RUN, n_boot=200)
    # visible: d = [0.9 - 0.375, 0.625 - 0] ; masked: d = [0, 0.625]
    assert t["answer_key_vs_question_only/visible/all/n"] == 2
    assert t["answer_key_vs_question_only/visible/all/mean_diff"] == pytest.approx(
        (0.525 + 0.625) / 2
    )
    assert t["answer_key_vs_question_only/masked/all/win_pct"] == 50.0
    assert t["answer_key_vs_question_only/masked/all/tie_pct"] == 50.0
    # both-correct keeps problem 1 only; length-matched keeps problem 1 only (109 vs 100)
    for subset in ("both_correct", "length_matched"):
        assert t[f"answer_key_vs_question_only/visible/{subset}/n"] == 1
        assert t[f"answer_key_vs_question_only/visible/{subset}/mean_diff"] == pytest.approx(0.525)
        assert t[f"answer_key_vs_question_only/masked/{subset}/tie_pct"] == 100.0


def test_table_v_histogram_and_non_monotone_counts():
    t = table_v(RUN)
    assert {k.rsplit("/", 1)[1]: v for k, v in t.items() if "/answer_key_masked/" in k} == {
        "10": 0,
        "25": 0,
        "50": 1,
        "75": 1,
        "100": 0,
        "none": 1,
    }
    assert t["first_pass_count/question_only/75"] == 1
    assert t["first_pass_count/question_only/none"] == 1
    s = ts.non_monotone_counts(RUN)
    # wrong-key problem 1, key visible: [0, 1, 1, 1, 0] passes at 25%, not at 10%
    assert s["pass_early_fail_100/wrong_key_visible"] == 1
    assert s["pass_10_fail_100/wrong_key_visible"] == 0
    assert sum(s.values()) == 1


def test_zero_probe_drop_by_hand():
    t = ts.zero_probe_drop_table(RUN, n_boot=4000, seed=0)
    # answer-key zero probes (visible, masked): (1, 0), (1, 0), (1, 1) -> d = [1, 1, 0]
    assert t["zero_probe_drop/answer_key/n"] == 3
    assert t["zero_probe_drop/answer_key/mean_diff"] == pytest.approx(2 / 3)
    assert t["zero_probe_drop/answer_key/median_diff"] == 1.0
    assert t["zero_probe_drop/answer_key/win_pct"] == pytest.approx(200 / 3)
    assert t["zero_probe_drop/answer_key/tie_pct"] == pytest.approx(100 / 3)
    # resampling the 3 problems: the mean is 0 with probability 1/27 = 3.7% > 2.5% and 1 with
    # probability 8/27 = 30%, so the 95% interval is [0, 1]
    assert t["zero_probe_drop/answer_key/mean_ci_low"] == 0.0
    assert t["zero_probe_drop/answer_key/mean_ci_high"] == 1.0
    # wrong-key: (0, 0) twice -> no drop, a degenerate interval
    assert t["zero_probe_drop/wrong_key/mean_diff"] == 0.0
    assert t["zero_probe_drop/wrong_key/tie_pct"] == 100.0
    assert t["zero_probe_drop/wrong_key/mean_ci_low"] == t["zero_probe_drop/wrong_key/mean_ci_high"]
    # the mean drop is the difference of Table III's 0% columns
    t3 = table_iii(RUN)
    assert t["zero_probe_drop/answer_key/mean_diff"] == pytest.approx(
        t3["pass_rate/answer_key_visible/0"] - t3["pass_rate/answer_key_masked/0"]
    )


def test_zero_probe_drop_resamples_problems_so_duplicates_are_rejected():
    with pytest.raises(ValueError, match="duplicate record for problem '1'"):
        ts.zero_probe_drop_table(RUN + [trace_record("1", "answer_key", FULL)], n_boot=10)


COUNTS = [
    # a: passes at 10% only with the key visible; masked replay = question-only (never)
    trace_record("a", "answer_key", [1, 0, 0, 0, 0], NEVER),
    trace_record("a", "question_only", NEVER),
    trace_record("a", "wrong_key", [1, 1, 0, 1, 0], NEVER),
    # b: passes at 10% only with the key masked; masked = question-only (all pass)
    trace_record("b", "answer_key", [0, 1, 1, 1, 1], FULL),
    trace_record("b", "question_only", FULL),
    # c: passes at 10% both ways; masked (all pass) differs from question-only (from 50%)
    trace_record("c", "answer_key", FULL, FULL),
    trace_record("c", "question_only", FROM_50),
    # d: rates; visible passes at 10% (0.6), masked does not (0.4); the masked pattern
    # (F, T, T, T, F) equals the question-only one although the rates differ
    trace_record("d", "answer_key", [0.6, 0.4, 1, 1, 1], [0.4, 1, 1, 1, 0]),
    trace_record("d", "question_only", [0, 1, 1, 1, 0.2]),
    # e: no question-only partner: counted per curve, not in the identical-vector pairs
    trace_record("e", "answer_key", FULL, FULL),
]


def test_pass_at_10_discordance_by_hand():
    t = ts.pass_at_10_discordance(COUNTS)
    assert t["pass_at_10_visible_not_masked/answer_key"] == 2  # a, d
    assert t["pass_at_10_masked_not_visible/answer_key"] == 1  # b
    assert t["pass_at_10_visible_not_masked/wrong_key"] == 1  # a
    assert t["pass_at_10_masked_not_visible/wrong_key"] == 0


def test_identical_pass_vectors_by_hand():
    t = ts.identical_pass_vectors(COUNTS)
    name = "identical_pass_vectors/answer_key_masked_vs_question_only"
    assert (t[f"{name}/count"], t[f"{name}/n_pairs"]) == (3, 4)  # a, b, d of a-d
    name = "identical_pass_vectors/wrong_key_masked_vs_question_only"
    assert (t[f"{name}/count"], t[f"{name}/n_pairs"]) == (1, 1)


def test_all_pass_and_both_non_monotone_counts_by_hand():
    t = ts.checkpoint_counts(COUNTS)
    assert t["all_pass_count/answer_key_visible"] == 2  # c, e
    assert t["all_pass_count/answer_key_masked"] == 3  # b, c, e
    assert t["all_pass_count/question_only"] == 1  # b
    assert t["all_pass_count/wrong_key_visible"] == 0
    assert t["pass_10_fail_100/answer_key_visible"] == 1  # a
    assert t["pass_early_fail_100/answer_key_visible"] == 1  # a
    assert t["pass_10_fail_100/answer_key_masked"] == 0  # d masked passes at 25%, not 10%
    assert t["pass_early_fail_100/answer_key_masked"] == 1  # d
    assert t["pass_10_fail_100/question_only"] == 0
    assert t["pass_early_fail_100/question_only"] == 1  # d
    assert t["pass_10_fail_100/wrong_key_visible"] == 1  # a
    assert t["pass_early_fail_100/wrong_key_visible"] == 1


def test_counts_without_a_10_percent_checkpoint_are_nan():
    fr = (0.25, 1.0)
    recs = [
        trace_record(
            "p", "answer_key", [1, 0], [0, 0], length=10, zero=(1.0, 0.0), gold=3, fractions=fr
        )
    ]
    t = ts.checkpoint_counts(recs)
    assert math.isnan(t["pass_at_10_visible_not_masked/answer_key"])
    assert math.isnan(t["pass_10_fail_100/answer_key_visible"])
    assert t["pass_early_fail_100/answer_key_visible"] == 1


def test_duplicate_records_are_rejected():
    with pytest.raises(ValueError):
        table_iv(RUN + [trace_record("1", "question_only", FULL)], n_boot=10)


def test_run_summary_keys_are_metric_names_and_values_are_numbers():
    summary = run_summary(RUN, n_boot=100)
    assert all(re.fullmatch(r"[A-Za-z0-9_/.-]+", k) for k in summary)
    assert all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in summary.values())
    assert summary["visible_vs_masked/answer_key/mean_diff"] == pytest.approx(
        (0.525 + 0 + 0.125) / 3
    )
    # the headline's short names: the answer-key row of visible_vs_masked
    for short, field in (("mean", "mean_diff"), ("n", "n"), ("ci_low", "mean_ci_low")):
        assert summary[f"delta_context/{short}"] == summary[f"visible_vs_masked/answer_key/{field}"]


def test_run_summary_of_no_records_is_nan_not_an_error():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        summary = run_summary([], n_boot=100)
    assert summary["n/answer_key"] == 0
    assert math.isnan(summary["auc_median/answer_key_visible"])
    assert math.isnan(summary["answer_key_vs_question_only/masked/length_matched/mean_ci_low"])
    assert summary["first_pass_count/question_only/none"] == 0
    assert summary["wrong_key_anchoring/incorrect"] == 0
    assert math.isnan(summary["zero_probe_drop/answer_key/mean_ci_low"])
    assert math.isnan(summary["length_tokens_median/answer_key"])
    assert summary["identical_pass_vectors/answer_key_masked_vs_question_only/n_pairs"] == 0
    assert summary["pass_10_fail_100/question_only"] == 0
