"""The token verbs of an engine that holds the model's transformers tokenizer in this process:
(de)tokenising, chat rendering and the vocabulary, one implementation for every such engine
(``hf-probe/``, ``mlx/``, the ``mlx-server/`` client, the generic prefill engine), and the
scoring of continuations tokenised on their own (the in-process engines' ``loglikelihood``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from cotaudit.engine.base import (
    AnswerScoreRequest,
    LoglikResult,
    Message,
    PrefixRequest,
    Vocabulary,
)
from cotaudit.engine.chat import render_chat
from cotaudit.engine.vocabulary import vocabulary_of


class TokenizerVerbs:
    """``tokenize``, ``detokenize``, ``render`` and ``vocabulary`` through ``hf_tokenizer`` (a
    transformers tokenizer with the model's chat template); ``eos_ids`` are the ids that end a
    generation."""

    hf_tokenizer: Any
    eos_ids: Sequence[int]
    _vocabulary: Vocabulary | None = None

    def tokenize(self, text: str) -> list[int]:
        """Token ids of ``text`` with no special tokens added."""
        return list(self.hf_tokenizer.encode(text, add_special_tokens=False))

    def detokenize(self, token_ids: Sequence[int]) -> str:
        """Text of ``token_ids``, special tokens left out."""
        return self.hf_tokenizer.decode(list(token_ids), skip_special_tokens=True)

    def render(self, messages: Sequence[Message]) -> list[int]:
        """Prompt ids: the chat template with the generation prompt, or continuing a final
        assistant message (prefill) when the last message is the assistant's."""
        return render_chat(self.hf_tokenizer, messages)

    def vocabulary(self) -> Vocabulary:
        """Every token's text and :attr:`eos_ids` (decoded once)."""
        if self._vocabulary is None:
            self._vocabulary = vocabulary_of(self.hf_tokenizer, self.eos_ids)
        return self._vocabulary

    def _prompt_and_tag(
        self, request: PrefixRequest | AnswerScoreRequest
    ) -> tuple[list[int], list[int]]:
        """The rendered prompt and the tag's ids; only a prefix request's tag may be empty (a
        continuation of the CoT)."""
        tag_ids = self.tokenize(request.tag)
        if not tag_ids and isinstance(request, AnswerScoreRequest):
            raise ValueError("the forced-answer tag must contain at least one token")
        return self.render(request.messages), tag_ids

    def _scored_continuations(
        self,
        continuations: Sequence[str],
        first: Callable[[int], float],
        later: Callable[[list[int]], list[float]],
    ) -> list[LoglikResult]:
        """log p(c | context) of each continuation c, tokenised on its own: its first token's
        log-probability is ``first(token)`` (read after the context), its later tokens'
        ``later(c)`` (read after the context and each token before them; c has two tokens or
        more); an empty continuation has 0 tokens and log-probability 0."""
        results = []
        for text in continuations:
            cont = self.tokenize(text)
            if not cont:
                results.append(LoglikResult(0.0, 0, [], []))
                continue
            values = [first(cont[0])]
            if len(cont) > 1:
                values += later(cont)
            tokens = self.hf_tokenizer.convert_ids_to_tokens(cont)
            results.append(LoglikResult.summed(values, tokens))
        return results
