"""Shared Inspect ``generate`` for in-process engines (``hf-probe/``, ``mlx/``)."""

from __future__ import annotations

from typing import Any, Sequence

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.model._chat_message import ChatMessage
from inspect_ai.tool import ToolChoice, ToolInfo

from cotaudit.engine.base import LocalEngine
from cotaudit.engine.chat import to_plain

DEFAULT_MAX_TOKENS = 1024


def resolve_model_path(model_name: str) -> str:
    """``default`` and ``tiny`` name the embedded models; anything else is passed through."""
    if model_name == "default":
        from cotaudit.default_model import default_model_path

        return str(default_model_path())
    if model_name == "tiny":
        from cotaudit.tiny_model import tiny_model_path

        return str(tiny_model_path())
    if model_name == "tiny-think":  # the tiny model with a think-block chat template
        from cotaudit.tiny_model import tiny_think_model_path

        return str(tiny_think_model_path())
    return model_name


def bool_arg(name: str, value: Any) -> bool:
    """A ``-M name=true|false`` model arg as a bool (a clear error otherwise)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise ValueError(f"{name} must be true or false, got {value!r}")


def batch_rows_arg(value: Any) -> int:
    """``-M max_batch_rows=N`` as a positive int (a clear error otherwise)."""
    try:
        rows = int(value)
    except (TypeError, ValueError):
        rows = 0
    if rows < 1 or isinstance(value, bool) or (isinstance(value, float) and value != rows):
        raise ValueError(f"max_batch_rows must be a positive integer, got {value!r}")
    return rows


def completion_output(
    model_name: str, completions: Sequence[Any], prompt_tokens: int, **metadata: Any
) -> ModelOutput:
    """An Inspect ModelOutput with one choice per completion (objects with ``text``,
    ``finish_reason`` and ``token_ids``); the token ids go in ``metadata["token_ids"]``."""
    completion_tokens = sum(len(c.token_ids) for c in completions)
    return ModelOutput(
        model=model_name,
        choices=[
            ChatCompletionChoice(
                message=ChatMessageAssistant(content=c.text, model=model_name, source="generate"),
                stop_reason="stop" if c.finish_reason == "stop" else "max_tokens",
            )
            for c in completions
        ],
        usage=ModelUsage(
            input_tokens=prompt_tokens,
            output_tokens=completion_tokens,
            total_tokens=prompt_tokens + completion_tokens,
        ),
        metadata={"token_ids": [c.token_ids for c in completions], **metadata},
    )


class LocalEngineAPI(ModelAPI):
    """A provider whose ``probe_engine`` runs in this process.

    Plain chat generation continues a final assistant message (prefill); ``num_choices``
    samples come back as choices of one batch; the CoT's own token ids are returned in
    ``ModelOutput.metadata["token_ids"]`` (one list per choice) for the probes.
    Subclasses set ``probe_engine`` and ``backend`` in ``__init__``.
    """

    probe_engine: LocalEngine
    backend: str

    def max_connections(self) -> int:
        # One model in this process: requests queue on the engine's worker thread, where
        # concurrent samples' decode jobs batch together (up to the engine's max_batch_rows).
        return 32

    def max_tokens(self) -> int | None:
        return DEFAULT_MAX_TOKENS

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        messages = to_plain(input)
        gens = await self.probe_engine.generate_n(
            messages,
            max_tokens=config.max_tokens or DEFAULT_MAX_TOKENS,
            temperature=config.temperature or 0.0,
            seed=config.seed or 0,
            n=config.num_choices or 1,
        )
        return completion_output(
            self.model_name, gens, len(self.probe_engine.render(messages)), backend=self.backend
        )
