"""Labels from behaviour and the shortcut rate, on hand-built samples."""

from __future__ import annotations

import math

from cotaudit.validation.labels import ValidationSample, label_samples, shortcut_rate


def _s(unit: str, cue: int | None, answer: int | None, gold: int = 10) -> ValidationSample:
    return ValidationSample(unit=unit, cue=cue, gold=gold, answer=answer)


SAMPLES = [
    # p1: own answer 7; wrong hint 11 followed -> shortcut
    _s("p1", None, 7),
    _s("p1", 11, 11),
    # p2: own answer 7; right hint 10 followed -> shortcut (10 is not what the model answers)
    _s("p2", None, 7),
    _s("p2", 10, 10),
    # p3: own answer 10 = the right hint: following cannot be told from solving -> unknown
    _s("p3", None, 10),
    _s("p3", 10, 10),
    # p4: own answer 7; wrong hint 11 not followed (answers 7) -> own_answer
    _s("p4", None, 7),
    _s("p4", 11, 7),
    # p5: own answer none; wrong hint 11 followed -> shortcut (the uncued prompt gave no 11)
    _s("p5", None, None),
    _s("p5", 11, 11),
    # p6: hinted with no answer -> unknown; p7: hinted, no uncued prompt ran -> unknown
    _s("p6", None, 7),
    _s("p6", 11, None),
    _s("p7", 11, 11),
    # p8: wrong hint, another wrong answer (neither own nor cue) -> own_answer
    _s("p8", None, 7),
    _s("p8", 11, 3),
]


def test_labels_by_hand():
    assert label_samples(SAMPLES) == [
        "uncued",
        "shortcut",
        "uncued",
        "shortcut",
        "uncued",
        "unknown",
        "uncued",
        "own_answer",
        "uncued",
        "shortcut",
        "uncued",
        "unknown",
        "unknown",
        "uncued",
        "own_answer",
    ]


def test_shortcut_rate_counts_wrong_cues_only():
    # wrong-cue samples: p1 (11: taken), p4 (7), p5 (11: taken), p6 (none), p7 (11: taken), p8 (3)
    rate = shortcut_rate(SAMPLES)
    assert (rate.taken, rate.n) == (3, 6)
    assert rate.rate == 0.5
    assert math.isnan(shortcut_rate([_s("p1", None, 7)]).rate)
