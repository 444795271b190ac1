"""The probe core's pure logic, with hand-derived cases (no model)."""

from __future__ import annotations

import asyncio
import json
import math

import pytest

from cotaudit.datasets.gsm8k import DatasetError, load_problems
from cotaudit.datasets.shipped import (
    LETTERS,
    build_gsm8k_mc,
    data_path,
    load_capitals,
    load_gsm8k_mc,
)
from cotaudit.engine.base import PrefixRequest
from cotaudit.probing.forms import (
    clip,
    extract_integer,
    extract_letter,
    extract_string,
    get_form,
)
from cotaudit.probing.positions import Schedule
from cotaudit.probing.summaries import pass_rates, selfcommit_summaries, trace_summaries
from cotaudit.probing.sweep import Prefixes, force_answers
from cotaudit.probing.think import (
    compose_reasoning,
    cut_tag,
    split_trace,
    token_span,
)

# --- answer forms -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("B", "B"),
        ("b", "B"),
        ("ANSWER: C", "C"),
        ("Let me think.\nANSWER: A\n", "A"),
        ("ANSWER: C, A", "A, C"),
        ("B) 18 eggs", "B"),
        ("(D)", "D"),
        ("", None),
        ("the eggs", None),
    ],
)
def test_extract_letter(text, expected):
    assert extract_letter(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("18", "18"),
        ("The final answer is 18.", "18"),
        ("$1,234.00", "1234"),
        ("so 9 * 2 = 18. The final answer is 18.", "18"),
        ("1/2", None),
        (None, None),
    ],
)
def test_extract_integer(text, expected):
    assert extract_integer(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Paris", "paris"),
        ("The answer is Paris.", "paris"),
        ("France's capital...\nThe answer is Buenos  Aires!", "buenos aires"),
        ("answer: New Delhi\nmore text", "new delhi"),
        ("It is Rome", "it is rome"),
        ("   ", None),
    ],
)
def test_extract_string(text, expected):
    assert extract_string(text) == expected


def test_clip_keeps_the_first_non_empty_line():
    assert clip("\n  B\nbecause ...") == "B"
    assert clip("") == ""


def test_forms_have_their_tags_and_same():
    assert get_form("letter").tag == "\n\nANSWER: "
    assert get_form("integer").tag == "\n\nThe final answer is "
    assert get_form("letter").verification_text(" C) 18\nbecause") == "ANSWER: C) 18"
    assert get_form("string").verification_text("Paris.") == "The answer is Paris."
    assert get_form("integer").same("The final answer is 18 dollars", "The final answer is 18.")
    assert get_form("integer").same("18", "\\boxed{18}")  # a bare answer (a Score.answer)
    # the integer form reads a stated answer: a text that states none has none, whatever number
    # it ends with (the last-number reading would read 18 here and call the two the same)
    assert not get_form("integer").same("Step 2: we need to add 18", "The final answer is 18.")
    assert not get_form("integer").same(None, None)
    with pytest.raises(ValueError, match="unknown answer form 'float'"):
        get_form("float")


# --- think blocks ------------------------------------------------------------------------------


def test_split_without_think_block_is_all_trace():
    s = split_trace("Step 1. The final answer is 18.")
    assert (s.start, s.end, s.closed, s.source) == (0, 31, True, "none")
    assert s.final_text == "Step 1. The final answer is 18."
    assert not s.think


def test_split_think_written_in_the_response():
    text = "<think>9 * 2 = 18</think>\n\nANSWER: B"
    s = split_trace(text)
    assert text[s.start : s.end] == "9 * 2 = 18"
    assert (s.closed, s.final_text, s.source) == (True, "ANSWER: B", "text")


def test_split_think_opened_by_the_template_and_unclosed():
    s = split_trace("9 * 2 = 18 and then", opened_by_prompt=True)
    assert (s.start, s.end, s.closed, s.final_text, s.source) == (0, 19, False, "", "prompt")


def test_split_closer_without_visible_opener():
    s = split_trace("reasoning</think>The answer is 18")
    assert (s.end, s.final_text, s.source) == (9, "The answer is 18", "prompt")


def test_reasoning_content_composes_a_think_block():
    text = compose_reasoning("9 * 2 = 18", "ANSWER: B")
    s = split_trace(text, source="reasoning_content")
    assert text[s.start : s.end] == "\n9 * 2 = 18\n"
    assert (s.final_text, s.source) == ("ANSWER: B", "reasoning_content")


def test_token_span_excludes_the_tags():
    # tokens: "<think>", "ab", "c", "</think>", "x"; char spans 0-7, 7-9, 9-10, 10-18, 18-19
    pieces = ["<think>", "ab", "c", "</think>", "x"]
    decode = lambda ids: "".join(pieces[i] for i in ids)  # noqa: E731
    ids = list(range(len(pieces)))
    s = split_trace(decode(ids))
    assert token_span(ids, decode, s.start, s.end) == (1, 3)


def test_token_span_leaves_out_a_token_straddling_the_closer():
    pieces = ["ab", "c</th", "ink>", "x"]  # "c</th" straddles the reasoning's end (3)
    decode = lambda ids: "".join(pieces[i] for i in ids)  # noqa: E731
    s = split_trace(decode(range(4)), opened_by_prompt=True)
    assert token_span(list(range(4)), decode, s.start, s.end) == (0, 1)


def test_cut_tag_closes_the_block_inside_think():
    assert cut_tag("\n\nANSWER: ", inside_think=True) == "\n</think>\n\nANSWER: "
    assert cut_tag("\n\nANSWER: ", inside_think=False) == "\n\nANSWER: "
    assert cut_tag("X", inside_think=True, think_close="</think>") == "</think>X"


# --- positions and summaries -------------------------------------------------------------------


def test_stride_and_fraction_positions():
    assert Schedule(kind="stride", stride=30).positions(95) == [30, 60, 90, 95]
    # round half to even: 2.5 -> 2, 12.5 -> 12; 18.75 -> 19
    fr = Schedule(kind="fractions", zero_probe=True)
    assert fr.positions(25) == [2, 6, 12, 19, 25]
    assert fr.probed(25) == [0, 2, 6, 12, 19, 25]
    assert fr.curve_fractions(25) == [0.1, 0.25, 0.5, 0.75, 1.0]
    assert Schedule(kind="stride", stride=30).curve_fractions(95) == [
        30 / 95,
        60 / 95,
        90 / 95,
        1.0,
    ]


def test_schedule_rejects_bad_fractions():
    with pytest.raises(ValueError, match="strictly increasing"):
        Schedule(kind="fractions", fractions=(0.5, 0.25))
    with pytest.raises(ValueError, match="positive"):
        Schedule(kind="stride", stride=0)


def test_trace_summaries_by_hand():
    # AUC = .15*0 + .25*.5 + .25*1 + .25*1 = 0.625
    out = trace_summaries([0, 0, 1, 1, 1], [0.1, 0.25, 0.5, 0.75, 1.0])
    assert out == {
        "auc": 0.625,
        "pass_at_first": 0.0,
        "first_pass": 0.5,
        "first_pass_censored": 0.0,
    }
    never = trace_summaries([0, 0, 0, 0, 0], [0.1, 0.25, 0.5, 0.75, 1.0])
    assert (never["first_pass"], never["first_pass_censored"]) == (1.0, 1.0)
    assert pass_rates([[1, 0], [1, 1]]) == [0.5, 1.0]


def test_selfcommit_summaries_by_hand_and_without_final():
    out = selfcommit_summaries([30, 60, 90, 95], 95, [0, 1, 5, 5], 5, thetas=(0.8,))
    assert out["uncommitted"] == pytest.approx((5 + 4 + 0 + 0) / 20)
    assert out["tau_0.8"] == pytest.approx(90 / 95)
    assert out["range_c"] == 1.0
    assert all(math.isnan(v) for v in selfcommit_summaries([30], 30, None, 5).values())


# --- the sweep ----------------------------------------------------------------------------------


class RecordingEngine:
    """Answers each cut with its own position (isolates the sweep's bookkeeping)."""

    def __init__(self):
        self.requests: list[PrefixRequest] = []

    async def continue_prefixes(self, request: PrefixRequest) -> list[list[str]]:
        self.requests.append(request)
        return [[f"{t}"] * request.k for t in request.positions]


def test_force_answers_probes_the_cuts_as_given_in_one_request():
    engine = RecordingEngine()
    rows = asyncio.run(
        force_answers(
            engine,
            Prefixes([{"role": "user", "content": "q"}], [5, 6, 7, 8], [3, 1, 1, 4], "T"),
            k=2,
            max_tokens=3,
            temperature=0.5,
            seed=9,
        )
    )
    assert rows == [["3", "3"], ["1", "1"], ["1", "1"], ["4", "4"]]
    (req,) = engine.requests
    assert list(req.positions) == [3, 1, 1, 4] and req.tag == "T" and req.seed == 9
    assert list(req.cot_token_ids) == [5, 6, 7, 8] and (req.k, req.max_tokens) == (2, 3)


# --- shipped datasets ----------------------------------------------------------------------------


def test_shipped_mc_file_is_the_builders_output():
    shipped = load_gsm8k_mc()
    assert shipped == build_gsm8k_mc(50)
    golds = {p.index: p.answer for p in load_problems(limit=50).items}
    for item in shipped:
        assert len(item.choices) == 4 and len(set(item.choices)) == 4
        assert (
            item.choices[LETTERS.index(item.target)]
            == str(item.gold)
            == str(golds[int(item.id[2:])])
        )


def test_capitals_and_a_malformed_row(tmp_path):
    caps = load_capitals()
    assert len(caps) == 30 and caps[0].answer == "Paris"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps({"id": "a", "question": "q", "answer": "x"})
        + "\n"
        + json.dumps({"id": "b", "question": "q"})
        + "\n"
    )
    with pytest.raises(DatasetError, match=r"bad.jsonl:2: missing field 'answer'"):
        load_capitals(bad)
    assert data_path("capitals.jsonl").exists()
