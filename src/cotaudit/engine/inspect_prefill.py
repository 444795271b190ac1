"""The probe engine over any Inspect model that continues a final assistant message (prefill).

For Inspect's ``vllm`` and ``sglang`` providers (whose prefix caching does the cache reuse) and
any other provider that honours assistant prefill. Token positions come from the model's
tokenizer (a transformers tokenizer named by ``tokenizer``, by default the model's own name):
the CoT text is re-tokenised and prefix t is the decoded text of its first t tokens.
"""

from __future__ import annotations

import asyncio
from typing import Any, Sequence

from inspect_ai.model import GenerateConfig, Model

from cotaudit.engine.base import (
    EngineCapabilityError,
    Generation,
    LoglikResult,
    Message,
    PrefixRequest,
    seed_for,
)
from cotaudit.providers._messages import to_inspect

SCORING_BACKENDS = "hf-probe/ and mlx/"


class InspectPrefillEngine:
    """Engine verbs implemented with ``Model.generate`` and assistant prefill."""

    def __init__(self, model: Model, tokenizer: Any) -> None:
        self.model = model
        self.tokenizer = tokenizer

    @classmethod
    def for_model(cls, model: Model, tokenizer: str | None = None) -> "InspectPrefillEngine":
        """Load the transformers tokenizer ``tokenizer`` (default: the model's name)."""
        from transformers import AutoTokenizer

        name = tokenizer or model.api.model_name
        try:
            tok = AutoTokenizer.from_pretrained(name)
        except Exception as e:  # noqa: BLE001 - surface which tokenizer failed and how to fix it
            raise RuntimeError(
                f"cannot load tokenizer {name!r} for token positions on {model}: {e}. "
                "Pass -T tokenizer=<hub id or local path> naming the model's tokenizer."
            ) from e
        return cls(model, tok)

    def tokenize(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def detokenize(self, token_ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(token_ids), skip_special_tokens=True)

    async def generate(
        self, messages: Sequence[Message], *, max_tokens: int, temperature: float = 0.0, seed: int = 0
    ) -> Generation:
        out = await self.model.generate(
            to_inspect(messages),
            config=GenerateConfig(max_tokens=max_tokens, temperature=temperature, seed=seed),
        )
        return Generation(text=out.completion, token_ids=self.tokenize(out.completion))

    async def continue_prefixes(self, request: PrefixRequest) -> list[list[str]]:
        async def one(t: int) -> list[str]:
            prefix = self.detokenize(request.cot_token_ids[:t]) + request.tag
            messages = list(request.messages) + [{"role": "assistant", "content": prefix}]
            answers: list[str] = []
            attempt = 0
            while len(answers) < request.k:
                out = await self.model.generate(
                    to_inspect(messages),
                    config=GenerateConfig(
                        max_tokens=request.max_tokens,
                        temperature=request.temperature,
                        seed=seed_for(request.seed, t, attempt),
                        num_choices=request.k - len(answers),
                    ),
                )
                got = [c.message.text for c in out.choices]
                if not got:
                    raise RuntimeError(f"{self.model} returned no choices for prefix t={t}")
                answers += got[: request.k - len(answers)]
                attempt += 1
            return answers

        return list(await asyncio.gather(*(one(t) for t in request.positions)))

    async def loglikelihood(self, context: Sequence[Message], continuation: str) -> LoglikResult:
        raise EngineCapabilityError(
            f"{self.model} cannot score a fixed continuation through generic prefill; "
            f"use a provider that can: {SCORING_BACKENDS}"
        )
