"""The recorded-log probe's solver side: a recorded sample as the probe's trace, nothing
regenerated.

:func:`recorded_chain` is the chain the probe runs instead of a task's own: it puts the
recorded sample's messages (as written) and output into the state. :func:`recorded_trace` then
reads the trace the sweep cuts (:mod:`cotaudit.probing.trajectory`): a single response is read
as the generic probe reads a generated one (:func:`cotaudit.solvers.probe.trace_of`: think
blocks, ``ContentReasoning``); a trajectory (tool calls, tool results, several turns) is its
steps rendered as one continuation of the prompt, its final answer the submission or the last
assistant message. Token ids always come from the probing model's tokenizer (a recorded
output's own ids are dropped: the model that wrote the log may tokenize differently).
:class:`RecordedSiblings` replays a trace under a sibling sample's recorded prompt.
"""

from __future__ import annotations

from collections.abc import Mapping

from inspect_ai.log import EvalSample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ContentReasoning,
    ModelOutput,
)
from inspect_ai.solver import Choices, Generate, Solver, TaskState, solver

from cotaudit.engine.base import ProbeEngine
from cotaudit.engine.chat import to_plain
from cotaudit.probing.probe_plan import Replay
from cotaudit.probing.trace import Trace
from cotaudit.probing.trajectory import (
    PlainMessage,
    PlainToolCall,
    final_answer_text,
    first_assistant,
    is_single_response,
    render_steps,
    submission,
)

from .engine import TOKEN_IDS_KEY
from .probe import GenerateCall, Siblings, shown_choices, trace_of


def plain_message(message: ChatMessage) -> PlainMessage:
    """A recorded Inspect message as plain data (its text, reasoning parts and tool calls)."""
    reasoning = ""
    if isinstance(message.content, list):
        reasoning = "\n".join(
            c.reasoning
            for c in message.content
            if isinstance(c, ContentReasoning) and not c.redacted
        )
    calls = (
        [
            PlainToolCall(function=c.function, arguments=dict(c.arguments))
            for c in message.tool_calls
        ]
        if isinstance(message, ChatMessageAssistant) and message.tool_calls
        else []
    )
    return PlainMessage(
        role=message.role,
        text=message.text,
        reasoning=reasoning,
        tool_calls=calls,
        function=message.function if isinstance(message, ChatMessageTool) else None,
    )


def without_token_ids(output: ModelOutput) -> ModelOutput:
    """A copy of ``output`` without the provider's own token ids (positions come from the
    probing model's tokenizer)."""
    copy = output.model_copy(deep=True)
    if copy.metadata:
        copy.metadata = {k: v for k, v in copy.metadata.items() if k != TOKEN_IDS_KEY}
    return copy


@solver
def recorded_chain(samples: Mapping[str, EvalSample]) -> Solver:
    """The state a recorded sample ended in: its messages as written and its output (without
    token ids), looked up by sample id in ``samples``; no model call."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        recorded = samples[str(state.sample_id)]
        state.messages = [m.model_copy(deep=True) for m in recorded.messages]
        state.output = without_token_ids(recorded.output)
        return state

    return solve


def recorded_trace(state: TaskState, engine: ProbeEngine, call: GenerateCall | None) -> Trace:
    """The trace of a recorded state (after :func:`recorded_chain`): a single response as
    :func:`~cotaudit.solvers.probe.trace_of` reads it; a trajectory as its rendered steps
    (:func:`cotaudit.probing.trajectory.render_steps`) under the messages before its first
    assistant message, tokenized by the probing model, with its final-answer text
    (:func:`~cotaudit.probing.trajectory.final_answer_text`) and steps."""
    plain = [plain_message(m) for m in state.messages]
    first = first_assistant(plain)
    if first is None:
        raise ValueError(
            f"sample {state.sample_id!r}: the recorded transcript has no assistant message"
        )
    if is_single_response(plain):
        return trace_of(state, engine, call)
    text, steps = render_steps(plain[first:])
    ids = engine.tokenize(text)
    submitted = submission(plain[first:]) is not None
    return Trace(
        to_plain(state.messages[:first]),
        engine.detokenize(ids),
        ids,
        "",
        str(state.output.stop_reason),
        final=final_answer_text(plain[first:]),
        steps=tuple(steps),
        submitted=submitted,
    )


def without_assistant_message(samples: Mapping[str, EvalSample]) -> list[str]:
    """The keys of ``samples`` whose transcript holds no assistant message (no trace to cut:
    the task refuses them before any model loads)."""
    return [
        key
        for key, sample in samples.items()
        if first_assistant([plain_message(m) for m in sample.messages]) is None
    ]


def recorded_prompt(sample: EvalSample) -> list[dict[str, str]]:
    """A recorded sample's prompt: its messages before the first assistant message."""
    first = first_assistant([plain_message(m) for m in sample.messages])
    return to_plain(sample.messages[: len(sample.messages) if first is None else first])


class RecordedSiblings:
    """Another condition's prompt for the same problem, as the log recorded it: the sample with
    the same ``pair_key`` metadata and ``condition_key`` = the condition, its messages before
    its first assistant message, with its target and choices (in the dataset's order)."""

    def __init__(
        self, samples: Mapping[str, EvalSample], *, pair_key: str, condition_key: str
    ) -> None:
        self.siblings = Siblings(
            samples.values(), pair_key, condition_key, "the probed samples of the log"
        )

    async def __call__(self, state: TaskState, condition: str) -> Replay:
        sibling = self.siblings.of(state, condition)
        target = sibling.target
        return Replay(
            messages=recorded_prompt(sibling),
            sample_id=str(sibling.id),
            target=[target] if isinstance(target, str) else list(target),
            choices=shown_choices(Choices(sibling.choices or [])),
        )
