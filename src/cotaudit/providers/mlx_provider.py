"""``mlx/``: an in-process MLX (mlx-lm) provider for Inspect with prefill and probe verbs.

The MLX counterpart of ``hf-probe/``: a final assistant message is continued (prefill),
``num_choices`` samples come back as choices of one batch, and the probe engine's verbs
(``continue_prefixes`` with prompt-cache reuse, ``loglikelihood``) are reachable as
``get_model().api.probe_engine``.

Model names: a local folder (HF safetensors or MLX-converted, e.g. a 4-bit
``mlx-community/Qwen2.5-3B-Instruct-4bit`` download) or hub id, ``default`` (the embedded
SmolLM2-135M-Instruct) or ``tiny`` (the tiny random model). Model args: ``-M openblas=true``
preloads the system OpenBLAS on Linux CPU (see :mod:`cotaudit.engine.mlx`).

Requires ``pip install mlx-lm`` (macOS, Apple silicon) or ``pip install "mlx[cpu]" mlx-lm``
(Linux): ``pip install 'cotaudit[mlx]'`` / ``'cotaudit[mlx-cpu]'``.
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

from cotaudit.providers._messages import to_plain
from cotaudit.providers.hf_probe import resolve_model_path

DEFAULT_MAX_TOKENS = 1024
BACKEND = "mlx"

MLX_MISSING = (
    "the mlx/ provider needs mlx-lm: pip install mlx-lm (macOS on Apple silicon) or "
    "pip install 'mlx[cpu]' mlx-lm (Linux CPU); or use hf-probe/ or mlx-server/"
)


@functools.lru_cache(maxsize=4)
def _load_engine(path: str, openblas: bool | None) -> Any:
    """One loaded model per (path, openblas) per process."""
    import importlib.util

    # find_spec, not import: OpenBLAS must be preloaded before anything imports mlx
    if importlib.util.find_spec("mlx_lm") is None or importlib.util.find_spec("mlx") is None:
        raise RuntimeError(MLX_MISSING)
    from cotaudit.engine.mlx import MLXEngine

    return MLXEngine.load(path, openblas=openblas)


class MLXAPI(ModelAPI):
    """Inspect provider over :class:`cotaudit.engine.mlx.MLXEngine`."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        openblas: bool | None = None,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name=model_name, base_url=base_url, api_key=api_key, config=config)
        if model_args:
            raise ValueError(f"mlx: unknown model args {sorted(model_args)}; known: openblas")
        self.probe_engine = _load_engine(resolve_model_path(model_name), openblas)

    def max_connections(self) -> int:
        # One model, one worker thread: requests run one after another on the model.
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
            metadata={"token_ids": [g.token_ids for g in gens], "backend": BACKEND},
        )
