"""Inspect model providers registered through the ``inspect_ai`` entry point.

Importing this module registers the provider factories; the heavy imports (torch,
transformers, mlx) happen only when a provider is constructed.
"""

from inspect_ai.model import ModelAPI, modelapi


@modelapi(name="hf-probe")
def hf_probe() -> type[ModelAPI]:
    """``hf-probe/<hub id | local path | default | tiny>``: transformers with prefill and the
    probe engine's verbs (KV-cache reuse)."""
    from cotaudit.providers.hf_probe import HFProbeAPI

    return HFProbeAPI
