"""The chat message type of the studies' prompts (``cotaudit.studies.<study>.prompts``).

Messages are plain ``{"role", "content"}`` dicts so the pure library stays free of Inspect.
"""

from __future__ import annotations

Message = dict[str, str]
