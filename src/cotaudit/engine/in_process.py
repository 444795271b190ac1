"""What the in-process engines (``hf-probe/``: :mod:`cotaudit.engine.hf`, ``mlx/``:
:mod:`cotaudit.engine.mlx`) compute alike, whatever their array library: the scoring of fixed
continuations and the naive reference sweep, each around the backend's own model calls."""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Any

from cotaudit.engine.base import LoglikResult, Message, PrefixRequest, SyncVerbs
from cotaudit.engine.batcher import on_worker
from cotaudit.engine.tokens import TokenizerVerbs


class InProcessEngine(SyncVerbs, TokenizerVerbs, abc.ABC):
    """A probe engine whose model runs on this process's worker thread (:class:`SyncVerbs`)
    with the model's tokenizer here (:class:`TokenizerVerbs`). The backend gives the model
    calls: :meth:`_prefilled_context`, :meth:`_later_logprobs` and :meth:`_greedy_answers`."""

    @on_worker
    def loglikelihood_many_sync(
        self, context: Sequence[Message], continuations: Sequence[str]
    ) -> list[LoglikResult]:
        """log p(c | context) for each continuation c, read as the assistant's reply.

        The context is rendered with the generation prompt and prefilled once; each
        continuation is tokenised on its own, so its first token is scored given the whole
        context (never dropped, never merged into the context's last token): log p(c_0 |
        context) from the log-softmax after the context, the later tokens' from one forward
        pass over c_0..c_{n-2} after it. The end-of-turn token is not scored; an empty
        continuation has 0 tokens and log-probability 0.
        """
        ctx_ids = self.render(context)
        first_logp, cache = self._prefilled_context(ctx_ids)
        results = []
        for text in continuations:
            cont = self.tokenize(text)
            if not cont:
                results.append(LoglikResult(0.0, 0, [], []))
                continue
            values = [float(first_logp[cont[0]])]
            if len(cont) > 1:
                values += self._later_logprobs(cache, ctx_ids, cont)
            tokens = self.hf_tokenizer.convert_ids_to_tokens(cont)
            results.append(LoglikResult.summed(values, tokens))
        return results

    @on_worker
    def naive_continue_prefixes_sync(self, request: PrefixRequest) -> list[list[str]]:
        """Reference implementation: every prefix ``prompt ++ cot[:t] ++ tag`` is prefilled
        from nothing and answered by the backend's own generation (:meth:`_greedy_answers`;
        greedy only). Used to check the cached sweep and in the benchmark."""
        if request.temperature != 0:
            raise ValueError("the naive reference is greedy only (temperature 0)")
        prefixes = self._prefixes(request)
        return [
            self._greedy_answers(prefixes[t], request.max_tokens, request.k)
            for t in request.positions
        ]

    @abc.abstractmethod
    def _prefilled_context(self, ctx_ids: list[int]) -> tuple[Any, Any]:
        """(log-softmax of the next token after ``ctx_ids``, a [vocab] array of float32
        values, and the cache that holds ``ctx_ids``)."""

    @abc.abstractmethod
    def _later_logprobs(self, cache: Any, ctx_ids: list[int], cont: list[int]) -> list[float]:
        """log p(cont[i] | ctx_ids ++ cont[:i]) for i = 1..len(cont)-1, read over ``cache``
        (from :meth:`_prefilled_context`, left unchanged)."""

    @abc.abstractmethod
    def _greedy_answers(self, ids: list[int], max_tokens: int, k: int) -> list[str]:
        """``k`` greedy answers of at most ``max_tokens`` tokens after ``ids`` (the same answer
        k times), stopped at an end-of-sequence token."""
