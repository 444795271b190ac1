"""A tokenizer's vocabulary as the exact estimator reads it (:mod:`cotaudit.probing.exact`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cotaudit.engine.base import Vocabulary


def vocabulary_of(tokenizer: Any, eos_ids: Iterable[int]) -> Vocabulary:
    """Every token id of a transformers tokenizer (``len(tokenizer)``, added tokens included)
    decoded alone, special tokens as "", and the ids that end a generation."""
    ids = [[i] for i in range(len(tokenizer))]
    texts = tokenizer.batch_decode(ids, skip_special_tokens=True)
    return Vocabulary(tuple(texts), frozenset(int(i) for i in eos_ids))
