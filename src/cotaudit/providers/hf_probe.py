"""``hf-probe/``: a Hugging Face transformers provider for Inspect with prefill and probe verbs.

Like Inspect's ``hf/`` for plain chat generation, plus: a final assistant message is continued
(prefill), ``num_choices`` samples come back as choices of one batch, and the probe engine's
verbs (``continue_prefixes`` with KV-cache reuse, ``loglikelihood``) are reachable as
``get_model().api.probe_engine``.

Model names: a local folder or hub id, ``default`` (the embedded SmolLM2-135M-Instruct) or
``tiny`` (a tiny random model for mechanical tests). Model args: ``-M dtype=float32|bfloat16|
float16|auto``, ``-M device=cpu|cuda|mps``.
"""

from __future__ import annotations

import functools
from typing import Any

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

from cotaudit.engine.hf import HFEngine
from cotaudit.providers._messages import to_plain

DEFAULT_MAX_TOKENS = 1024


def resolve_model_path(model_name: str) -> str:
    """``default`` and ``tiny`` name the embedded models; anything else is passed through."""
    if model_name == "default":
        from cotaudit.default_model import default_model_path

        return str(default_model_path())
    if model_name == "tiny":
        from cotaudit.tiny_model import tiny_model_path

        return str(tiny_model_path())
    return model_name


@functools.lru_cache(maxsize=4)
def _load_engine(path: str, dtype: str, device: str) -> HFEngine:
    """One loaded model per (path, dtype, device) per process."""
    return HFEngine.load(path, dtype=dtype, device=device)


class HFProbeAPI(ModelAPI):
    """Inspect provider over :class:`cotaudit.engine.hf.HFEngine`."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        dtype: str = "float32",
        device: str = "cpu",
        **model_args: Any,
    ) -> None:
        super().__init__(model_name=model_name, base_url=base_url, api_key=api_key, config=config)
        if model_args:
            raise ValueError(
                f"hf-probe: unknown model args {sorted(model_args)}; known: dtype, device"
            )
        self.probe_engine = _load_engine(resolve_model_path(model_name), dtype, device)

    def max_connections(self) -> int:
        # One model, one process: requests run one after another on the model.
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
        n = config.num_choices or 1
        gens = await self.probe_engine.generate_n(
            messages,
            max_tokens=config.max_tokens or DEFAULT_MAX_TOKENS,
            temperature=config.temperature or 0.0,
            seed=config.seed or 0,
            n=n,
        )
        prompt_tokens = len(self.probe_engine.render(messages))
        choices = [
            ChatCompletionChoice(
                message=ChatMessageAssistant(content=g.text, model=self.model_name, source="generate"),
                stop_reason="stop" if g.finish_reason == "stop" else "max_tokens",
            )
            for g in gens
        ]
        completion_tokens = sum(len(g.token_ids) for g in gens)
        return ModelOutput(
            model=self.model_name,
            choices=choices,
            usage=ModelUsage(
                input_tokens=prompt_tokens,
                output_tokens=completion_tokens,
                total_tokens=prompt_tokens + completion_tokens,
            ),
            metadata={"token_ids": [g.token_ids for g in gens]},
        )
