"""Find the probe engine behind the active Inspect model."""

from __future__ import annotations

from inspect_ai.model import Model

from cotaudit.engine.base import ProbeEngine


def probe_engine(model: Model, tokenizer: str | None = None) -> ProbeEngine:
    """The model's own engine (``hf-probe/``, ``mlx/``, ``mlx-server/``: ``api.probe_engine``),
    else the generic prefill engine over Inspect's ``generate`` (``vllm/``, ``sglang/``...)."""
    engine = getattr(model.api, "probe_engine", None)
    if engine is not None:
        return engine
    if model.api.model_name in ("none", "") or type(model.api).__name__ == "NoModel":
        raise RuntimeError(
            "no model given: pass --model (for the embedded default, --model hf-probe/default)"
        )
    from cotaudit.engine.inspect_prefill import InspectPrefillEngine

    return InspectPrefillEngine.for_model(model, tokenizer)
