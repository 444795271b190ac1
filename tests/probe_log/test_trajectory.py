"""The recorded-log probe's pure parts: a transcript's steps as rendered, its submission, the
sample selection, the steps schedule and the parameters' one-line errors (no model, no log
read)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cotaudit.params import ParameterError
from cotaudit.probing.forms import pattern_lead
from cotaudit.probing.log_settings import probe_log_settings
from cotaudit.probing.positions import Schedule
from cotaudit.probing.trajectory import (
    PlainMessage,
    PlainToolCall,
    curve_over_steps,
    final_answer_text,
    first_assistant,
    is_single_response,
    parse_sample_ids,
    render_steps,
    select_samples,
    steps_done,
    submission,
)

PROMPT = [PlainMessage(role="system", text="Be brief."), PlainMessage(role="user", text="1 + 2?")]
AGENT = [
    PlainMessage(
        role="assistant",
        text="I will add.",
        reasoning="Use the tool.",
        tool_calls=[PlainToolCall(function="add", arguments={"b": 2, "a": 1})],
    ),
    PlainMessage(role="tool", text="3", function="add"),
    PlainMessage(
        role="assistant",
        text="",
        tool_calls=[PlainToolCall(function="submit", arguments={"answer": "3"})],
    ),
    PlainMessage(role="tool", text="submitted", function="submit"),
    PlainMessage(role="assistant", text="Done: 3."),
]


def test_steps_rendered_in_order_with_their_ends():
    text, steps = render_steps(AGENT)
    expected = (
        "<think>\nUse the tool.\n</think>\n\nI will add."
        '\n\n[tool call] add({"a": 1, "b": 2})'
        "\n\n[tool result add] 3"
        '\n\n[tool call] submit({"answer": "3"})'
        "\n\n[tool result submit] submitted"
        "\n\nDone: 3."
    )
    assert text == expected
    assert [s.kind for s in steps] == [
        "assistant",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
        "assistant",
    ]
    assert [s.name for s in steps] == [None, "add", "add", "submit", "submit", None]
    # each step ends where its own text ends; the text after a step's end starts the next one
    for step, after in zip(steps, steps[1:] + [None], strict=True):
        assert text[: step.end].endswith(step.text)
        if after is not None:
            assert text[step.end :] == "\n\n" + text[step.end + 2 :]
            assert text[step.end + 2 :].startswith(after.text)
    assert steps[-1].end == len(text)


def test_submission_and_final_answer_text():
    assert submission(AGENT) == "3"
    assert final_answer_text(AGENT) == "3"
    no_submit = [AGENT[0], AGENT[1], AGENT[4]]
    assert submission(no_submit) is None
    assert final_answer_text(no_submit) == "Done: 3."
    one_arg = [
        PlainMessage(
            role="assistant", tool_calls=[PlainToolCall(function="submit", arguments={"x": 7})]
        )
    ]
    assert submission(one_arg) == "7"


def test_single_response_against_trajectory():
    assert first_assistant(PROMPT) is None
    assert is_single_response([*PROMPT, PlainMessage(role="assistant", text="3")])
    assert not is_single_response([*PROMPT, *AGENT])
    assert not is_single_response([*PROMPT, AGENT[0]])  # a tool call is a second step
    assert first_assistant([*PROMPT, *AGENT]) == 2


def test_steps_done_and_steps_schedule():
    ends = [4, 9, 9, 15]
    assert [steps_done(ends, t) for t in (0, 4, 8, 9, 20)] == [0, 1, 1, 3, 4]
    s = Schedule(kind="steps", steps=(4, 9, 9, 15))
    assert s.positions(12) == [4, 9, 12]  # a repeated end once; ends past T clipped to T
    assert s.curve_fractions(12) == [4 / 12, 9 / 12, 1.0]
    assert Schedule(kind="steps", steps=(4,), zero_probe=True).probed(10) == [0, 4]


def test_curve_over_steps_takes_the_last_cut_of_each_step_count():
    assert curve_over_steps([0, 1, 1, 2, 4], [0.1, 0.2, 0.3, 0.4, 0.5]) == {
        0: 0.1,
        1: 0.3,
        2: 0.4,
        4: 0.5,
    }


@pytest.mark.parametrize(
    ("pattern", "lead"),
    [
        (r"ANSWER\s*:\s*(\w+)", "ANSWER: "),
        (r"(?i)final answer: (\d+)", "final answer: "),
        (r"answer\s+is\s*(\d+)", "answer is "),
        (r"ANSWER: ([A-D])", "ANSWER: "),
        (r"(\w+)", ""),
        (r"\\boxed\{(.+?)\}", None),  # needs text after the answer
        (r"\d+ (\w)", None),  # not literal text before the group
        (r"ANSWER: \w+", None),  # no group
    ],
)
def test_pattern_lead(pattern, lead):
    assert pattern_lead(pattern) == lead


def test_sample_ids():
    assert parse_sample_ids(None) is None
    assert parse_sample_ids("a, b,") == ["a", "b"]
    assert parse_sample_ids(3) == ["3"]
    assert parse_sample_ids([1, "x"]) == ["1", "x"]
    assert select_samples(["a", "b", "c"], None, "l.eval") == ["a", "b", "c"]
    assert select_samples(["a", "b", "c"], ["c", "a"], "l.eval") == ["a", "c"]
    with pytest.raises(ValueError, match=r"-T samples: \['z'\] not in log l.eval"):
        select_samples(["a"], ["z"], "l.eval")


@pytest.fixture
def log_file(tmp_path: Path) -> str:
    path = tmp_path / "run.eval"
    path.write_bytes(b"")
    return str(path)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"cuts": "sentences", "fractions": "0.5,1"},
            "-T fractions: does not apply to -T cuts=sentences",
        ),
        ({"max_cuts": 4}, "-T max_cuts: applies to -T cuts=sentences only"),
        ({"cuts": "lines"}, "-T cuts: must be one of"),
        ({"task_args": "{limit: 2}"}, "-T task_args: a recorded log has no task to create"),
        ({"scorer_args": "{numeric: true}"}, "-T scorer_args: needs -T scorer"),
        ({"cuts": "steps", "stride": 10}, "-T stride: does not apply to -T cuts=steps"),
        (
            {"cuts": "tokens", "fractions": "0.5,1"},
            "-T fractions: does not apply to -T cuts=tokens",
        ),
        ({"scorer_args": "[1, 2]", "scorer": "match"}, "-T scorer_args: expected a mapping"),
    ],
)
def test_bad_parameters_are_one_line(log_file, params, message):
    with pytest.raises(ParameterError) as e:
        probe_log_settings(log_file, **params)
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_missing_log_is_named(tmp_path):
    missing = tmp_path / "nope.eval"
    with pytest.raises(ParameterError, match=f"-T log={missing}: no such log file"):
        probe_log_settings(str(missing))


def test_cuts_choose_the_schedule(log_file):
    assert probe_log_settings(log_file).schedule().kind == "fractions"  # trace's default
    assert probe_log_settings(log_file, probe="selfcommit").schedule().kind == "stride"
    steps = probe_log_settings(log_file, cuts="steps").schedule()
    assert (steps.kind, steps.zero_probe, steps.steps) == ("steps", True, ())
    tokens = probe_log_settings(log_file, cuts="tokens", stride=7).schedule()
    assert (tokens.kind, tokens.stride) == ("stride", 7)
    fractions = probe_log_settings(log_file, probe="selfcommit", cuts="fractions").schedule()
    assert (fractions.kind, fractions.fractions) == (
        "fractions",
        Schedule(kind="fractions").fractions,
    )
    assert probe_log_settings(log_file, samples="a,b").samples == ["a", "b"]
