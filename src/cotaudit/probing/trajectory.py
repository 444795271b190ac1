"""A recorded transcript as a trace to cut: its prompt, its steps, the text the probe sees.

A recorded sample's messages split at its first assistant message: everything before it is the
**prompt**; from it on, every message is a **step** (an assistant turn, each of its tool calls,
a tool result, a later user turn). A transcript of one assistant turn and nothing after it is
a *single response*: its trace is that message as written, probed as the generic probe probes
a generated one (think blocks and ``ContentReasoning`` included). A longer transcript is a
*trajectory*: its steps are rendered, in order, as one continuation of the prompt
(:func:`render_steps`), so a cut after any token keeps exactly the steps before it and removes
everything after it (later tool results too):

    text = step_1 ++ SEP ++ step_2 ++ SEP ++ ... ++ step_n,   SEP = "\\n\\n"

with an assistant turn rendered as its text (its reasoning first, inside
``<think>...</think>``), a tool call as ``[tool call] name(arguments as JSON)`` and a tool result
as ``[tool result name] text``. Step i ends at character ``ends[i]`` of the text; a cut after
step i keeps ``text[:ends[i]]`` (its token position is the last token ending there,
:func:`cotaudit.probing.think.token_span`). Everything here is plain data (no Inspect).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel

StepKind = Literal["assistant", "tool_call", "tool_result", "user"]
STEP_SEPARATOR = "\n\n"
"""Text between two rendered steps of a trajectory."""
SUBMIT_TOOL = "submit"
"""The name of the tool whose call states an agent's answer (Inspect's agents' ``submit()``)."""


class Step(BaseModel, frozen=True):
    """One step of a recorded trajectory: its kind, the tool it calls or answers (``name``),
    its text as rendered (:func:`render_step`) and where it ends in the rendered trajectory
    (``end``, in characters)."""

    kind: StepKind
    name: str | None = None
    text: str
    end: int = 0


class StepMark(BaseModel, frozen=True):
    """Where a step ends in a probed trace: its kind, its tool (``name``) and the token position
    ``end`` in the trace's span (a cut at ``end`` keeps this step and every earlier one)."""

    kind: StepKind
    name: str | None = None
    end: int


class PlainToolCall(BaseModel, frozen=True):
    """A recorded tool call: the function's name and its arguments."""

    function: str
    arguments: dict[str, Any] = {}


class PlainMessage(BaseModel, frozen=True):
    """A recorded message as plain data: role, text, reasoning (assistant), tool calls
    (assistant) and, for a tool result, the function it answers."""

    role: Literal["system", "user", "assistant", "tool"]
    text: str = ""
    reasoning: str = ""
    tool_calls: list[PlainToolCall] = []
    function: str | None = None


def first_assistant(messages: Sequence[PlainMessage]) -> int | None:
    """Index of the first assistant message, None when there is none."""
    return next((i for i, m in enumerate(messages) if m.role == "assistant"), None)


def is_single_response(messages: Sequence[PlainMessage]) -> bool:
    """The transcript's only step is one assistant message without tool calls, last."""
    i = first_assistant(messages)
    return i == len(messages) - 1 and not messages[i].tool_calls


def _result_label(function: str | None) -> str:
    return f"[tool result {function}]" if function else "[tool result]"


def render_step(message: PlainMessage) -> list[Step]:
    """The steps of one message: an assistant turn (when it has text or reasoning) then one
    step per tool call; a tool result; a user (or system) turn."""
    if message.role == "assistant":
        body = message.text.strip()
        if message.reasoning.strip():
            body = f"<think>\n{message.reasoning.strip()}\n</think>" + (
                f"\n\n{body}" if body else ""
            )
        steps = [Step(kind="assistant", text=body)] if body else []
        return steps + [
            Step(
                kind="tool_call",
                name=call.function,
                text=f"[tool call] {call.function}({json.dumps(call.arguments, sort_keys=True)})",
            )
            for call in message.tool_calls
        ]
    if message.role == "tool":
        return [
            Step(
                kind="tool_result",
                name=message.function,
                text=f"{_result_label(message.function)} {message.text.strip()}",
            )
        ]
    return [Step(kind="user", text=f"[{message.role}] {message.text.strip()}")]


def render_steps(messages: Sequence[PlainMessage]) -> tuple[str, list[Step]]:
    """The trajectory's text (steps joined by :data:`STEP_SEPARATOR`) and its steps, each with
    its ``end`` in that text."""
    steps: list[Step] = []
    text = ""
    for message in messages:
        for step in render_step(message):
            text += (STEP_SEPARATOR if text else "") + step.text
            steps.append(step.model_copy(update={"end": len(text)}))
    return text, steps


def chat_turns(messages: Sequence[PlainMessage]) -> list[dict[str, Any]]:
    """A recorded transcript as a text-only chat, one turn per message: system and user as
    written; an assistant message as its steps' text (:func:`render_step`, joined by
    :data:`STEP_SEPARATOR`) with ``tool_calls`` = whether it calls a tool; a tool result as a
    user turn with its rendered text."""
    turns: list[dict[str, Any]] = []
    for m in messages:
        if m.role in ("system", "user"):
            turns.append({"role": m.role, "content": m.text})
            continue
        text = STEP_SEPARATOR.join(step.text for step in render_step(m))
        role = "assistant" if m.role == "assistant" else "user"
        turns.append({"role": role, "content": text, "tool_calls": bool(m.tool_calls)})
    return turns


def submission(messages: Sequence[PlainMessage], tool: str = SUBMIT_TOOL) -> str | None:
    """The answer the transcript submits: the argument of its last ``tool`` call (its
    ``answer`` argument, else its only argument); None without one."""
    calls = [c for m in messages if m.role == "assistant" for c in m.tool_calls]
    submits = [c for c in calls if c.function == tool]
    if not submits:
        return None
    args = submits[-1].arguments
    if "answer" in args:
        return str(args["answer"])
    return str(next(iter(args.values()))) if len(args) == 1 else None


def final_answer_text(messages: Sequence[PlainMessage]) -> str:
    """The text a trajectory's final answer is read from: its submission
    (:func:`submission`), else its last assistant message's text."""
    submitted = submission(messages)
    if submitted is not None:
        return submitted
    last = next((m for m in reversed(messages) if m.role == "assistant"), None)
    return "" if last is None else last.text


def steps_done(step_ends: Sequence[int], position: int) -> int:
    """Steps complete at token ``position``: #{i : step_ends[i] <= position}."""
    return sum(1 for end in step_ends if end <= position)


def curve_over_steps(done: Sequence[int], values: Sequence[float]) -> dict[int, float]:
    """A curve over steps from a curve over cuts: for each number j of complete steps, the
    value at the last cut with ``done[i] == j`` (with ``cuts=steps``, the cut right after step
    j; with token cuts, the latest cut before step j + 1 ends), in increasing j."""
    out: dict[int, float] = {}
    for j, value in zip(done, values, strict=True):
        out[j] = value
    return dict(sorted(out.items()))


def parse_sample_ids(value: str | int | Sequence[Any] | None) -> list[str] | None:
    """``-T samples``: ids from ``"a,b"``, one id, or a list; None (all samples) for None or
    empty."""
    if value is None:
        return None
    items = (
        value.split(",") if isinstance(value, str) else [value] if isinstance(value, int) else value
    )
    ids = [str(v).strip() for v in items if str(v).strip()]
    return ids or None


def select_samples(ids: Sequence[str], wanted: Sequence[str] | None, log: str) -> list[str]:
    """The log's sample ids to probe: all of ``ids`` (in the log's order) when ``wanted`` is
    None, else ``wanted`` in the log's order; an id the log lacks raises ValueError naming it
    and the log."""
    if wanted is None:
        return list(ids)
    missing = [w for w in wanted if w not in ids]
    if missing:
        shown = ", ".join(ids[:10]) + (", ..." if len(ids) > 10 else "")
        raise ValueError(f"-T samples: {missing} not in log {log} (its sample ids: {shown})")
    chosen = set(wanted)
    return [i for i in ids if i in chosen]


def plain_metadata(value: Mapping[str, Any]) -> dict[str, Any]:
    """``value`` with only JSON-serialisable entries (a log's metadata may hold anything)."""
    out: dict[str, Any] = {}
    for key, item in value.items():
        try:
            json.dumps(item)
        except TypeError:
            continue
        out[str(key)] = item
    return out
