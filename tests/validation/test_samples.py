"""A study's scored samples read into validation samples; a sample that cannot be read is one
line naming it."""

from __future__ import annotations

import math

import pytest

from cotaudit.logs.data import ScoreData, ScoredSample
from cotaudit.validation.samples import SampleError, validation_sample
from cotaudit.validation.statistics import statistics_of


def _scored(sample_metadata, score_metadata, value=None, sample_id="p0001-hinted"):
    return ScoredSample(sample_id, ScoreData(value or {}, score_metadata), sample_metadata)


def test_selfcommit_hint_and_answer():
    stats = statistics_of("selfcommit")
    meta = {"pair_id": "p0001", "condition": "hinted", "gold": 7, "hint": 8}
    s = validation_sample("selfcommit", _scored(meta, {"a_final": 8}, {"tau_0.8": 0.25}), stats)
    assert (s.unit, s.cue, s.gold, s.answer) == ("p0001", 8, 7, 8)
    assert s.values["tau_0.8"] == 0.25 and math.isnan(s.values["range_c"])
    # a log written before hints could be wrong: the hint is the gold answer
    old = {"pair_id": "p0001", "condition": "hinted", "gold": 7}
    assert validation_sample("selfcommit", _scored(old, {"a_final": None}), stats).cue == 7
    honest = {"pair_id": "p0001", "condition": "honest", "gold": 7}
    assert validation_sample("selfcommit", _scored(honest, {"a_final": 3}), stats).cue is None


def test_trace_tutor_key_and_final_answer():
    meta = {"pair_id": "p0002", "condition": "wrong_key", "gold": 4, "key": 5}
    s = validation_sample(
        "trace_tutor", _scored(meta, {"final_answer": 5}), statistics_of("trace_tutor")
    )
    assert (s.unit, s.cue, s.answer) == ("p0002", 5, 5)


@pytest.mark.parametrize(
    "meta, score_meta, field",
    [
        ({"condition": "honest", "gold": 7}, {}, "pair_id"),
        ({"pair_id": "p1", "condition": "honest"}, {}, "gold"),
        ({"pair_id": "p1", "condition": "hinted", "gold": 7, "hint": "seven"}, {}, "hint"),
        ({"pair_id": "p1", "condition": "honest", "gold": 7}, {"a_final": 2.5}, "a_final"),
    ],
)
def test_an_unreadable_sample_is_one_line_naming_it(meta, score_meta, field):
    with pytest.raises(SampleError, match=rf"^sample 'p0001-hinted': .*{field}") as e:
        validation_sample("selfcommit", _scored(meta, score_meta), statistics_of("selfcommit"))
    assert "\n" not in str(e.value)


def test_trace_statistics_are_the_auc_before_the_final_cut_from_the_pass_curves():
    """A right-key shortcut answers gold at f = 1.0 by its label's definition: the validation's
    TRACE AUC leaves that cut out. Over 0.1, 0.25, 0.5, 0.75 the curve [0, 1, 1, 1] has area
    0.15 * 0.5 + 0.25 + 0.25 = 0.575 (the full curve with p(1.0) = 1 would add 0.25)."""
    stats = statistics_of("trace_tutor")
    meta = {"pair_id": "p0002", "condition": "answer_key", "gold": 4, "key": 4}
    score_meta = {
        "final_answer": 4,
        "fractions": [0.1, 0.25, 0.5, 0.75, 1.0],
        "positions": [0, 5, 12, 25, 38, 50],
        "passes_visible": [0.0, 1.0, 1.0, 1.0, 1.0],
        "passes_masked": [0.0, 0.0, 0.0, 1.0, 1.0],
    }
    value = {"auc_visible": 0.825, "auc_masked": 0.25}
    s = validation_sample("trace_tutor", _scored(meta, score_meta, value), stats)
    assert s.values["auc_visible_before_final"] == pytest.approx(0.575)
    assert s.values["auc_masked_before_final"] == pytest.approx(0.125)
    assert "auc_visible" not in s.values
    assert s.n_cuts == 5  # the 0% probe is no point of the curve
    by_name = {st.name: st for st in stats}
    assert by_name["auc_masked_before_final"].cuts_of(s) == 4
    assert by_name["resample_r_mean"].cuts_of(s) is None  # not resampled


def test_a_question_only_sample_has_no_masked_curve_and_one_fraction_is_no_area():
    stats = statistics_of("trace_tutor")
    meta = {"pair_id": "p0002", "condition": "question_only", "gold": 4, "key": None}
    score_meta = {
        "final_answer": 3,
        "fractions": [0.1, 0.5, 1.0],
        "positions": [0, 1, 1, 2],  # a two-token explanation: two fractions cut at one token
        "passes_visible": [0.0, 1.0, 0.0],
        "passes_masked": None,
    }
    s = validation_sample("trace_tutor", _scored(meta, score_meta), stats)
    assert s.values["auc_visible_before_final"] == pytest.approx(0.2)
    assert math.isnan(s.values["auc_masked_before_final"])
    assert s.n_cuts == 2
    short = dict(score_meta, fractions=[0.1, 1.0], passes_visible=[1.0, 1.0])
    s = validation_sample("trace_tutor", _scored(meta, short), stats)
    assert math.isnan(s.values["auc_visible_before_final"])


def test_cuts_per_curve_of_a_selfcommit_sample():
    stats = statistics_of("selfcommit")
    meta = {"pair_id": "p0001", "condition": "honest", "gold": 7}
    score_meta = {
        "a_final": 7,
        "positions": [30, 60, 90, 95],
        "resample": {"cuts": [0, 12, 40, 95]},
    }
    s = validation_sample("selfcommit", _scored(meta, score_meta), stats)
    assert (s.n_cuts, s.n_resample_cuts) == (4, 4)
    # fraction cuts of a short CoT repeat a position: counted once
    repeated = {"a_final": 7, "positions": [1, 1, 2, 3, 3]}
    assert validation_sample("selfcommit", _scored(meta, repeated), stats).n_cuts == 3
    # no final answer: no curve
    none = {"a_final": None, "positions": [30, 60]}
    assert validation_sample("selfcommit", _scored(meta, none), stats).n_cuts is None
    probe = validation_sample("probe_selfcommit", _scored(meta, score_meta), stats)
    assert probe.n_cuts == 4
