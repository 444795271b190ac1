"""A solver chain that writes a fixed response instead of generating one, for the probes' tests
that need a trace of known text (as a replayed transcript would give)."""

from __future__ import annotations

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    ContentReasoning,
    ContentText,
    ModelOutput,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver


@solver
def written_trace(text: str, reasoning: str | None = None) -> Solver:
    """Append an assistant message of ``text`` (with a ``ContentReasoning`` part of
    ``reasoning`` before it, when given) and make it the state's output, ended by a stop."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        content = (
            text
            if reasoning is None
            else [ContentReasoning(reasoning=reasoning), ContentText(text=text)]
        )
        message = ChatMessageAssistant(content=content, model="written")
        state.messages.append(message)
        state.output = ModelOutput(
            model="written", choices=[ChatCompletionChoice(message=message, stop_reason="stop")]
        )
        return state

    return solve
