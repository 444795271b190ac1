"""Resampling where a cut's continuations state no answer: what Thought Anchors' code
(analyze_rollouts.py) returns there and what is computed here (docs/resample.md, "Undefined")."""

from __future__ import annotations

import math

import pytest

from cotaudit.probing.resampling import CutRollouts, answer_kl, chunk_importance, reach_curve


def test_a_rate_over_zero_answered_continuations_is_zero_as_in_the_code():
    """The code's chunk accuracy is correct / total if total > 0 else 0.0 over the rollouts
    with an answer: here r is 0.0 too, and RI a number."""
    cuts = [
        CutRollouts((None, None), (True, True)),  # c_0: two continuations, no answer stated
        CutRollouts((5, 5), (True, False)),  # c_1
        CutRollouts((5,)),  # c_m = T
    ]
    assert reach_curve(cuts, 5) == [0.0, 1.0, 1.0]
    first, last = chunk_importance(cuts, 5)
    assert first.resampling == 1.0  # r(c_1) - r(c_0) = 1.0 - 0.0, the code's number


def test_where_the_code_returns_zero_for_want_of_answers_the_importance_is_undefined():
    """calculate_resampling_importance_kl gates on every rollout of both chunks (two each
    here), then calculate_kl_divergence returns 0.0 as one side states no answer; CI's gates are
    on the answered rollouts, 0.0 as well. Here each is NaN (None in the record)."""
    no_answer_here = [CutRollouts((None, None), (True, True)), CutRollouts((5, 5)), CutRollouts(())]
    no_answer_next = [
        CutRollouts((5, 4), (True, False)),
        CutRollouts((None, None)),
        CutRollouts(()),
    ]
    for cuts in (no_answer_here, no_answer_next):
        chunk = chunk_importance(cuts, 5)[0]
        assert not math.isnan(chunk.resampling)
        assert math.isnan(chunk.resampling_kl)
        assert math.isnan(chunk.counterfactual)
        assert math.isnan(chunk.counterfactual_accuracy)
    assert chunk_importance(no_answer_next, 5)[0].resampling == pytest.approx(-0.5)
    assert math.isnan(answer_kl([None], [5]))


def test_with_answers_on_both_sides_the_kl_is_the_codes():
    """calculate_kl_divergence over the answer distributions, alpha = 1e-9: D([5, 5] || [5, 4])
    = sum_a p~ log(p~ / q~) ~ log 2 (the 4 term vanishes with p~(4) ~ 0)."""
    assert answer_kl([5, 5, None], [5, 4]) == pytest.approx(math.log(2), rel=1e-6)
