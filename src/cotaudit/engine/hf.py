"""Hugging Face transformers backend of the probe engine, with KV-cache reuse.

Prefix sweep: the prompt and the whole CoT are prefilled once; for each cut position t the
cache is viewed up to ``len(prompt) + t`` (a slice, no copy), expanded to k rows, the
forced-answer tag is fed, and the k answers are decoded together. Decoding is ours, not
``model.generate``'s: greedy at temperature 0, otherwise plain temperature sampling
(softmax(logits / T), no top-k or top-p), from a torch.Generator seeded per prefix with
``(seed, t)``, so results do not depend on the order or batching of prefixes.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from pathlib import Path
from typing import Any, Sequence

from cotaudit.engine.base import Generation, LoglikResult, Message, PrefixRequest, seed_for


class HFEngine:
    """The probe engine over a transformers causal LM and its chat template."""

    def __init__(self, model: Any, tokenizer: Any) -> None:
        import torch

        self.model = model.eval()
        self.tokenizer = tokenizer
        self.device = next(model.parameters()).device
        self._torch = torch
        self._lock = threading.Lock()
        eos = {tokenizer.eos_token_id}
        gen_eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
        if isinstance(gen_eos, int):
            eos.add(gen_eos)
        elif isinstance(gen_eos, list):
            eos.update(gen_eos)
        self.eos_ids = sorted(i for i in eos if i is not None)
        # transformers >= 5.2x names the KV-cache argument ``cache``; older releases
        # ``past_key_values``.
        params = inspect.signature(model.forward).parameters
        self._cache_kwarg = "cache" if "cache" in params else "past_key_values"

    @classmethod
    def load(cls, path: str | Path, *, dtype: str = "float32", device: str = "cpu") -> "HFEngine":
        """Load a local folder or hub id with ``from_pretrained``."""
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        torch_dtype = getattr(torch, dtype) if dtype != "auto" else "auto"
        tokenizer = AutoTokenizer.from_pretrained(str(path))
        model = AutoModelForCausalLM.from_pretrained(str(path), dtype=torch_dtype).to(device)
        return cls(model, tokenizer)

    # --- tokens ---------------------------------------------------------------------------

    def tokenize(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def detokenize(self, token_ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(token_ids), skip_special_tokens=True)

    def render(self, messages: Sequence[Message]) -> list[int]:
        """Prompt ids: the chat template with the generation prompt, or continuing a final
        assistant message (prefill) when the last message is the assistant's."""
        msgs = [dict(m) for m in messages]
        prefill = bool(msgs) and msgs[-1]["role"] == "assistant"
        ids = self.tokenizer.apply_chat_template(
            msgs,
            tokenize=True,
            add_generation_prompt=not prefill,
            continue_final_message=prefill,
            return_dict=False,
        )
        if isinstance(ids, dict) or hasattr(ids, "input_ids"):
            ids = ids["input_ids"]
        return list(ids)

    # --- verbs ----------------------------------------------------------------------------

    async def generate(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float = 0.0,
        seed: int = 0,
        n: int = 1,
    ) -> Generation:
        gens = await asyncio.to_thread(
            self._locked, self.generate_sync, messages, max_tokens, temperature, seed, n
        )
        return gens[0]

    async def generate_n(
        self, messages: Sequence[Message], *, max_tokens: int, temperature: float, seed: int, n: int
    ) -> list[Generation]:
        """``n`` samples of the same prompt in one batch."""
        return await asyncio.to_thread(
            self._locked, self.generate_sync, messages, max_tokens, temperature, seed, n
        )

    async def continue_prefixes(self, request: PrefixRequest) -> list[list[str]]:
        return await asyncio.to_thread(self._locked, self.continue_prefixes_sync, request)

    async def loglikelihood(self, context: Sequence[Message], continuation: str) -> LoglikResult:
        results = await asyncio.to_thread(
            self._locked, self.loglikelihood_many_sync, context, [continuation]
        )
        return results[0]

    async def loglikelihood_many(
        self, context: Sequence[Message], continuations: Sequence[str]
    ) -> list[LoglikResult]:
        """Score several continuations of one context; the context is prefilled once."""
        return await asyncio.to_thread(
            self._locked, self.loglikelihood_many_sync, context, continuations
        )

    def _locked(self, fn: Any, *args: Any) -> Any:
        with self._lock, self._torch.inference_mode():
            return fn(*args)

    def forward(self, input_ids: Any, cache: Any = None, *, last_only: bool = False) -> tuple[Any, Any]:
        """One model call with the KV cache; returns (logits, cache). ``last_only`` computes
        logits for the last position only (``logits_to_keep=1``)."""
        kwargs: dict[str, Any] = {"input_ids": input_ids, "use_cache": True}
        if cache is not None:
            kwargs[self._cache_kwarg] = cache
        if last_only:
            kwargs["logits_to_keep"] = 1
        out = self.model(**kwargs)
        new_cache = getattr(out, "cache", None)
        return out.logits, new_cache if new_cache is not None else out.past_key_values

    # --- synchronous implementations ------------------------------------------------------

    def generate_sync(
        self, messages: Sequence[Message], max_tokens: int, temperature: float, seed: int, n: int = 1
    ) -> list[Generation]:
        torch = self._torch
        prompt = torch.tensor([self.render(messages)], device=self.device)
        logits, cache = self.forward(prompt, last_only=True)
        logits = logits[:, -1, :]
        if n > 1:
            cache.batch_repeat_interleave(n)
            logits = logits.expand(n, -1)
        generator = torch.Generator(device="cpu").manual_seed(seed_for(seed))
        rows, finished = self._decode(cache, logits, max_tokens, temperature, generator)
        return [
            Generation(
                text=self.detokenize(ids),
                token_ids=ids,
                finish_reason="stop" if done else "max_tokens",
            )
            for ids, done in zip(rows, finished)
        ]

    def prefill(self, token_ids: Sequence[int]) -> Any:
        """Run the model over ``token_ids`` once; returns its KV cache."""
        torch = self._torch
        ids = torch.tensor([list(token_ids)], device=self.device)
        return self.forward(ids, last_only=True)[1]

    def fork_cache(self, cache: Any, length: int, rows: int) -> Any:
        """A new cache viewing the first ``length`` positions of ``cache``, expanded to ``rows``
        rows. Views, not copies: feeding new tokens concatenates into fresh tensors, so the
        source cache is never modified."""
        from transformers import DynamicCache

        layers = []
        for layer in cache.layers:
            k = layer.keys[:, :, :length, :]
            v = layer.values[:, :, :length, :]
            layers.append((k.expand(rows, -1, -1, -1), v.expand(rows, -1, -1, -1)))
        return DynamicCache(layers)

    def continue_prefixes_sync(self, request: PrefixRequest) -> list[list[str]]:
        torch = self._torch
        prompt_ids = self.render(request.messages)
        tag_ids = self.tokenize(request.tag)
        if not tag_ids:
            raise ValueError("the forced-answer tag must contain at least one token")
        cache = self.prefill(prompt_ids + list(request.cot_token_ids))
        tag = torch.tensor([tag_ids] * request.k, device=self.device)
        answers: list[list[str]] = []
        for t in request.positions:
            fork = self.fork_cache(cache, len(prompt_ids) + t, request.k)
            logits, fork = self.forward(tag, fork, last_only=True)
            generator = torch.Generator(device="cpu").manual_seed(seed_for(request.seed, t))
            rows, _ = self._decode(
                fork,
                logits[:, -1, :],
                request.max_tokens,
                request.temperature,
                generator,
            )
            answers.append([self.detokenize(r) for r in rows])
        return answers

    def naive_continue_prefixes_sync(self, request: PrefixRequest) -> list[list[str]]:
        """Reference implementation: ``model.generate`` re-prefills prompt + cot[:t] + tag for
        every prefix (greedy only). Used to check the cached sweep and in the benchmark."""
        torch = self._torch
        if request.temperature != 0:
            raise ValueError("the naive reference is greedy only (temperature 0)")
        prompt_ids = self.render(request.messages)
        tag_ids = self.tokenize(request.tag)
        answers: list[list[str]] = []
        for t in request.positions:
            ids = prompt_ids + list(request.cot_token_ids[:t]) + tag_ids
            x = torch.tensor([ids] * request.k, device=self.device)
            out = self.model.generate(
                input_ids=x,
                attention_mask=torch.ones_like(x),
                max_new_tokens=request.max_tokens,
                do_sample=False,
                eos_token_id=self.eos_ids,
                pad_token_id=self.eos_ids[0],
            )
            answers.append([self.detokenize(_until_eos(r[len(ids):].tolist(), self.eos_ids))
                            for r in out])
        return answers

    def loglikelihood_many_sync(
        self, context: Sequence[Message], continuations: Sequence[str]
    ) -> list[LoglikResult]:
        """log p(c | context) for each continuation c, read as the assistant's reply.

        The context is rendered with the generation prompt and the continuation tokenised on
        its own, so the continuation's first token is scored given the whole context (never
        dropped, never merged into the context's last token). The end-of-turn token is not
        scored.
        """
        torch = self._torch
        ctx_ids = self.render(context)
        ids = torch.tensor([ctx_ids], device=self.device)
        ctx_logits, ctx_cache = self.forward(ids, last_only=True)
        first_logp = torch.log_softmax(ctx_logits[0, -1, :].float(), dim=-1)
        results = []
        for text in continuations:
            cont = self.tokenize(text)
            if not cont:
                results.append(LoglikResult(0.0, 0, [], []))
                continue
            values = [float(first_logp[cont[0]])]
            if len(cont) > 1:
                fork = self.fork_cache(ctx_cache, len(ctx_ids), 1)
                x = torch.tensor([cont[:-1]], device=self.device)
                logits = self.forward(x, fork)[0][0]
                logp = torch.log_softmax(logits.float(), dim=-1)
                values += logp[torch.arange(len(cont) - 1), torch.tensor(cont[1:])].tolist()
            results.append(
                LoglikResult(
                    sum_logprob=float(sum(values)),
                    n_tokens=len(cont),
                    token_logprobs=values,
                    tokens=self.tokenizer.convert_ids_to_tokens(cont),
                )
            )
        return results

    def _decode(
        self, cache: Any, logits: Any, max_tokens: int, temperature: float, generator: Any
    ) -> tuple[list[list[int]], list[bool]]:
        """Decode up to ``max_tokens`` tokens for every row; stop a row at an EOS token (not
        included). Returns the token rows and whether each row stopped at EOS."""
        torch = self._torch
        batch = logits.shape[0]
        eos = torch.tensor(self.eos_ids, device=self.device)
        rows: list[list[int]] = [[] for _ in range(batch)]
        finished = torch.zeros(batch, dtype=torch.bool, device=self.device)
        for step in range(max_tokens):
            if temperature == 0:
                nxt = logits.argmax(dim=-1)
            else:
                probs = torch.softmax(logits.float() / temperature, dim=-1)
                nxt = torch.multinomial(probs.cpu(), 1, generator=generator)[:, 0].to(self.device)
            is_eos = torch.isin(nxt, eos)
            for i in range(batch):
                if not finished[i] and not is_eos[i]:
                    rows[i].append(int(nxt[i]))
            finished |= is_eos
            if bool(finished.all()) or step == max_tokens - 1:
                break
            logits, cache = self.forward(nxt[:, None], cache)
            logits = logits[:, -1, :]
        return rows, finished.tolist()


def _until_eos(ids: list[int], eos_ids: Sequence[int]) -> list[int]:
    for i, tok in enumerate(ids):
        if tok in eos_ids:
            return ids[:i]
    return ids
