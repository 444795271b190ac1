"""The audit records of a probe sweep (pure: the transcript events' contents)."""

from __future__ import annotations

from cotaudit.answers import extract_forced_answer
from cotaudit.probing.audit import (
    ANSWER_CHARS,
    clipped,
    cut_record,
    label,
    prefix_end,
    sweep_header,
    verdict_record,
)


def test_texts_are_clipped_with_an_ellipsis():
    assert clipped("18.", 5) == "18."
    assert clipped("abcdef", 5) == "abcd…"  # 4 characters + "…" = 5
    assert len(clipped("x" * 500, ANSWER_CHARS)) == ANSWER_CHARS


def test_prefix_end_marks_a_prefix_longer_than_what_it_shows():
    assert prefix_end("She has 3 apples") == "She has 3 apples"  # the whole prefix, short
    assert prefix_end("0123456789", limit=4) == "…6789"
    # the decoding of the prefix's last tokens: "…" even when short; a leading replacement
    # character (a character cut in two by the slice) is dropped
    assert prefix_end("\ufffd\ufffd apples", whole=False) == "… apples"
    assert prefix_end("", whole=True) == ""  # t = 0: nothing before the tag


def test_cut_record_parses_and_judges_each_answer():
    a_final = 18

    def judge(answer: str) -> tuple[int | None, bool]:
        parsed = extract_forced_answer(answer)
        return parsed, parsed == a_final

    answers = ["18.", "18 dollars", "20", "no idea " * 10]
    record = cut_record(
        context="own", t=30, offset=4, prefix_text="so she pays", answers=answers, judge=judge
    )
    assert record == {
        "t": 30,
        "prefix_tokens": 34,  # offset 4 + t 30
        "matches": 2,
        "prefix_end": "so she pays",
        "answers": ["18.", "18 dollars", "20", clipped("no idea " * 10, ANSWER_CHARS)],
        "parsed": [18, 18, 20, None],
        "match": [True, True, False, False],
        "context": "own",
    }
    assert list(record)[:3] == ["t", "prefix_tokens", "matches"]  # what the folded view shows
    assert label(record) == "probe own t=30: 2/4 match"
    # without a judge (the generic probe: its task's scorer verifies later) only the texts
    plain = cut_record(context="replay", t=0, offset=0, prefix_text="", answers=["B"])
    assert plain == {
        "t": 0,
        "prefix_tokens": 0,
        "prefix_end": "",
        "answers": ["B"],
        "context": "replay",
    }
    assert label(plain) == "probe replay t=0"


def test_sweep_header_and_verdict_record():
    header = sweep_header(
        context="masked",
        tag="\n\nThe final answer is ",
        k=5,
        temperature=0.7,
        max_tokens=8,
        response_tokens=61,
        positions=[30, 60, 61],
        gold=18,
    )
    assert header == {
        "context": "masked",
        "tag": "\n\nThe final answer is ",
        "k": 5,
        "temperature": 0.7,
        "answer_max_tokens": 8,
        "response_tokens": 61,
        "offset": 0,
        "gold": 18,
        "positions": [30, 60, 61],
    }
    assert label(header) == "probe masked"
    trace = verdict_record(context="own", t=20, canonical=["B", None], values=[1.0, 0.0])
    assert trace == {
        "t": 20,
        "correct": 1.0,
        "canonical": ["B", None],
        "values": [1.0, 0.0],
        "context": "own",
    }
    assert label(trace) == "probe verdict own t=20: 1/2 correct"
    # self-commitment: a match is the canonical answer equal to a_final, whatever the target
    selfcommit = verdict_record(
        context="own", t=20, canonical=["7", "9", None], values=[0, 1, 0], reference="7"
    )
    assert selfcommit == {
        "t": 20,
        "correct": 1.0,
        "matches": 1,
        "canonical": ["7", "9", None],
        "values": [0, 1, 0],
        "match": [True, False, False],
        "context": "own",
    }
    assert label(selfcommit) == "probe verdict own t=20: 1/3 correct, 1/3 match"
