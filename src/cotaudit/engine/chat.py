"""Chat messages for the engines: rendering with a chat template, and conversion between
Inspect's ``ChatMessage`` objects and the engine's plain ``{"role", "content"}`` dicts.

Every backend that renders locally (``hf-probe/``, ``mlx/``, the ``mlx-server/`` client, the
generic prefill engine's token positions) uses :func:`render_chat`, so they send the same ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from cotaudit.engine.base import Message

if TYPE_CHECKING:
    from inspect_ai.model import ChatMessage


def render_chat(tokenizer: Any, messages: Sequence[Message]) -> list[int]:
    """Prompt ids of ``messages`` with a transformers tokenizer's chat template.

    The generation prompt is added, unless the last message is the assistant's: then it is
    continued (prefill, ``continue_final_message``).
    """
    msgs = [dict(m) for m in messages]
    prefill = bool(msgs) and msgs[-1]["role"] == "assistant"
    ids = tokenizer.apply_chat_template(
        msgs,
        tokenize=True,
        add_generation_prompt=not prefill,
        continue_final_message=prefill,
        return_dict=False,
    )
    if isinstance(ids, dict) or hasattr(ids, "input_ids"):
        ids = ids["input_ids"]
    return [int(i) for i in ids]


def to_plain(messages: Sequence[ChatMessage]) -> list[Message]:
    """Text-only messages for a chat template (tool messages are rendered as user text)."""
    out: list[Message] = []
    for m in messages:
        role = m.role if m.role in ("system", "user", "assistant") else "user"
        out.append({"role": role, "content": m.text})
    return out


def to_inspect(messages: Sequence[Message]) -> list[ChatMessage]:
    """Plain dicts as Inspect messages."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

    kinds = {
        "system": ChatMessageSystem,
        "user": ChatMessageUser,
        "assistant": ChatMessageAssistant,
    }
    return [kinds[m["role"]](content=m["content"]) for m in messages]
