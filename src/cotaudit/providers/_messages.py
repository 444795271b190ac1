"""Inspect chat messages <-> the engine's plain ``{"role", "content"}`` dicts."""

from __future__ import annotations

from typing import Sequence

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
)

from cotaudit.engine.base import Message


def to_plain(messages: Sequence[ChatMessage]) -> list[Message]:
    """Text-only messages for a chat template (tool messages are rendered as user text)."""
    out: list[Message] = []
    for m in messages:
        role = m.role if m.role in ("system", "user", "assistant") else "user"
        out.append({"role": role, "content": m.text})
    return out


def to_inspect(messages: Sequence[Message]) -> list[ChatMessage]:
    """Plain dicts as Inspect messages."""
    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}
    return [kinds[m["role"]](content=m["content"]) for m in messages]
