"""The sentence splitter on tricky strings and on real CoTs, and its token positions."""

from __future__ import annotations

import pytest

from cotaudit.probing.sentences import capped, sentence_ends, sentences, token_ends


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # plain prose: terminal punctuation then white space; the space stays with its sentence
        (
            "Tom has 3 apples. He buys 4 more! How many now?",
            ["Tom has 3 apples. ", "He buys 4 more! ", "How many now?"],
        ),
        # numbers stay whole
        (
            "The price is 3.5 dollars. Then 1,234 people came.",
            ["The price is 3.5 dollars. ", "Then 1,234 people came."],
        ),
        # abbreviations and initials
        (
            "Use a formula, e.g. the area. Dr. Smith agrees.",
            ["Use a formula, e.g. the area. ", "Dr. Smith agrees."],
        ),
        (
            "J. Smith paid approx. five dollars. Done.",
            ["J. Smith paid approx. five dollars. ", "Done."],
        ),
        # an unlisted abbreviation before a lowercase word ends nothing
        ("It costs 2 dol. per kg. So 6 dollars.", ["It costs 2 dol. per kg. ", "So 6 dollars."]),
        # list markers at a line start; each line is a sentence (newlines kept)
        (
            "Steps:\n1. Add 3 and 4.\n2. Multiply by 2.\n",
            ["Steps:\n", "1. Add 3 and 4.\n", "2. Multiply by 2.\n"],
        ),
        ("a. First.\nb. Second.", ["a. First.\n", "b. Second."]),
        # mathematics: no end inside $...$, $$...$$, \( \), \[ \]
        ("We get $x = 3. Y$ here. Next.", ["We get $x = 3. Y$ here. ", "Next."]),
        (
            "So $$a. B$$ holds. Then \\(c. D\\) and \\[e. F\\] too. End.",
            ["So $$a. B$$ holds. ", "Then \\(c. D\\) and \\[e. F\\] too. ", "End."],
        ),
        # money is not mathematics: "$3.50. Then ... $4." ends a sentence after 3.50
        (
            "It costs $3.50. Then he pays $4. Total $7.50.",
            ["It costs $3.50. ", "Then he pays $4. ", "Total $7.50."],
        ),
        # blank lines stay with the sentence before; closing quotes stay with theirs
        (
            'He said "stop." Then left.\n\nNext para.',
            ['He said "stop." ', "Then left.\n\n", "Next para."],
        ),
        ("", []),
        ("no end at all", ["no end at all"]),
    ],
)
def test_tricky_strings(text, expected):
    assert sentences(text) == expected
    assert "".join(sentences(text)) == text


class _Chars:
    """A tokenizer of one character per token (ids are code points)."""

    @staticmethod
    def detokenize(ids):
        return "".join(chr(i) for i in ids)


def test_sentence_ends_count_whole_tokens():
    text = "Add 3. Then 4.\nDone"
    ids = [ord(c) for c in text]
    # sentences "Add 3. " (7 chars), "Then 4.\n" (8), "Done" (4)
    assert sentence_ends(ids, _Chars.detokenize) == [7, 15, 19]
    assert sentence_ends([], _Chars.detokenize) == []


def test_capped_spreads_cuts_and_keeps_the_last():
    cuts = list(range(10, 110, 10))  # 10 cuts
    assert capped(cuts, 20) == cuts
    assert capped(cuts, 5) == [20, 40, 60, 80, 100]
    assert capped(cuts, 1) == [100]
    with pytest.raises(ValueError, match="positive"):
        capped(cuts, 0)


def test_real_cot_sentences_map_to_the_models_own_tokens(tiny_engine):
    """A CoT in the dataset's words through the tiny model's real (SmolLM2) tokenizer: every
    cut decodes to the text of the sentences up to it, and the token straddling a boundary
    (none here: BPE keeps ". " apart) would go with the next sentence."""
    text = (
        "Natalia sold 48 / 2 = 24 clips in May. Natalia sold 48 + 24 = 72 clips altogether in "
        "April and May.\nThe answer is $72.50 (approx. 72).\n\nThe final answer is 72."
    )
    ids = tiny_engine.tokenize(text)
    cuts = sentence_ends(ids, tiny_engine.detokenize)
    parts = sentences(text)
    assert len(parts) == 4 and len(cuts) == 4 and cuts[-1] == len(ids)
    done = ""
    for part, t in zip(parts, cuts, strict=True):
        done += part
        decoded = tiny_engine.detokenize(ids[:t])
        assert (
            done.startswith(decoded) and len(done) - len(decoded) <= 2
        )  # all but a trailing space
    ends = token_ends(ids, tiny_engine.detokenize)
    assert ends[-1] == len(text) and ends == sorted(ends)


@pytest.mark.model
def test_a_real_greedy_cot_splits_at_its_sentence_ends(default_engine):
    """The embedded model's own greedy CoT on a GSM8K problem: its sentences tile the text,
    each ends at terminal punctuation or a line break (or is the text's end), no end falls
    inside a number, and every cut is a prefix of the model's token ids whose decoded text
    ends within white space of a sentence end."""
    from cotaudit.datasets.gsm8k import load_problems
    from cotaudit.studies.selfcommit.prompts import selfcommit_messages

    question = load_problems(limit=1).items[0].question
    cot = default_engine.generate_sync(selfcommit_messages(question, "honest", 0), 160, 0.0, 0)
    ids, text = cot[0].token_ids, default_engine.detokenize(cot[0].token_ids)
    parts = sentences(text)
    assert "".join(parts) == text and len(parts) >= 3
    for part in parts[:-1]:
        body = part.rstrip()
        assert body.endswith((".", "?", "!", ":", ")", '"', "$")) or part.endswith("\n"), part
        assert not (body[-2:-1].isdigit() and part[len(body) :] == "")  # no cut inside 3.5
    cuts = sentence_ends(ids, default_engine.detokenize)
    assert cuts == sorted(set(cuts)) and cuts[-1] == len(ids) and len(cuts) == len(parts)
    done = ""
    for part, t in zip(parts, cuts, strict=True):
        done += part
        assert done.rstrip().startswith(default_engine.detokenize(ids[:t]).rstrip())


def test_completed_sentences_moves_each_cut_to_its_sentences_end():
    from cotaudit.probing.sentences import completed_sentences

    ends = [5, 12, 20]
    # 0 stays; a cut on an end stays; one inside a sentence runs on to its end; past the last
    # end (no sentence closes there) stays
    assert completed_sentences([0, 1, 5, 6, 12, 19, 20], ends) == [0, 5, 5, 12, 12, 20, 20]
    assert completed_sentences([3, 25], ends) == [5, 25]
    assert completed_sentences([4], []) == [4]
