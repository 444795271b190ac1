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


@modelapi(name="mlx")
def mlx() -> type[ModelAPI]:
    """``mlx/<hub id | local path | default | tiny>``: in-process MLX (mlx-lm) with prefill and
    the probe engine's verbs (prompt-cache reuse). Needs ``mlx-lm`` (Linux: ``mlx[cpu]``)."""
    from cotaudit.providers.mlx_provider import MLXAPI

    return MLXAPI


@modelapi(name="mlx-server")
def mlx_server() -> type[ModelAPI]:
    """``mlx-server/<model>``: a running ``mlx_lm.server`` (base URL from --model-base-url,
    ``-M url=`` or ``MLX_SERVER_BASE_URL``); no log-likelihood."""
    from cotaudit.providers.mlx_server_provider import MLXServerAPI

    return MLXServerAPI
