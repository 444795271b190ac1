"""The probe engine: one interface (``base``), one module per backend."""

from cotaudit.engine.base import (
    EngineCapabilityError,
    Generation,
    LocalEngine,
    LoglikResult,
    Message,
    PrefixRequest,
    ProbeEngine,
    seed_for,
)

__all__ = [
    "EngineCapabilityError",
    "Generation",
    "LocalEngine",
    "LoglikResult",
    "Message",
    "PrefixRequest",
    "ProbeEngine",
    "seed_for",
]
