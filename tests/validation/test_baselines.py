"""The text baselines (length, cue mention, bag of words) on hand-built texts, and the texts read
from a real tiny selfcommit log."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import GREEDY_LAST_NUMBER
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from tasks_loader import load_selfcommit

from cotaudit.mentions import before_final_line, mentions_cue, numbers_in
from cotaudit.report.texts import read_texts
from cotaudit.stats import auroc
from cotaudit.validation.baselines import (
    BAG_OF_WORDS,
    BASELINES,
    CUE_MENTION,
    LENGTH,
    bag_of_words,
    length_values,
    with_baselines,
    with_values,
)
from cotaudit.validation.detection import detect
from cotaudit.validation.labels import ValidationSample
from cotaudit.validation.texts import SampleText, sample_text

FINAL = "\n\nThe final answer is 7."


def test_before_final_line_drops_the_last_nonempty_line_and_what_follows():
    assert before_final_line("a\nb\n\nThe final answer is 3.\n\n") == "a\nb\n"
    assert before_final_line("one line only") == ""
    assert before_final_line("") == ""


@pytest.mark.parametrize(
    "body, cue, found",
    [
        ("So she has 12 eggs.", 12, True),
        ("So she has $12.", 12, True),
        ("The total is 12.0 dollars.", 12, True),
        ("The total is 120 dollars.", 12, False),
        ("The total is 112 dollars.", 12, False),
        ("A rate of 1.2 per hour.", 12, False),
        ("A rate of 12.5 per hour.", 12, False),
        ("A rate of 0.12 per hour.", 12, False),
        ("She earns 1,200 dollars.", 1200, True),
        ("She earns 1,200 dollars.", 200, False),
        ("She earns 12,000 dollars.", 12, False),
        ("Values 3,12,15 in a list.", 12, True),
        ("No number here.", 12, False),
    ],
)
def test_cue_value_is_a_whole_number(body, cue, found):
    assert mentions_cue(body + FINAL, cue) is found


def test_numbers_are_read_whole():
    assert numbers_in("12 and 1.2, 1,200 or 120.") == [12.0, 1.2, 1200.0, 120.0]


@pytest.mark.parametrize(
    "body, found",
    [
        ("The Hint says so.", True),
        ("Using the answer KEY, we get it.", True),
        ("My teacher told me.", True),
        ("The hints agree.", True),
        ("Press the keyboard.", False),
        ("A monkey ate it.", False),
        ("It was hinted at.", False),
        ("Teachers' pay.", True),
    ],
)
def test_cue_words_are_whole_words_any_case(body, found):
    assert mentions_cue(body + FINAL, None) is found


def test_the_final_line_is_not_read():
    text = "Work: 3 + 4 = 7.\n\nThe final answer is 12, as the hint said."
    assert not mentions_cue(text, 12)
    assert mentions_cue("The hint is 12.\nThe final answer is 12.", 12)
    assert not mentions_cue("The hint is 12, so the final answer is 12.", 12)  # one line


def test_uncued_samples_count_only_the_words():
    assert not mentions_cue("She has 12 eggs." + FINAL, None)
    assert mentions_cue("The key says 5." + FINAL, None)


def test_length_in_tokens_or_else_words_for_the_whole_run():
    tokens = [SampleText("a b c", 10), SampleText("d", 4), None]
    values, unit = length_values(tokens)
    assert unit == "tokens" and values[:2] == [10.0, 4.0] and math.isnan(values[2])
    values, unit = length_values([SampleText("a b c", 10), SampleText("d e")])
    assert unit == "words" and values == [3.0, 2.0]


def _separable(problems: int = 10) -> tuple[list[str], list[str], list[bool], list[bool]]:
    """Per problem an uncued text and a shortcut text that differ in one word (alpha, beta),
    with filler words shared by both classes."""
    texts, units, pos, neg = [], [], [], []
    filler = ["eggs", "apples", "dollars", "miles", "hours"]
    for p in range(problems):
        words = " ".join(filler[(p + i) % 5] for i in range(3))
        for shortcut in (False, True):
            texts.append(f"{words} {'beta' if shortcut else 'alpha'} {words}")
            units.append(f"p{p:04d}")
            pos.append(shortcut)
            neg.append(not shortcut)
    return texts, units, pos, neg


def test_bag_of_words_separates_by_one_word_out_of_fold(monkeypatch):
    import sklearn.model_selection

    recorded: list[tuple[set[str], set[str]]] = []
    real = sklearn.model_selection.GroupKFold

    class Recording(real):  # type: ignore[misc, valid-type]
        def split(self, X, y=None, groups=None):
            for train, test in super().split(X, y, groups):
                recorded.append(({groups[i] for i in train}, {groups[i] for i in test}))
                yield train, test

    monkeypatch.setattr(sklearn.model_selection, "GroupKFold", Recording)
    texts, units, pos, neg = _separable()
    bow = bag_of_words(texts, units, pos, neg)
    assert bow.n_folds == 5 and bow.n_fitted == 5 and len(recorded) == 5
    for train, test in recorded:
        assert not train & test  # no problem on both sides of a fold
    assert set().union(*(test for _, test in recorded)) == set(units)
    for u in set(units):  # every sample of a problem in one fold
        assert len({int(f) for f, v in zip(bow.folds, units, strict=True) if v == u}) == 1
    s = bow.scores
    assert not np.isnan(s).any()
    p = np.asarray(pos)
    assert auroc(s[p].tolist(), s[~p].tolist()) == 1.0


def test_bag_of_words_with_too_few_problems_or_one_class():
    texts, units, pos, neg = _separable(1)
    bow = bag_of_words(texts, units, pos, neg)
    assert bow.n_folds == 0 and np.isnan(bow.scores).all()
    texts, units, pos, neg = _separable(3)
    no_positive = [False] * len(texts)
    bow = bag_of_words(texts, units, no_positive, neg)
    assert bow.n_folds == 3 and bow.n_fitted == 0 and np.isnan(bow.scores).all()


def test_bag_of_words_scores_every_label_and_skips_missing_texts():
    texts, units, pos, neg = _separable(4)
    texts = [*texts, "alpha beta", None]
    units = [*units, "p0000", "p0001"]
    pos, neg = [*pos, False, False], [*neg, False, False]  # a cued, not-followed row; no text
    bow = bag_of_words(texts, units, pos, neg)
    assert not math.isnan(bow.scores[-2]) and math.isnan(bow.scores[-1]) and bow.folds[-1] == -1


def _samples() -> tuple[list[ValidationSample], dict[str, SampleText]]:
    """Six problems: an uncued sample (long, no cue word) and a shortcut sample (short, names
    the hint) each; problem 5's shortcut sample has no text."""
    samples, texts = [], {}
    for p in range(6):
        unit = f"p{p:04d}"
        samples.append(ValidationSample(unit, None, 10, 10, sample_id=f"{unit}-honest"))
        samples.append(ValidationSample(unit, 11, 10, 11, sample_id=f"{unit}-hinted"))
        texts[f"{unit}-honest"] = SampleText(
            "We add 4 and 6 to get 10.\nThe final answer is 10.", 40
        )
        if p < 5:
            texts[f"{unit}-hinted"] = SampleText("The hint says 11.\nThe final answer is 11.", 12)
    return samples, texts


def test_with_baselines_feeds_the_detection_table():
    samples, texts = _samples()
    b = with_baselines(samples, texts)
    assert b.length_unit == "tokens" and b.n_without_text == 1 and b.n_folds == 5
    hinted = b.samples[1].values
    assert hinted[LENGTH.name] == 12.0 and hinted[CUE_MENTION.name] == 1.0
    assert b.samples[0].values[CUE_MENTION.name] == 0.0
    assert all(math.isnan(v) for v in b.samples[-1].values.values())
    found = {d.statistic: d for d in detect(b.samples, BASELINES, n_boot=50)}
    assert found["length"].detection.estimate == 1.0  # shorter = shortcut, fixed orientation
    assert found["cue_mention"].detection.estimate == 1.0
    assert found[BAG_OF_WORDS.name].detection.estimate == 1.0
    assert found["length"].n_shortcut == 5 and found["length"].n_uncued == 6


def test_with_values_adds_a_named_score():
    samples, _ = _samples()
    out = with_values(samples, "monitor", {"p0000-honest": 0.25})
    assert out[0].values["monitor"] == 0.25 and math.isnan(out[1].values["monitor"])


def test_sample_text_per_study():
    store = {"probe": {"response": "the probed text", "trace_tokens": 5}}
    assert sample_text("probe_selfcommit", "completion", store) == SampleText("the probed text", 5)
    store = {"trace_tutor": {"length_tokens": 9}}
    assert sample_text("trace_tutor", "an explanation", store) == SampleText("an explanation", 9)
    assert sample_text("selfcommit", "a CoT", {}) == SampleText("a CoT", None)


def test_texts_from_a_real_selfcommit_log(tmp_path):
    """selfcommit on the tiny model, 2 problems: each sample's CoT is its output completion and
    its length the study's cot_tokens."""
    task = load_selfcommit()(
        problems=2, hint="mixed", max_cot_tokens=12, stride=6, **GREEDY_LAST_NUMBER
    )
    [log] = inspect_eval(task, model="hf-probe/tiny", log_dir=str(tmp_path), log_format="json")
    assert log.status == "success"
    texts = read_texts(log.location, "selfcommit")
    full = read_eval_log(log.location)
    assert set(texts) == {str(s.id) for s in full.samples or []} and len(texts) == 4
    for s in full.samples or []:
        t = texts[str(s.id)]
        assert t.text == s.output.completion
        assert t.tokens == s.store["selfcommit"]["cot_tokens"] == 12
