"""The probe engine over any Inspect model that continues a final assistant message (prefill).

For Inspect's ``vllm`` and ``sglang`` providers (whose prefix caching does the cache reuse) and
any other provider that honours assistant prefill. Token positions come from the model's
tokenizer (a transformers tokenizer named by ``tokenizer``, by default the model's own name):
the CoT text is re-tokenised and prefix t is the decoded text of its first t tokens.

``loglikelihood`` asks for prompt log-probabilities (``GenerateConfig(prompt_logprobs=1)``,
honoured by Inspect's ``vllm`` and ``sglang`` providers, returned in
``ChatCompletionChoice.prompt_logprobs``): the context plus the continuation as a final
assistant message is sent as the prompt (prefill, so no end-of-turn token follows it), and the
log-probabilities of the continuation's tokens are the last entries. A provider that returns
none fails with :class:`EngineCapabilityError`.
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
    SCORING_BACKENDS,
    PrefixRequest,
    seed_for,
)
from cotaudit.providers._messages import to_inspect



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

    def _render(self, messages: Sequence[Message]) -> list[int]:
        from cotaudit.engine.mlx import render_chat

        return render_chat(self.tokenizer, messages)

    async def loglikelihood(self, context: Sequence[Message], continuation: str) -> LoglikResult:
        """log p(continuation | context) from the provider's prompt log-probabilities.

        The continuation's tokens are those of ``render(context + [assistant: continuation])``
        after the longest common start with ``render(context)`` (the generation prompt): the
        same tokens the HF and MLX engines score unless the continuation's first characters
        merge with the end of the assistant header (then the merged token is scored).
        """
        if not self.tokenize(continuation):
            return LoglikResult(0.0, 0, [], [])
        full_messages = list(context) + [{"role": "assistant", "content": continuation}]
        ctx_ids = self._render(context)
        full_ids = self._render(full_messages)
        common = 0
        for a, b in zip(ctx_ids, full_ids):
            if a != b:
                break
            common += 1
        n_cont = len(full_ids) - common
        if n_cont <= 0:
            raise RuntimeError(
                f"{self.model}: the chat template drops the continuation {continuation[:40]!r}"
            )
        out = await self.model.generate(
            to_inspect(full_messages),
            config=GenerateConfig(prompt_logprobs=1, max_tokens=1, temperature=0.0),
        )
        plp = out.choices[0].prompt_logprobs if out.choices else None
        if plp is None or not plp.content:
            raise EngineCapabilityError(
                f"{self.model} returned no prompt log-probabilities, so it cannot score a fixed "
                "continuation (Inspect's vllm/ and sglang/ providers return them for "
                f"GenerateConfig(prompt_logprobs=...)); use a provider that can: "
                f"{SCORING_BACKENDS}, or vllm/"
            )
        entries = plp.content
        if len(entries) != len(full_ids) - 1:
            served = out.usage.input_tokens if out.usage is not None else None
            raise RuntimeError(
                f"{self.model}: prompt log-probabilities cover {len(entries)} tokens but the "
                f"prompt has {len(full_ids)} with tokenizer {self.tokenizer.name_or_path!r} "
                f"(the server counted {served}); the tokenizer (-T tokenizer=) or chat "
                "template differs from the served model's, so continuation tokens cannot be "
                "located"
            )
        picked = entries[-n_cont:]
        values = [float(e.logprob) for e in picked]
        return LoglikResult(
            sum_logprob=float(sum(values)),
            n_tokens=n_cont,
            token_logprobs=values,
            tokens=[e.token for e in picked],
        )

    async def loglikelihood_many(
        self, context: Sequence[Message], continuations: Sequence[str]
    ) -> list[LoglikResult]:
        """Several continuations of one context (one request each; the server's prefix
        caching shares the context)."""
        return list(await asyncio.gather(*(self.loglikelihood(context, c) for c in continuations)))
