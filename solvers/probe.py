"""Solver of the generic probe: after a task's own solver chain wrote a trace, sweep its prefixes.

The trace is the last assistant message the chain wrote; the prompt is every message before it.
Its reasoning span (the think block when there is one, see :mod:`cotaudit.probing.think`) is cut
at the schedule's positions and k answers are forced after each cut, under the trace's own prompt
and, with ``replay_under``, under another condition's prompt with the same tokens. The forced
answers are stored raw (:class:`cotaudit.probing.record.ProbeRecord`); the probe scorer verifies
them with the task's own scorer.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Sequence

from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ContentReasoning, get_model
from inspect_ai.scorer import Target
from inspect_ai.solver import Generate, Solver, TaskState, solver

from cotaudit.engine.base import LocalEngine, Message, ProbeEngine
from cotaudit.engine.chat import to_plain
from cotaudit.probing.positions import Schedule
from cotaudit.probing.record import ContextAnswers, ProbeRecord
from cotaudit.probing.sweep import context_room, force_answers
from cotaudit.probing.think import (
    DEFAULT_THINK_CLOSE,
    THINK_OPEN,
    TraceSplit,
    compose_reasoning,
    cut_tag,
    split_trace,
    token_span,
)

from .engine import completion_token_ids, probe_engine, sample_seed

ReplayPrompt = Callable[[TaskState, str], Awaitable[list[Message]]]
"""(state, condition) -> the chat prompt the trace is replayed under."""


class _Captured(Exception):
    """Raised by the capturing ``generate`` to stop a solver chain at its first model call."""

    def __init__(self, messages: list[ChatMessage]) -> None:
        self.messages = messages


class SiblingPrompts:
    """Another condition's prompt for the same problem, as the task's own solver chain builds it.

    The sibling is the dataset sample with the same ``pair_key`` metadata and
    ``condition_key`` = the condition. Its prompt is what the chain sends to its first
    ``generate()`` call (the chain runs on a fresh state of the sibling and is stopped there, no
    model call is made)."""

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

    async def __call__(self, state: TaskState, condition: str) -> list[Message]:
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
            raise _Captured(list(state.messages))

        try:
            await self.chain(fresh, capture)  # type: ignore[arg-type]
        except _Captured as c:
            return to_plain(c.messages)
        raise ValueError(
            f"replay_under={condition!r}: the task's solver chain never called generate(), so "
            "the prompt it would send under another condition is unknown; pass a replay prompt "
            "function instead"
        )


def trace_of(state: TaskState, engine: ProbeEngine) -> tuple[list[Message], str, list[int], str]:
    """(prompt, response text, its token ids, think source override) of the chain's trace."""
    idx = next(
        (i for i in range(len(state.messages) - 1, -1, -1)
         if isinstance(state.messages[i], ChatMessageAssistant)),
        None,
    )
    if idx is None:
        raise ValueError(
            f"sample {state.sample_id!r}: the task's solver chain wrote no assistant message "
            "(the probe needs a generated trace)"
        )
    message = state.messages[idx]
    prompt = to_plain(state.messages[:idx])
    content = message.content if isinstance(message.content, list) else []
    reasoning = [c.reasoning for c in content if isinstance(c, ContentReasoning) and not c.redacted]
    if reasoning:
        text = compose_reasoning("\n".join(reasoning), message.text)
        return prompt, text, engine.tokenize(text), "reasoning_content"
    if state.output.completion == message.text and state.output.choices:
        ids = completion_token_ids(state.output, engine)
    else:
        ids = engine.tokenize(message.text)
    return prompt, engine.detokenize(ids), ids, ""


def prompt_opens_think(engine: ProbeEngine, prompt: Sequence[Message]) -> bool:
    """The chat template's generation prompt ends inside an open ``<think>`` block."""
    if not isinstance(engine, LocalEngine):
        return False
    return engine.detokenize(engine.render(prompt)).rstrip().endswith(THINK_OPEN)


@solver
def probe_sweep(
    *,
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
    """Cut the chain's trace and force answers after each prefix (own prompt, and replayed).

    Args:
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
      replay_prompt: (state, condition) -> the prompt to replay under.
    """
    if replay_under is not None and replay_prompt is None:
        raise ValueError("replay_under needs a replay_prompt function")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        engine = probe_engine(get_model(), tokenizer)
        prompt, text, ids, source = trace_of(state, engine)
        split: TraceSplit = split_trace(
            text, opened_by_prompt=prompt_opens_think(engine, prompt), source=source or None
        )
        start, end = (
            token_span(ids, engine.detokenize, split.start, split.end) if split.think else (0, len(ids))
        )
        tag = cut_tag(forced_answer_tag, inside_think=split.think, think_close=think_close)
        own_condition = (state.metadata or {}).get(condition_key)
        prompts: list[tuple[str, Any, Sequence[Message]]] = [("own", own_condition, prompt)]
        if replay_under is not None and str(own_condition) != replay_under:
            assert replay_prompt is not None
            prompts.append(("replay", replay_under, await replay_prompt(state, replay_under)))
        rooms = [context_room(engine, p, tag, answer_max_tokens) for _, _, p in prompts]
        room = min((r for r in rooms if r is not None), default=None)
        context_truncated = room is not None and end > room
        if context_truncated:
            end = max(start, room)  # type: ignore[type-var]
        length = end - start
        probed = schedule.probed(length)
        cuts = [start + t for t in probed]
        probe_seed = sample_seed(seed, state.sample_id)
        contexts = []
        for name, condition, messages in prompts:
            answers = await force_answers(
                engine, messages, ids[:end], cuts, tag,
                k=k, max_tokens=answer_max_tokens, temperature=temperature, seed=probe_seed,
            )
            condition = None if condition is None else str(condition)
            contexts.append(ContextAnswers(name=name, condition=condition, answers=answers))
        record = ProbeRecord(
            probe=probe,  # type: ignore[arg-type]
            form=form,
            tag=forced_answer_tag,
            cut_tag=tag,
            think_source=split.source,
            think_closed=split.closed,
            response=text,
            final_text=split.final_text,
            trace_tokens=length,
            offset=start,
            generation_truncated=state.output.stop_reason == "max_tokens",
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
