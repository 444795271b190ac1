"""The exact estimator's forms and arithmetic (pure), and its token classes checked against the
parsers on the embedded model's real vocabulary."""

from __future__ import annotations

import math

import pytest

from cotaudit.answers import extract_forced_answer
from cotaudit.engine.base import AnswerScores, Vocabulary
from cotaudit.probing.exact import (
    ExactPlan,
    after_separator_ends,
    exact_temperature,
    integer_plan,
    letter_plan,
    number_ends,
    string_ends,
    string_plan,
    token_classes,
)
from cotaudit.probing.forms import ExactReference, extract_string, get_form

# a toy vocabulary: id -> text; id 0 is the end of sequence
TOY = ("", "1", "8", "$", ".", ",", " dollars", "\n", "5", "\\", "boxed", "{", "}", "-", "A", " B")
TOY_VOCAB = Vocabulary(TOY, frozenset({0}))


def toy_tokenize(text: str) -> list[int]:
    """Greedy longest match over the toy vocabulary."""
    out, i = [], 0
    while i < len(text):
        best = max(
            (j for j, t in enumerate(TOY) if t and text.startswith(t, i)), key=lambda j: len(TOY[j])
        )
        out.append(best)
        i += len(TOY[best])
    return out


@pytest.mark.parametrize(
    ("text", "ends"),
    [
        (" dollars", True),
        ("\n", True),
        ("\n\n", True),
        ("}", True),
        (")", True),
        (".\n", True),
        (". ", True),
        ("eggs", True),
        ("!", True),
        ("5", False),
        ("0", False),
        (".", False),
        (",", False),
        (".5", False),
        (",000", False),
        ("+", False),
        (" +", False),
        (" 5", False),
        (" ", False),
        ("x", False),
        (" x", False),
        ("e", False),
        ("$", False),
        ("\ufffd", False),
        ("", False),
    ],
)
def test_number_endings_by_hand(text: str, ends: bool) -> None:
    assert number_ends(text) is ends


def test_separator_and_string_endings_by_hand() -> None:
    assert after_separator_ends("\n") and after_separator_ends(" dollars")
    assert not after_separator_ends("5") and not after_separator_ends("")
    assert string_ends("\n") and string_ends(".\n") and string_ends(" \nNext")
    assert not string_ends(".") and not string_ends(" Paris") and not string_ends("a\n")


def test_integer_plan_adds_up_forms_and_endings_by_hand() -> None:
    """p = sum over counted (path, ending) events of P(path) * P(ending | path)."""
    classes = token_classes(TOY_VOCAB)
    plan = integer_plan(18, toy_tokenize, classes, max_tokens=8)
    tree = plan.tree
    paths = {tuple(TOY[t] for t in tree.path(i)) for i in range(len(tree))}
    assert ("1", "8") in paths and ("$", "1", "8") in paths
    assert ("\\", "boxed", "{", "1", "8") in paths and ("1", "8", ".") in paths
    # every node log-prob log(0.5); every read mass 0.1
    scores = AnswerScores([math.log(0.5)] * len(tree), [0.1] * len(plan.reads))
    point = plan.point(scores)
    expected = 0.0
    for r in plan.p_reads:
        node, _ = plan.reads[r]
        expected += 0.5 ** len(tree.path(node)) * 0.1
    assert point.p == pytest.approx(expected)
    # by hand: "18"+end, "18."+end, "18,"+end, "$18"..., "\boxed{18"...:
    # 0.1 * (0.25 + 0.125 * 2) + 0.1 * (0.125 + 0.0625 * 2) + 0.1 * (0.5**5 + 0.5**6 * 2)
    assert point.p == pytest.approx(0.1 * (0.5 + 0.25 + 0.0625))
    # covered: "" "$" "-" "\boxed{" openers, each then a digit: 0.1 * (1 + 0.5 + 0.5 + 0.125)
    assert point.covered == pytest.approx(0.1 * (1 + 0.5 + 0.5 + 0.125))


def test_integer_plan_counts_the_answer_budget_as_sampling_does() -> None:
    """With 3 tokens: "18" + ending fits; "18." and "$18" fill the budget and count whole (the
    answer ends there); "$18." and "\\boxed{18" do not fit."""
    classes = token_classes(TOY_VOCAB)
    plan = integer_plan(18, toy_tokenize, classes, max_tokens=3)
    with_ending = [tuple(TOY[t] for t in plan.tree.path(plan.reads[r][0])) for r in plan.p_reads]
    whole = [tuple(TOY[t] for t in plan.tree.path(n)) for n in plan.p_paths]
    assert with_ending == [("1", "8")]
    assert sorted(whole) == sorted([("1", "8", "."), ("1", "8", ","), ("$", "1", "8")])
    scores = AnswerScores([math.log(0.5)] * len(plan.tree), [0.1] * len(plan.reads))
    assert plan.point(scores).p == pytest.approx(0.25 * 0.1 + 3 * 0.125)


def test_no_reference_reads_coverage_only() -> None:
    plan = integer_plan(None, toy_tokenize, token_classes(TOY_VOCAB), max_tokens=8)
    scores = AnswerScores([math.log(0.5)] * len(plan.tree), [0.2] * len(plan.reads))
    assert plan.point(scores).p == 0.0 and plan.point(scores).covered > 0


def test_letter_plan_reads_the_distribution_over_letters() -> None:
    plan = letter_plan("B", ["A", "B"], token_classes(TOY_VOCAB))
    scores = AnswerScores([], [0.3, 0.6])
    point = plan.point(scores)
    assert point.letters == {"A": 0.3, "B": 0.6}
    assert point.p == 0.6 and point.covered == pytest.approx(0.9)
    with pytest.raises(ValueError, match="letter 'C'"):
        letter_plan("C", ["C"], token_classes(TOY_VOCAB))


def test_overlapping_forms_are_refused() -> None:
    classes = token_classes(TOY_VOCAB)
    plan = ExactPlan()
    plan.count(plan.p_reads, plan.node([1, 2]), classes.number_end)
    plan.count(plan.p_reads, plan.node([1, 2, 7]), classes.number_end)  # "18" + "\n": counted
    with pytest.raises(ValueError, match="overlap"):
        plan.check_disjoint()


def test_reference_dispatch_and_temperature_rule() -> None:
    classes = token_classes(TOY_VOCAB)
    assert ExactReference(get_form("letter"), "A", letters=("A", "B")).plan(
        toy_tokenize, classes, 4
    ).letter_reads.keys() == {"A", "B"}
    with pytest.raises(ValueError, match="unknown answer form 'date'"):
        get_form("date")
    assert exact_temperature(0.7) == 0.7 and exact_temperature(0.0) == 1.0


# --- on the embedded model's vocabulary -------------------------------------------------------

ADVERSARIAL = ("", "5", " 5", "+5", " + 5", ".5", ",000", "x5", "e5", "*2", "/2", " eggs")


@pytest.fixture(scope="module")
def real_vocab() -> tuple[Vocabulary, object]:
    from transformers import AutoTokenizer

    from cotaudit.engine.vocabulary import vocabulary_of
    from cotaudit.models.default import default_model_path

    tokenizer = AutoTokenizer.from_pretrained(str(default_model_path()))
    return vocabulary_of(tokenizer, [tokenizer.eos_token_id]), tokenizer


def _by_start(texts: list[str]) -> list[str]:
    """One token text per (first three characters, has a line break): what the parser's reading
    of the number before it depends on."""
    seen: dict[tuple[str, bool], str] = {}
    for text in texts:
        seen.setdefault((text[:3], "\n" in text), text)
    return list(seen.values())


def test_every_number_ending_of_the_real_vocabulary_keeps_the_number(real_vocab) -> None:
    """For each token the estimator counts as ending a number (one per start, see
    :func:`_by_start`), the forced-answer parser reads the number whatever follows (a line
    break: the documented approximation, checked without operators after it)."""
    vocab, _ = real_vocab
    classes = token_classes(vocab)
    wrong = []
    texts = _by_start([vocab.texts[i] for i in sorted(classes.number_end - vocab.eos_ids)])
    for text in texts:
        suffixes = ADVERSARIAL if "\n" not in text else ("", "5", " eggs", "\n7")
        for opener in ("", "$", "\\boxed{"):
            for suffix in suffixes:
                if extract_forced_answer(opener + "18" + text + suffix) != 18:
                    wrong.append((opener, text, suffix))
    assert not wrong, wrong[:20]
    assert len(texts) > 1000 and len(classes.number_end) > 40_000  # most tokens end a number


def test_every_separator_ending_of_the_real_vocabulary_keeps_the_number(real_vocab) -> None:
    vocab, _ = real_vocab
    classes = token_classes(vocab)
    wrong = [
        (sep, vocab.texts[i])
        for sep in (".", ",")
        for i in sorted(classes.after_separator - vocab.eos_ids)
        if extract_forced_answer("18" + sep + vocab.texts[i]) != 18
    ]
    assert not wrong, wrong[:20]
    assert {vocab.texts[i] for i in classes.separators} == {".", ","}


def test_digit_tokens_and_string_endings_of_the_real_vocabulary(real_vocab) -> None:
    vocab, tokenizer = real_vocab
    classes = token_classes(vocab)
    assert {vocab.texts[i] for i in classes.digit_start} >= set("0123456789")
    wrong = [
        vocab.texts[i]
        for i in sorted(classes.string_end - vocab.eos_ids)
        if extract_string("The answer is Paris" + vocab.texts[i] + "Lyon") != "paris"
    ]
    assert not wrong, wrong[:20]
    plan = string_plan("paris", ["Paris"], tokenizer.encode, classes, max_tokens=12)
    counted = {tokenizer.decode(plan.tree.path(plan.reads[r][0])) for r in plan.p_reads}
    assert {"Paris", "paris", "Paris."} <= counted
