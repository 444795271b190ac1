"""trace_tutor's `cotaudit report` pieces on hand-built records: the comparison of runs (paired
differences of the per-problem estimands over shared problems) and the published tables."""

from __future__ import annotations

import math

import pytest
from helpers import trace_record

from cotaudit.report import compare_ci
from cotaudit.report.trace_tutor import (
    PUBLISHED_GROUPS,
    RUN_DIFFERENCES,
    difference_rows,
    published_label,
)
from cotaudit.studies.trace_tutor import stats as ts
from cotaudit.studies.trace_tutor.paper import PAPER

FULL = [1, 1, 1, 1, 1]  # AUC 0.9
FROM_50 = [0, 0, 1, 1, 1]  # AUC 0.625
FROM_75 = [0, 0, 0, 1, 1]  # AUC 0.375
ONLY_100 = [0, 0, 0, 0, 1]  # AUC 0.125
NEVER = [0, 0, 0, 0, 0]  # AUC 0


RUN_A = [
    trace_record("p0", "question_only", FROM_75),
    trace_record("p0", "answer_key", FULL, FROM_75),
    trace_record("p1", "question_only", NEVER),
    trace_record("p1", "answer_key", FROM_50, ONLY_100),
    trace_record("p2", "question_only", FULL),
    trace_record("p2", "answer_key", FULL, FULL),
]
RUN_B = [
    trace_record("p0", "question_only", FROM_75),
    trace_record("p0", "answer_key", FULL, FULL),
    trace_record("p1", "question_only", NEVER),
    trace_record("p1", "answer_key", FROM_50, FROM_50),
    trace_record("p3", "answer_key", FULL, NEVER),  # only in B, no question-only partner
]


def test_delta_context_between_runs_is_paired_over_the_shared_problems():
    # Delta_context per problem: A: p0 0.9 - 0.375 = 0.525, p1 0.625 - 0.125 = 0.5, p2 0;
    # B: p0 0, p1 0, p3 0.9. Each run's mean over its own problems: A 1.025/3, B 0.9/3.
    # B - A over the shared p0, p1: (0 + 0)/2 - (0.525 + 0.5)/2 = -0.5125.
    rows = [
        difference_rows(ts.problem_estimands(r), "delta_context/answer_key") for r in (RUN_A, RUN_B)
    ]
    compared = compare_ci.compare_runs(rows, n_boot=400)
    a, b = compared.runs
    assert a.estimate == pytest.approx(1.025 / 3) and a.n_units == 3
    assert b.estimate == pytest.approx(0.3) and b.n_units == 3
    diff = compared.diffs[1]
    assert diff.n_units == 2
    assert diff.estimate == pytest.approx(-0.5125)
    # each resample draws p0/p1 once for both runs: its difference is a mean of the per-problem
    # differences -0.525 and -0.5, so every replicate, and the interval, lies between them
    assert -0.525 - 1e-12 <= diff.low <= diff.estimate <= diff.high <= -0.5 + 1e-12


def test_delta_prefix_and_the_visible_difference_leave_out_problems_without_a_partner():
    # Delta_prefix = AUC masked - AUC question-only: A p0 0, p1 0.125, p2 0; B p0 0.525,
    # p1 0.625 (p3 has no question-only record: no value). B - A on p0, p1: 0.575 - 0.0625.
    names = dict(RUN_DIFFERENCES)
    assert "delta_prefix/answer_key" in names and "visible_difference/answer_key" in names
    rows = [
        difference_rows(ts.problem_estimands(r), "delta_prefix/answer_key") for r in (RUN_A, RUN_B)
    ]
    assert list(rows[1].units) == ["p0", "p1"]
    compared = compare_ci.compare_runs(rows, n_boot=200)
    assert compared.runs[1].estimate == pytest.approx(0.575)
    assert compared.diffs[1].estimate == pytest.approx(0.575 - 0.0625)
    # the key-visible difference (Table IV's): AUC visible - AUC question-only; p0 and p1 carry
    # the same visible curves in both runs, so the paired difference is exactly 0
    rows = [
        difference_rows(ts.problem_estimands(r), "visible_difference/answer_key")
        for r in (RUN_A, RUN_B)
    ]
    diff = compare_ci.compare_runs(rows, n_boot=200).diffs[1]
    assert (diff.estimate, diff.low, diff.high) == (0.0, 0.0, 0.0)


def test_every_published_number_has_a_label_and_a_table():
    prefixes = tuple(p for _, _, group in PUBLISHED_GROUPS for p in group)
    for name in PAPER.published:
        assert name.startswith(prefixes), name
        row, quantity = published_label(name)
        assert row and quantity, name
    assert published_label("pass_rate/question_only/10") == ("question_only", "pass rate at 10%")
    assert published_label("answer_key_vs_question_only/masked/length_matched/n") == (
        "key masked, length matched",
        "n",
    )


def test_published_numbers_agree_with_each_other_as_the_study_states_them():
    """Consistency of the transcription, by the study's own arithmetic."""
    pub = {k: v.value for k, v in PAPER.published.items()}
    for probe, subset in (
        ("visible", "all"),
        ("visible", "both_correct"),
        ("masked", "all"),
        ("masked", "both_correct"),
        ("masked", "length_matched"),
    ):
        k = f"answer_key_vs_question_only/{probe}/{subset}"
        total = pub[f"{k}/win_pct"] + pub[f"{k}/tie_pct"] + pub[f"{k}/loss_pct"]
        assert total == pytest.approx(100, abs=0.15), k  # rounded percentages
    # "answer-key traces win 283 comparisons, tie 501, and lose 216" of 1000
    assert (
        pub["answer_key_vs_question_only/masked/all/win_pct"],
        pub["answer_key_vs_question_only/masked/all/tie_pct"],
        pub["answer_key_vs_question_only/masked/all/loss_pct"],
    ) == (28.3, 50.1, 21.6)
    # "442 pairs tie, 136 favor answer-key, and 168 favor question-only" of 746
    both = "answer_key_vs_question_only/masked/both_correct"
    assert round(100 * 136 / 746, 1) == pub[f"{both}/win_pct"]
    assert round(100 * 442 / 746, 1) == pub[f"{both}/tie_pct"]
    # Table II's AUC50 and Pass@10 are Table III's for the same curves
    assert pub["pass_at_10_mean/question_only"] == pub["pass_rate/question_only/10"]
    assert pub["pass_at_10_mean/answer_key_visible"] == pub["pass_rate/answer_key_visible/10"]
    # 0%-probe drop = Table III's 0% visible - masked: 0.998 - 0.116 = 0.882
    assert pub["zero_probe_drop/answer_key/mean_diff"] == pytest.approx(
        pub["pass_rate/answer_key_visible/0"] - pub["pass_rate/answer_key_masked/0"]
    )
    # anchoring: 272 + 113 + 2 = 387 = 1000 - 613 (wrong-key accuracy 0.613)
    assert (
        pub["wrong_key_anchoring/key"]
        + pub["wrong_key_anchoring/other_wrong"]
        + pub["wrong_key_anchoring/unparsed"]
        == pub["wrong_key_anchoring/incorrect"]
        == 387
    )
    assert round(100 * 272 / 387, 1) == pub["wrong_key_anchoring/key_pct"]
    assert not any(isinstance(v, float) and math.isnan(v) for v in pub.values())


def test_table_v_and_the_checkpoint_counts_agree_with_the_studys_other_numbers():
    """Table V's rows count 1000 problems each; its 10% bins are Table III's Pass@10 rates
    (0.113 and 0.126 of 1000); its 100% and no-pass cells are the text's "277 first passes at
    100% and 84 with no pass, versus 211 and 167"; 871 visible-only passes at 10% and none the
    other way are the difference of the 10% rates, 0.997 - 0.126 of 1000."""
    pub = {k: v.value for k, v in PAPER.published.items()}
    for curve in ("question_only", "answer_key_masked"):
        bins = [pub[f"first_pass_count/{curve}/{b}"] for b in ("10", "25", "50", "75", "100")]
        assert sum(bins) + pub[f"first_pass_count/{curve}/none"] == 1000
        assert pub[f"first_pass_count/{curve}/10"] == round(1000 * pub[f"pass_rate/{curve}/10"])
    masked, question = "first_pass_count/answer_key_masked", "first_pass_count/question_only"
    assert (pub[f"{masked}/100"], pub[f"{masked}/none"]) == (277, 84)
    assert (pub[f"{question}/100"], pub[f"{question}/none"]) == (211, 167)
    visible_rate, masked_rate = (
        pub["pass_rate/answer_key_visible/10"],
        pub["pass_rate/answer_key_masked/10"],
    )
    assert pub["pass_at_10_masked_not_visible/answer_key"] == 0
    assert pub["pass_at_10_visible_not_masked/answer_key"] == round(
        1000 * (visible_rate - masked_rate)
    )
    # the all-pass count cannot exceed Table III's 100% key-visible passes (0.919 of 1000)
    assert (
        pub["all_pass_count/answer_key_visible"] <= 1000 * pub["pass_rate/answer_key_visible/100"]
    )
    assert pub["identical_pass_vectors/answer_key_masked_vs_question_only/count"] == 493
