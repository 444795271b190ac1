"""Detection and cue-only AUROCs on hand-built samples: by hand, against scikit-learn, and their
intervals over problems (samples of one problem counted as one unit)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from cotaudit.studies.probe_statistic import ProbeStatistic
from cotaudit.validation.detection import class_rows, detect
from cotaudit.validation.labels import ValidationSample, label_samples
from cotaudit.validation.statistics import statistics_of

TAU = ProbeStatistic("tau_0.8", shortcut_raises=False, meaning="tau_first(0.8)")


def _s(unit, cue, answer, tau, gold=10):
    return ValidationSample(unit=unit, cue=cue, gold=gold, answer=answer, values={"tau_0.8": tau})


SAMPLES = [
    _s("p1", None, 7, 0.5),
    _s("p1", 11, 11, 0.1),  # shortcut
    _s("p2", None, 7, 0.2),
    _s("p2", 11, 11, 0.2),  # shortcut
    _s("p3", None, 7, 0.9),
    _s("p3", 11, 7, 0.6),  # own_answer
    _s("p4", None, 7, math.nan),  # no curve: left out
    _s("p4", 11, 5, 0.3),  # own_answer
]


def test_detection_auroc_by_hand():
    """Shortcut taus 0.1, 0.2 against uncued 0.5, 0.2, 0.9, smaller tau = more shortcut-like:
    0.1 beats all 3, 0.2 beats 2 and ties 1 -> (3 + 2 + 0.5) / 6."""
    [d] = detect(SAMPLES, [TAU], n_boot=200)
    assert d.detection.estimate == pytest.approx(5.5 / 6)
    assert (d.n_shortcut, d.n_uncued, d.detection.n_units) == (2, 3, 3)
    # cue-only: own-answer taus 0.6, 0.3 against 0.5, 0.2, 0.9: 0.6 beats 1 (0.9); 0.3 beats 2
    assert d.cue_only.estimate == pytest.approx(3 / 6)
    assert d.n_own_answer == 2 and d.cue_only.n_units == 4


def test_detection_auroc_equals_scikit_learn_on_random_samples():
    rng = np.random.default_rng(3)
    samples = []
    for i in range(40):
        own = int(rng.integers(0, 5))
        samples.append(_s(f"p{i}", None, own, float(rng.random())))
        cue = 100 + i
        answer = cue if rng.random() < 0.6 else own
        samples.append(_s(f"p{i}", cue, answer, float(rng.random() * 0.7)))
    rows = class_rows(samples, label_samples(samples), TAU, "shortcut")
    expected = roc_auc_score(rows.positive, rows.values)
    [d] = detect(samples, [TAU], n_boot=300)
    assert d.detection.estimate == pytest.approx(expected)
    assert d.detection.low < d.detection.estimate < d.detection.high
    assert d.detection.n_units == 40
    assert d.detection.positive_units == d.n_shortcut and d.detection.negative_units == 40


def test_the_shortcut_mean_is_the_raw_statistic_over_shortcut_samples():
    """The shortcut samples' taus 0.1 and 0.2 (not oriented): mean 0.15; the interval over their
    two problems spans the two values."""
    [d] = detect(SAMPLES, [TAU], n_boot=300)
    assert d.shortcut_mean.estimate == pytest.approx(0.15)
    assert d.shortcut_mean.n_units == 2
    assert (d.shortcut_mean.low, d.shortcut_mean.high) == (pytest.approx(0.1), pytest.approx(0.2))


def test_the_masked_mean_reads_right_keys_only():
    """TRACE statistics read right-key samples: the wrong key's followed sample (0.0) is not in
    the mean, the right key's (0.8, 0.4) are."""
    masked = next(s for s in statistics_of("trace_tutor") if s.name == "auc_masked_before_final")
    samples = [
        ValidationSample(
            "p1", None, 10, 7, {"auc_visible_before_final": 0.2, "auc_masked_before_final": 0.1}
        ),
        ValidationSample(
            "p1", 10, 10, 10, {"auc_visible_before_final": 0.9, "auc_masked_before_final": 0.8}
        ),
        ValidationSample(
            "p1", 11, 10, 11, {"auc_visible_before_final": 0.0, "auc_masked_before_final": 0.0}
        ),
        ValidationSample(
            "p2", None, 20, 7, {"auc_visible_before_final": 0.2, "auc_masked_before_final": 0.1}
        ),
        ValidationSample(
            "p2", 20, 20, 20, {"auc_visible_before_final": 0.9, "auc_masked_before_final": 0.4}
        ),
    ]
    [d] = detect(samples, [masked], n_boot=100)
    assert d.shortcut_mean.estimate == pytest.approx(0.6)


def test_perfect_separation_over_three_problems_keeps_a_positive_width():
    """Every problem holds one shortcut (tau 0.1) and one uncued sample (tau 0.9): AUROC 1,
    every placement 1 (no spread to estimate), so the interval is Newcombe's over the 3
    problems: [t, 1] with (1 - t)^2 = z^2 t (1 - t)[1 + 2((1 - t)/(2 - t) + t/(1 + t))] / 9,
    t just above 1/2 (at t = 1/2 the right side is z^2 7/108 = 0.249 < 1/4). A percentile
    bootstrap would print [1, 1]."""
    samples = [s for i in range(3) for s in (_s(f"p{i}", None, 7, 0.9), _s(f"p{i}", 11, 11, 0.1))]
    [d] = detect(samples, [TAU], n_boot=500)
    assert (d.detection.estimate, d.detection.high) == (1.0, 1.0)
    t = d.detection.low
    assert 0.5 < t < 0.51
    z = 1.959963984540054
    assert (1 - t) ** 2 == pytest.approx(
        z * z * t * (1 - t) * (1 + 2 * ((1 - t) / (2 - t) + t / (1 + t))) / 9, abs=1e-9
    )
    assert d.detection.p_value < 0.025  # the interval's low bound is above 1/2


def test_a_cue_only_auroc_over_one_own_answer_sample_prints_no_interval():
    """One own-answer sample (p3) against three uncued: AUROC 0 (its tau 0.95 is above every
    uncued tau, i.e. less shortcut-like), shown without an interval; the shortcut mean over one
    problem likewise."""
    samples = [
        _s("p1", None, 7, 0.5),
        _s("p2", None, 7, 0.2),
        _s("p3", None, 7, 0.9),
        _s("p3", 11, 7, 0.95),  # own_answer
        _s("p1", 11, 11, 0.1),  # shortcut
    ]
    [d] = detect(samples, [TAU], n_boot=100)
    assert d.cue_only.estimate == 0.0 and d.n_own_answer == 1
    assert math.isnan(d.cue_only.low) and math.isnan(d.cue_only.high)
    assert math.isnan(d.detection.low) and d.detection.estimate == 1.0
    assert d.shortcut_mean.estimate == pytest.approx(0.1) and math.isnan(d.shortcut_mean.low)


def test_trace_statistics_read_right_keys_and_masked_negatives_from_the_public_auc():
    masked = next(s for s in statistics_of("trace_tutor") if s.name == "auc_masked_before_final")
    samples = [
        ValidationSample(
            "p1",
            None,
            10,
            7,
            {"auc_visible_before_final": 0.2, "auc_masked_before_final": math.nan},
        ),
        ValidationSample(
            "p1", 10, 10, 10, {"auc_visible_before_final": 0.9, "auc_masked_before_final": 0.8}
        ),
        ValidationSample(
            "p1", 11, 10, 11, {"auc_visible_before_final": 0.0, "auc_masked_before_final": 0.0}
        ),
    ]
    rows = class_rows(samples, label_samples(samples), masked, "shortcut")
    assert rows.values.tolist() == [0.2, 0.8]  # the wrong key's sample is not read
    assert rows.auroc() == 1.0


def test_the_negative_controls_cue_only_auroc_is_written_below_the_table():
    from cotaudit.organisms import TrainingSettings, get_organism
    from cotaudit.organisms.card import organism_card
    from cotaudit.validation.table import markdown, summarize, validate_run

    card = organism_card(get_organism("hint-ignorer"), "tiny", "/nowhere", TrainingSettings(), 50)
    run = validate_run("log.json", "selfcommit", "local/organism", card, SAMPLES, [TAU], n_boot=100)
    assert run.control and (run.organism, run.step) == ("hint-ignorer", 50)
    last = markdown(summarize([run])).splitlines()[-1]
    assert last.startswith("- negative control hint-ignorer step 50: cue-only AUROC tau_0.8 0.500")
    assert last.endswith("(n = 2 / 3)")


def test_a_hostile_model_name_is_escaped_in_the_table():
    """A model name from a log holding a table pipe, HTML and an escape sequence stays one
    literal cell: no raw ``|``, ``<`` or control character reaches the Markdown."""
    from cotaudit.validation.table import markdown_table, summarize, validate_run

    name = "evil|<script>alert(1)</script>\x1b[31m"
    run = validate_run("log.json", "selfcommit", name, None, SAMPLES, [TAU], n_boot=50)
    table = markdown_table(summarize([run]))
    [row] = [line for line in table.splitlines() if "tau_0.8" in line]
    assert "<script>" not in row and "\x1b" not in row
    assert "evil\\|&lt;script&gt;" in row
    assert row.count(" | ") == table.splitlines()[0].count(" | ")  # the name's pipe escaped
