"""The token verbs of an engine that holds the model's transformers tokenizer in this process:
(de)tokenising, chat rendering and the vocabulary, one implementation for every such engine
(``hf-probe/``, ``mlx/``, the ``mlx-server/`` client, the generic prefill engine)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cotaudit.engine.base import (
    AnswerScoreRequest,
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

    def _prefixes(self, request: PrefixRequest | AnswerScoreRequest) -> dict[int, list[int]]:
        """Per position t of ``request``, the token ids of its prefix ``render(messages) ++
        cot[:t] ++ tokenize(tag)`` (:meth:`_prompt_and_tag`)."""
        prompt_ids, tag_ids = self._prompt_and_tag(request)
        cot = list(request.cot_token_ids)
        return {t: prompt_ids + cot[:t] + tag_ids for t in request.positions}
