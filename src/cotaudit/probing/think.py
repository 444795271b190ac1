"""Think blocks: which part of a response is the trace to cut, and where its final answer is.

Reasoning models write ``<think> reasoning </think> final answer``; the chat template may open
the block itself (the generation prompt ends with ``<think>``), and Inspect providers may return
the reasoning apart from the text (``ContentReasoning``). In every case:

- the trace to cut is the reasoning inside the block (from after ``<think>`` to before
  ``</think>``, or to the end of the response when the block never closes);
- a cut inside the block closes it before the forced-answer tag (``think_close`` + tag);
- the model's own final answer is read from the text after ``</think>`` (none when unclosed).

A response with no think block is all trace, and its final answer is read from all of it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
DEFAULT_THINK_CLOSE = "\n</think>"
"""Appended after a prefix cut inside a think block, before the forced-answer tag."""

ThinkSource = Literal["none", "text", "prompt", "reasoning_content"]


@dataclass(frozen=True)
class TraceSplit:
    """Where the reasoning lies in a response text and what its final answer text is.

    ``start``/``end``: character span of the reasoning to cut (``text[start:end]``);
    ``closed``: the think block was closed (always True without a think block);
    ``final_text``: the text the final answer is read from;
    ``source``: ``none`` (no think block), ``text`` (``<think>`` written in the response),
    ``prompt`` (opened by the chat template), ``reasoning_content`` (Inspect reasoning part).
    """

    start: int
    end: int
    closed: bool
    final_text: str
    source: ThinkSource

    @property
    def think(self) -> bool:
        return self.source != "none"


def split_trace(
    text: str, *, opened_by_prompt: bool = False, source: ThinkSource | None = None
) -> TraceSplit:
    """Split a response into the reasoning span and the final-answer text.

    ``opened_by_prompt``: the generation prompt already ends with ``<think>`` (the response
    starts inside the block). ``source`` overrides the recorded source (``reasoning_content``
    for a text composed by :func:`compose_reasoning`).
    """
    stripped = text.lstrip()
    if stripped.startswith(THINK_OPEN):
        start = len(text) - len(stripped) + len(THINK_OPEN)
        kind: ThinkSource = source or "text"
    elif opened_by_prompt:
        start, kind = 0, source or "prompt"
    elif THINK_CLOSE in text:  # opened somewhere we cannot see (a template we did not render)
        start, kind = 0, source or "prompt"
    else:
        return TraceSplit(0, len(text), True, text, "none")
    close = text.find(THINK_CLOSE, start)
    if close < 0:
        return TraceSplit(start, len(text), False, "", kind)
    return TraceSplit(start, close, True, text[close + len(THINK_CLOSE) :].strip(), kind)


def compose_reasoning(reasoning: str, final: str) -> str:
    """The response text of a message whose reasoning came apart (Inspect ``ContentReasoning``):
    ``<think>\\n{reasoning}\\n</think>\\n\\n{final}``, the form a think-block model writes."""
    return f"{THINK_OPEN}\n{reasoning}\n{THINK_CLOSE}\n\n{final}"


def token_span(
    token_ids: Sequence[int], decode: Callable[[Sequence[int]], str], start: int, end: int
) -> tuple[int, int]:
    """Token span (s, e) of the character span [start, end) of ``decode(token_ids)``.

    s = min{i : len(decode(ids[:i])) >= start}; e = max{i >= s : len(decode(ids[:i])) <= end}
    (binary searches over prefix lengths, which grow with i). A token straddling a boundary is
    left out of the span, so ``ids[s:e]`` never includes a piece of ``<think>`` or
    ``</think>``."""
    n = len(token_ids)

    def length(i: int) -> int:
        return len(decode(token_ids[:i])) if i else 0

    lo, hi = 0, n
    while lo < hi:  # first i with length(i) >= start
        mid = (lo + hi) // 2
        if length(mid) >= start:
            hi = mid
        else:
            lo = mid + 1
    s = lo
    lo, hi = s, n
    while lo < hi:  # last i with length(i) <= end
        mid = (lo + hi + 1) // 2
        if length(mid) <= end:
            lo = mid
        else:
            hi = mid - 1
    return s, lo


def inside_think(prefix: str) -> bool:
    """``prefix`` ends inside an open think block: its last ``<think>`` comes after its last
    ``</think>`` (a cut there needs the closer before the tag)."""
    return prefix.rfind(THINK_OPEN) > prefix.rfind(THINK_CLOSE)


def cut_tag(tag: str, *, inside_think: bool, think_close: str = DEFAULT_THINK_CLOSE) -> str:
    """The text appended after a prefix: ``think_close + tag`` inside a think block, else
    ``tag``."""
    return think_close + tag if inside_think else tag
