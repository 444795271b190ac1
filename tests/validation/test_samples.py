"""A study's scored samples read into validation samples; a sample that cannot be read is one
line naming it."""

from __future__ import annotations

import math

import pytest

from cotaudit.report.data import ScoreData, ScoredSample
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
