"""The trace a probe cuts: the prompt it was written under, its text and token ids, and what the
sweep reads from it (where its steps end, whether the prompt opens its think block, its
final-answer text)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, NamedTuple

from cotaudit.engine.base import LocalEngine, Message, ProbeEngine
from cotaudit.probing.think import THINK_OPEN, split_trace, token_span
from cotaudit.probing.trajectory import Step


class Trace(NamedTuple):
    """The chain's trace: the prompt it was written under, the response text, its token ids, the
    think source override (``reasoning_content`` or "") and the generation's stop reason; for a
    recorded trajectory (:mod:`cotaudit.probing.trajectory`) also ``final``, the text its final
    answer is read from (then the whole text is the span: no think block is split off),
    ``steps``, its steps with their character ends in ``text``, and ``submitted``: ``final`` is
    the argument of a ``submit()`` call."""

    prompt: list[Message]
    text: str
    ids: list[int]
    source: Literal["reasoning_content", ""]
    stop_reason: str
    final: str | None = None
    steps: tuple[Step, ...] = ()
    submitted: bool = False
    span: tuple[int, int] | None = None
    """The token span [start, end) of ``ids`` that is cut (the think block when one is), as the
    sweep hands the trace to its planner; None before."""


def step_ends(trace: Trace, engine: ProbeEngine, start: int) -> list[int]:
    """Token position, in the span starting at token ``start``, where each of the trace's steps
    ends: the last token ending at or before the step's last character
    (:func:`cotaudit.probing.think.token_span`); [] for a trace without steps."""
    return [
        token_span(trace.ids, engine.detokenize, 0, step.end)[1] - start for step in trace.steps
    ]


def prompt_opens_think(engine: ProbeEngine, prompt: Sequence[Message]) -> bool:
    """The chat template's generation prompt ends inside an open ``<think>`` block."""
    if not isinstance(engine, LocalEngine):
        return False
    return engine.detokenize(engine.render(prompt)).rstrip().endswith(THINK_OPEN)


def final_text(trace: Trace, engine: ProbeEngine) -> str:
    """The trace's final-answer text as the sweep splits it (after its think block; the whole
    response without one): :func:`cotaudit.probing.think.split_trace` with the engine's view of
    whether the prompt opens the block."""
    if trace.final is not None:
        return trace.final
    return split_trace(
        trace.text,
        opened_by_prompt=prompt_opens_think(engine, trace.prompt),
        source=trace.source or None,
    ).final_text
