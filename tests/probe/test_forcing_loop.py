"""The probe core's plan, span and forcing loop without a model: a recording engine (one token
per character; scripted answers that name the prompt, the cut and the row) records every
request, and the records the sweep emits are kept in a list. Expected values are derived by
hand from the trace's characters."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from cotaudit.engine.base import Message, PrefixRequest
from cotaudit.probing.forcing import Continuations, ForcedAnswers
from cotaudit.probing.forcing_loop import ForcingLoop, SweepSpan
from cotaudit.probing.positions import Schedule
from cotaudit.probing.probe_plan import ProbePlanner, Replay, Under
from cotaudit.probing.record import ProbeRecord
from cotaudit.probing.resample_record import ResampleDraws
from cotaudit.probing.sweep_plan import SweepPlan, SweptPrompt, at_schedule
from cotaudit.probing.trace import Trace
from cotaudit.probing.trajectory import Step, StepMark

OWN: list[Message] = [{"role": "user", "content": "q"}]
REPLAY: list[Message] = [{"role": "user", "content": "r"}]


class RecordingEngine:
    """One token per character (id = code point). A forced answer (a request with a tag) is
    ``answer(cut)`` when given, else ``<prompt><cut>.<row>`` (``q4.1``: prompt "q", cut 4, row
    1); a continuation (no tag) is the scripted text for its cut. Every request is recorded in
    order."""

    def __init__(
        self,
        continuations: dict[int, list[str]] | None = None,
        answer: Callable[[int], str] | None = None,
    ) -> None:
        self.requests: list[PrefixRequest] = []
        self.continuations = continuations or {}
        self.answer = answer

    def tokenize(self, text: str) -> list[int]:
        return [ord(c) for c in text]

    def detokenize(self, token_ids: Sequence[int]) -> str:
        return "".join(chr(i) for i in token_ids)

    async def continue_prefixes(self, request: PrefixRequest) -> list[list[str]]:
        self.requests.append(request)
        if not request.tag:
            return [self.continuations[c] for c in request.positions]
        if self.answer is not None:
            return [[self.answer(c)] * request.k for c in request.positions]
        prompt = request.messages[-1]["content"]
        return [[f"{prompt}{c}.{j}" for j in range(request.k)] for c in request.positions]


def trace_of(text: str, **kwargs: Any) -> Trace:
    return Trace(OWN, text, [ord(c) for c in text], "", "stop", **kwargs)


def run(
    engine: RecordingEngine,
    trace: Trace,
    plan_of: Any,
    forced: ForcedAnswers,
    *,
    think: bool,
    emitted: list[dict[str, Any]],
) -> Any:
    """What the probe core's solver does after the chain: the span, the plan, the rounds of
    forced cuts, the record."""
    span = SweepSpan.of(engine, trace, think=think, think_close="</c>", tag=forced.tag)
    trace = trace._replace(span=(span.start, span.end))
    planned: SweepPlan = plan_of(trace)
    loop = ForcingLoop(
        engine,
        planned.prompts,
        trace.ids[: span.end],
        span,
        forced,
        think_close="</c>",
        seed=11,
        emit=emitted.append,
    )
    asyncio.run(planned.cut(span.length, loop.force))
    return planned.record(loop.sweep(trace))


FORCED = ForcedAnswers(tag="T", k=2, temperature=0.5, max_tokens=3, seed=7)


def test_a_stride_sweep_forces_every_cut_under_each_prompt_in_one_request_each():
    engine, emitted = RecordingEngine(), []
    trace = trace_of("abcdefghij")  # 10 tokens, no think block: the whole response is cut
    planner = ProbePlanner(
        "trace", "integer", FORCED, Schedule(kind="stride", stride=4, zero_probe=True), "b"
    )
    unders = [
        Under("own", "a", Replay(OWN, "s1", ["4"])),
        Under("replay", "b", Replay(REPLAY, "s2", ["5"])),
    ]
    record = run(
        engine,
        trace,
        lambda t: planner.plan(engine, t, unders, ""),
        FORCED,
        think=True,
        emitted=emitted,
    )

    # t = 0 (zero probe), then stride 4 up to T = 10, T included
    assert [(r.messages, list(r.positions)) for r in engine.requests] == [
        (OWN, [0, 4, 8, 10]),
        (REPLAY, [0, 4, 8, 10]),
    ]
    for r in engine.requests:
        assert (r.tag, r.k, r.max_tokens, r.temperature, r.seed) == ("T", 2, 3, 0.5, 11)
        assert list(r.cot_token_ids) == trace.ids
    assert isinstance(record, ProbeRecord)
    assert record.probed == [0, 4, 8, 10] and record.positions == [4, 8, 10]
    assert record.curve_fractions == [0.4, 0.8, 1.0]
    assert (record.trace_tokens, record.offset, record.cut_tag) == (10, 0, "T")
    own, replay = record.contexts
    assert own.answers == [["q0.0", "q0.1"], ["q4.0", "q4.1"], ["q8.0", "q8.1"], ["q10.0", "q10.1"]]
    assert replay.answers == [
        ["r0.0", "r0.1"],
        ["r4.0", "r4.1"],
        ["r8.0", "r8.1"],
        ["r10.0", "r10.1"],
    ]
    assert (own.name, own.condition, own.sample_id, own.target) == ("own", "a", "s1", ["4"])
    assert (replay.name, replay.condition, replay.sample_id, replay.target) == (
        "replay",
        "b",
        "s2",
        ["5"],
    )
    assert record.replay_under == "b" and record.steps is None and record.think_cuts is None
    assert own.p_exact is None and own.reference_exact is None  # sampled only: not read exactly

    # per prompt: its header, then one record per cut
    assert [(e["context"], e.get("t")) for e in emitted] == [
        ("own", None),
        ("own", 0),
        ("own", 4),
        ("own", 8),
        ("own", 10),
        ("replay", None),
        ("replay", 0),
        ("replay", 4),
        ("replay", 8),
        ("replay", 10),
    ]
    assert emitted[0] == {
        "context": "own",
        "tag": "T",
        "k": 2,
        "temperature": 0.5,
        "answer_max_tokens": 3,
        "response_tokens": 10,
        "offset": 0,
        "condition": "a",
        "sample_id": "s1",
        "positions": [0, 4, 8, 10],
    }
    assert emitted[2] == {
        "t": 4,
        "prefix_tokens": 4,
        "prefix_end": "abcd",
        "answers": ["q4.0", "q4.1"],
        "context": "own",
    }


def test_a_think_block_is_cut_from_its_first_token_with_the_closer_before_the_tag():
    engine, emitted = RecordingEngine(), []
    # "<think>" is characters 0-6: the block's reasoning "abcdef" is tokens 7..12, T = 6
    trace = trace_of("<think>abcdef</think>X")
    schedule = Schedule(kind="fractions", fractions=(0.5, 1.0), zero_probe=True)
    planner = ProbePlanner("trace", "integer", FORCED, schedule)
    record = run(
        engine,
        trace,
        lambda t: planner.plan(engine, t, [Under("own", None, Replay(OWN))], ""),
        FORCED,
        think=True,
        emitted=emitted,
    )

    (request,) = engine.requests
    assert list(request.positions) == [7, 10, 13]  # offset 7 + t for t = 0, 3, 6
    assert request.tag == "</c>T"
    assert list(request.cot_token_ids) == trace.ids[:13]
    assert (record.offset, record.trace_tokens, record.cut_tag) == (7, 6, "</c>T")
    assert (record.think_source, record.think_closed, record.final_text) == ("text", True, "X")
    assert record.probed == [0, 3, 6] and record.positions == [3, 6]
    assert record.contexts[0].answers == [["q7.0", "q7.1"], ["q10.0", "q10.1"], ["q13.0", "q13.1"]]
    header, *cuts = emitted
    assert (header["response_tokens"], header["offset"], header["positions"]) == (13, 7, [0, 3, 6])
    assert [(c["t"], c["prefix_tokens"], c["prefix_end"]) for c in cuts] == [
        (0, 7, "<think>"),
        (3, 10, "<think>abc"),
        (6, 13, "<think>abcdef"),
    ]


def test_a_trajectorys_steps_are_cut_at_their_ends_closing_a_step_left_inside_think():
    engine, emitted = RecordingEngine(), []
    # s<think>ab | </think>t: the first step ends at character 10, inside the think block
    text = "s<think>ab</think>t"
    steps = (
        Step(kind="assistant", text="s<think>ab", end=10),
        Step(kind="tool_call", name="submit", text="</think>t", end=19),
    )
    trace = trace_of(text, final="t", steps=steps, submitted=True)
    planner = ProbePlanner("trace", "integer", FORCED, Schedule(kind="steps"), None, "lead")
    record = run(
        engine,
        trace,
        lambda t: planner.plan(engine, t, [Under("own", None, Replay(OWN))], ""),
        FORCED,
        think=True,
        emitted=emitted,
    )

    # two rounds: t = 10 inside the block (closer fed first), then t = 19 after it
    assert [(list(r.positions), r.tag) for r in engine.requests] == [([10], "</c>T"), ([19], "T")]
    assert record.probed == [10, 19] and record.think_cuts == [10]
    assert record.schedule.steps == (10, 19) and record.positions == [10, 19]
    assert record.steps == [
        StepMark(kind="assistant", end=10),
        StepMark(kind="tool_call", name="submit", end=19),
    ]
    assert record.contexts[0].answers == [["q10.0", "q10.1"], ["q19.0", "q19.1"]]
    assert record.verification_lead == ""  # a submitted answer is verified alone
    assert [e["step_ends"] for e in emitted if "positions" in e] == [[10, 19], [10, 19]]


def test_the_exact_estimator_alone_samples_nothing():
    engine, emitted = RecordingEngine(), []
    forced = FORCED.model_copy(update={"estimator": "exact"})
    span = SweepSpan.of(engine, trace_of("abcd"), think=False, think_close="</c>", tag="T")
    loop = ForcingLoop(
        engine,
        [SweptPrompt("own", OWN)],
        [97, 98, 99, 100],
        span,
        forced,
        think_close="</c>",
        seed=0,
        emit=emitted.append,
    )
    asyncio.run(at_schedule(Schedule(kind="stride", stride=2))(span.length, loop.force))
    sweep = loop.sweep(trace_of("abcd"))
    assert engine.requests == [] and emitted == []
    assert sweep.probed == [2, 4] and sweep.answers == {"own": [[], []]} and sweep.exact == {}


def test_resampling_forces_then_draws_continuations_from_each_cut():
    from cotaudit.probing.resample_sweep import NOTHING_TO_REACH, ResamplePlanner

    # one sentence "Ab." (3 tokens): cuts c_0 = 0 and its end, 3
    engine = RecordingEngine(continuations={0: ["Ab.", "Zz."], 3: ["", "x"]})
    emitted: list[dict[str, Any]] = []
    notes: list[str] = []
    continuations = Continuations(n=2, temperature=1.0, max_tokens=None, max_cuts=5)
    planner = ResamplePlanner("integer", FORCED, continuations, None, notes.append)
    record = run(
        engine,
        trace_of("Ab."),
        lambda t: planner.plan(engine, t, budget=4, seed=5),
        FORCED,
        think=True,
        emitted=emitted,
    )

    forced_request, *drawn = engine.requests
    assert list(forced_request.positions) == [0, 3] and forced_request.tag == "T"
    # one request per cut, each of the budget minus the tokens before it
    assert [(list(r.positions), r.tag, r.k, r.max_tokens, r.seed) for r in drawn] == [
        ([0], "", 2, 4, 5),
        ([3], "", 2, 1, 5),
    ]
    assert isinstance(record, ResampleDraws)
    assert record.cuts == [0, 3] and record.forced == [["q0.0", "q0.1"], ["q3.0", "q3.1"]]
    assert record.final_text == "Ab." and notes == [] and NOTHING_TO_REACH not in notes
    assert record.prefix_texts == ["", "Ab."] and record.chunk_texts == ["Ab."]
    assert record.continuations == [["Ab.", "Zz."], ["", "x"]]
    # a continuation used its whole budget when its tokens reach it: "x" is 1 token of 1
    assert record.truncated == [[False, False], [False, True]]
    # from cut 0, "Zz." replaced the sentence "Ab." with a dissimilar one; none after the end
    assert record.dissimilar == [[False, True], []]
    assert (record.offset, record.cot_tokens, record.max_tokens, record.seed) == (0, 3, 4, 5)


def test_the_adaptive_selfcommit_schedule_refines_only_between_coarse_cuts_that_differ():
    from cotaudit.studies.selfcommit.record import SelfcommitProbe
    from cotaudit.studies.selfcommit.settings import SelfcommitSettings
    from cotaudit.studies.selfcommit.sweep import SelfcommitPlanner

    # the CoT's own final answer is 7; forced answers say 7 from cut 10 on, 3 before
    engine = RecordingEngine(answer=lambda c: "7" if c >= 10 else "3")
    emitted: list[dict[str, Any]] = []
    completion = "abcdefghi\n#### 7"  # T = 16 tokens
    settings = SelfcommitSettings.model_construct(
        k=2,
        estimator="sampled",
        zero_probe=True,
        schedule="adaptive",
        stride=2,
        fractions=None,
        cuts="tokens",
        max_cuts=20,
        final_answer_reading="stated",
    )
    planner = SelfcommitPlanner(settings, lambda text: None)
    record = run(
        engine,
        trace_of(completion),
        lambda t: planner.plan(engine, t, completion),
        FORCED,
        think=False,
        emitted=emitted,
    )

    # full schedule 2, 4, ..., 16; coarse every 4th from t = 2, plus T: 2, 10, 16 (0 apart);
    # c(2) = 0 and c(10) = 1 differ, so 4, 6, 8 are refined; c(10) = c(16) = 1 is pinned
    assert [list(r.positions) for r in engine.requests] == [[0, 2, 10, 16], [4, 6, 8]]
    assert isinstance(record, SelfcommitProbe)
    assert record.a_final == 7 and record.positions == [2, 4, 6, 8, 10, 12, 14, 16]
    assert record.matches == [0, 0, 0, 0, 2, 2, 2, 2]
    assert record.imputed == [False, False, False, False, False, True, True, False]
    assert record.c0 == 0.0 and record.prefixes_probed == 7
    assert record.answers[4] == ["7", "7"] and record.answers[5] == []  # t = 12 not probed
    cut_at_10 = next(e for e in emitted if e.get("t") == 10)
    assert (cut_at_10["matches"], cut_at_10["parsed"], cut_at_10["match"]) == (
        2,
        [7, 7],
        [True, True],
    )
