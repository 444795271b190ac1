"""Solver of the generic probe: run a task's own solver chain, then sweep the prefixes of its trace.

The trace is the last assistant message the chain wrote; the prompt is every message before it.
When that message is the one a ``generate()`` call of the chain returned, both are taken as that
call sent and returned them, so a solver that rewrites the history after generating
(``multiple_choice(shuffle=...)`` writes the unshuffled prompt and "ANSWER: X" back) does not
change what is probed. Its reasoning span (the think block when there is one, see
:mod:`cotaudit.probing.think`) is cut at the schedule's positions and k answers are forced after
each cut, under the trace's own prompt and, with ``replay_under``, under another condition's
prompt with the same tokens. The forced answers are stored raw
(:class:`cotaudit.probing.record.ProbeRecord`) with the target and choices each prompt's answers
are verified against (the sibling's for a replay); the probe scorer verifies them with the task's
own scorer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from copy import deepcopy
from dataclasses import dataclass
from typing import Any, NamedTuple

from inspect_ai.dataset import Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ContentReasoning,
    ModelOutput,
    get_model,
)
from inspect_ai.scorer import Target
from inspect_ai.solver import Choices, Generate, Solver, TaskState, solver

from cotaudit.engine.base import LocalEngine, Message, ProbeEngine
from cotaudit.engine.chat import to_plain
from cotaudit.probing.choices import ShownChoice
from cotaudit.probing.positions import Schedule
from cotaudit.probing.record import ContextAnswers, ProbeRecord
from cotaudit.probing.sweep import context_room
from cotaudit.probing.think import (
    DEFAULT_THINK_CLOSE,
    THINK_OPEN,
    TraceSplit,
    compose_reasoning,
    cut_tag,
    split_trace,
    token_span,
)

from .audit import force_and_record, probe_span
from .engine import completion_token_ids, probe_engine, sample_seed


@dataclass(frozen=True)
class Replay:
    """What a trace is replayed under: the chat prompt, and the sample whose target and choices
    (in the order the prompt shows them) the forced answers are verified against; None: the
    probed sample's own."""

    messages: list[Message]
    sample_id: str | None = None
    target: list[str] | None = None
    choices: list[ShownChoice] | None = None


ReplayPrompt = Callable[[TaskState, str], Awaitable[Replay | list[Message]]]
"""(state, condition) -> what the trace is replayed under: a :class:`Replay`, or a bare prompt
(whose answers are then verified against the probed sample's own target and choices)."""


def shown_choices(choices: Choices) -> list[ShownChoice] | None:
    """A state's choices in the order its prompt shows them (None when it has none)."""
    return [
        ShownChoice(value=c.value, original_position=c.original_position) for c in choices
    ] or None


class _Captured(Exception):
    """Raised by the capturing ``generate`` to stop a solver chain at its first model call."""

    def __init__(self, state: TaskState) -> None:
        self.messages: list[ChatMessage] = list(state.messages)
        self.choices = shown_choices(state.choices)


class SiblingPrompts:
    """Another condition's prompt for the same problem, as the task's own solver chain builds it,
    with that sibling's target and choices.

    The sibling is the dataset sample with the same ``pair_key`` metadata and
    ``condition_key`` = the condition. Its prompt is what the chain sends to its first
    ``generate()`` call (the chain runs on a fresh state of the sibling and is stopped there, no
    model call is made); its choices are the fresh state's at that call, in the order the prompt
    shows them (a chain that shuffles at solve time draws the order then), and its target is the
    sibling's ``Sample.target``."""

    def __init__(
        self, samples: Sequence[Sample], chain: Solver, *, pair_key: str, condition_key: str
    ) -> None:
        self.chain = chain
        self.pair_key, self.condition_key = pair_key, condition_key
        self.index: dict[tuple[str, str], Sample] = {}
        for s in samples:
            meta = s.metadata or {}
            if pair_key in meta and condition_key in meta:
                self.index[(str(meta[pair_key]), str(meta[condition_key]))] = s

    async def __call__(self, state: TaskState, condition: str) -> Replay:
        from inspect_ai._eval.task.util import sample_messages

        pair = (state.metadata or {}).get(self.pair_key)
        sibling = self.index.get((str(pair), condition))
        if sibling is None:
            raise ValueError(
                f"replay_under={condition!r}: sample {state.sample_id!r} has no sibling with "
                f"metadata {self.pair_key}={pair!r} and {self.condition_key}={condition!r} in "
                "the task's dataset"
            )
        fresh = TaskState(
            model=state.model,
            sample_id=sibling.id or 0,
            epoch=state.epoch,
            input=sibling.input,
            target=Target(sibling.target),
            choices=sibling.choices,
            messages=sample_messages(sibling),
            metadata=dict(sibling.metadata or {}),
        )

        async def capture(state: TaskState, *args: Any, **kwargs: Any) -> TaskState:
            raise _Captured(state)

        try:
            await self.chain(fresh, capture)  # type: ignore[arg-type]
        except _Captured as c:
            return Replay(
                messages=to_plain(c.messages),
                sample_id=None if sibling.id is None else str(sibling.id),
                target=list(fresh.target.target),
                choices=c.choices,
            )
        raise ValueError(
            f"replay_under={condition!r}: the task's solver chain never called generate(), so "
            "the prompt it would send under another condition is unknown; pass a replay prompt "
            "function instead"
        )


@dataclass(frozen=True)
class GenerateCall:
    """One ``generate()`` call of the task's chain as the model saw it: the assistant message it
    appended (``returned``, the object in ``state.messages``), copies of that message and of the
    output taken when it returned, and the prompt it was sent (every message before it)."""

    returned: ChatMessage
    message: ChatMessageAssistant
    output: ModelOutput
    prompt: list[Message]


def recording(generate: Generate, calls: list[GenerateCall]) -> Generate:
    """``generate`` that appends a :class:`GenerateCall` to ``calls`` after each call that ends
    with an assistant message."""

    async def call(state: TaskState, *args: Any, **kwargs: Any) -> TaskState:
        state = await generate(state, *args, **kwargs)
        last = state.messages[-1] if state.messages else None
        if isinstance(last, ChatMessageAssistant):
            calls.append(
                GenerateCall(
                    last, deepcopy(last), deepcopy(state.output), to_plain(state.messages[:-1])
                )
            )
        return state

    return call  # type: ignore[return-value]


class Trace(NamedTuple):
    """The chain's trace: the prompt it was written under, the response text, its token ids, the
    think source override (``reasoning_content`` or "") and the generation's stop reason."""

    prompt: list[Message]
    text: str
    ids: list[int]
    source: str
    stop_reason: str


def trace_of(state: TaskState, engine: ProbeEngine, call: GenerateCall | None = None) -> Trace:
    """The chain's trace: its last assistant message and the messages before it; when that message
    is the one ``call`` returned, the message, output and prompt as that call returned and sent
    them."""
    idx = next(
        (
            i
            for i in range(len(state.messages) - 1, -1, -1)
            if isinstance(state.messages[i], ChatMessageAssistant)
        ),
        None,
    )
    if idx is None:
        raise ValueError(
            f"sample {state.sample_id!r}: the task's solver chain wrote no assistant message "
            "(the probe needs a generated trace)"
        )
    message, output = state.messages[idx], state.output
    prompt = to_plain(state.messages[:idx])
    if call is not None and call.returned is message:
        message, output, prompt = call.message, call.output, call.prompt
    stop_reason = str(output.stop_reason)
    content = message.content if isinstance(message.content, list) else []
    reasoning = [c.reasoning for c in content if isinstance(c, ContentReasoning) and not c.redacted]
    if reasoning:
        text = compose_reasoning("\n".join(reasoning), message.text)
        return Trace(prompt, text, engine.tokenize(text), "reasoning_content", stop_reason)
    if output.completion == message.text and output.choices:
        ids = completion_token_ids(output, engine)
    else:
        ids = engine.tokenize(message.text)
    return Trace(prompt, engine.detokenize(ids), ids, "", stop_reason)


def prompt_opens_think(engine: ProbeEngine, prompt: Sequence[Message]) -> bool:
    """The chat template's generation prompt ends inside an open ``<think>`` block."""
    if not isinstance(engine, LocalEngine):
        return False
    return engine.detokenize(engine.render(prompt)).rstrip().endswith(THINK_OPEN)


@solver
def probe_sweep(
    *,
    chain: Solver,
    probe: str,
    form: str,
    forced_answer_tag: str,
    schedule: Schedule,
    k: int,
    temperature: float,
    answer_max_tokens: int,
    seed: int = 0,
    tokenizer: str | None = None,
    think_close: str = DEFAULT_THINK_CLOSE,
    replay_under: str | None = None,
    condition_key: str = "condition",
    replay_prompt: ReplayPrompt | None = None,
) -> Solver:
    """Run the task's solver chain, cut its trace and force answers after each prefix (own
    prompt, and replayed).

    Args:
      chain: The task's own solver chain (its ``generate()`` calls are recorded as sent and
        returned, see :func:`trace_of`).
      probe: ``trace`` or ``selfcommit`` (recorded; the scorer reads the answers accordingly).
      form: Answer form name (``integer``, ``letter``, ``string``).
      forced_answer_tag: Text appended after each prefix (after ``think_close`` inside a think
        block).
      schedule: Cut positions (stride or fractions, optional zero probe).
      k: Forced answers per prefix.
      temperature: Forced-answer temperature (0 = greedy).
      answer_max_tokens: Token budget of each forced answer.
      seed: Base seed; a sample's seed mixes it with the sample id; own and replayed probes
        share it (common random numbers).
      tokenizer: Tokenizer for token positions on providers without their own engine.
      think_close: Text closing a think block before the tag.
      replay_under: Condition whose prompt the trace is also probed under (samples already of
        that condition are probed once).
      condition_key: Sample metadata key naming a sample's condition.
      replay_prompt: (state, condition) -> the prompt to replay under (a :class:`Replay` names
        the target and choices its answers are verified against).
    """
    if replay_under is not None and replay_prompt is None:
        raise ValueError("replay_under needs a replay_prompt function")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        calls: list[GenerateCall] = []
        state = await chain(state, recording(generate, calls))
        if state.completed:
            return state
        engine = probe_engine(get_model(), tokenizer)
        trace = trace_of(state, engine, calls[-1] if calls else None)
        ids = trace.ids
        split: TraceSplit = split_trace(
            trace.text,
            opened_by_prompt=prompt_opens_think(engine, trace.prompt),
            source=trace.source or None,
        )
        start, end = (
            token_span(ids, engine.detokenize, split.start, split.end)
            if split.think
            else (0, len(ids))
        )
        tag = cut_tag(forced_answer_tag, inside_think=split.think, think_close=think_close)
        own_condition = (state.metadata or {}).get(condition_key)
        own = Replay(
            messages=trace.prompt,
            sample_id=str(state.sample_id),
            target=list(state.target.target),
            choices=shown_choices(state.choices),
        )
        prompts: list[tuple[str, Any, Replay]] = [("own", own_condition, own)]
        if replay_under is not None and str(own_condition) != replay_under:
            assert replay_prompt is not None
            replay = await replay_prompt(state, replay_under)
            if not isinstance(replay, Replay):
                replay = Replay(messages=list(replay))
            prompts.append(("replay", replay_under, replay))
        rooms = [context_room(engine, p.messages, tag, answer_max_tokens) for _, _, p in prompts]
        room = min((r for r in rooms if r is not None), default=None)
        context_truncated = room is not None and end > room
        if context_truncated:
            end = max(start, room)  # type: ignore[type-var]
        length = end - start
        probed = schedule.probed(length)
        cuts = [start + t for t in probed]
        probe_seed = sample_seed(seed, state.sample_id)
        contexts = []
        async with probe_span():
            for name, condition, under in prompts:
                condition = None if condition is None else str(condition)
                answers = await force_and_record(
                    engine,
                    under.messages,
                    ids[:end],
                    cuts,
                    tag,
                    context=name,
                    offset=start,
                    k=k,
                    max_tokens=answer_max_tokens,
                    temperature=temperature,
                    seed=probe_seed,
                    condition=condition,
                    sample_id=under.sample_id,
                )
                contexts.append(
                    ContextAnswers(
                        name=name,
                        condition=condition,
                        answers=answers,
                        sample_id=under.sample_id,
                        target=under.target,
                        choices=under.choices,
                    )
                )
        record = ProbeRecord(
            probe=probe,  # type: ignore[arg-type]
            form=form,
            tag=forced_answer_tag,
            cut_tag=tag,
            think_source=split.source,
            think_closed=split.closed,
            response=trace.text,
            final_text=split.final_text,
            trace_tokens=length,
            offset=start,
            generation_truncated=trace.stop_reason == "max_tokens",
            context_truncated=context_truncated,
            schedule=schedule,
            positions=schedule.positions(length),
            curve_fractions=schedule.curve_fractions(length),
            probed=probed,
            k=k,
            temperature=temperature,
            contexts=contexts,
            replay_under=replay_under,
        )
        record.save(state.store)
        return state

    return solve
