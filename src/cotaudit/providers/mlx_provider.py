"""``mlx/``: an in-process MLX (mlx-lm) provider for Inspect with prefill and probe verbs.

The MLX counterpart of ``hf-probe/``: a final assistant message is continued (prefill),
``num_choices`` samples come back as choices of one batch, and the probe engine's verbs
(``continue_prefixes`` with prompt-cache reuse, ``loglikelihood``) are reachable as
``get_model().api.probe_engine``.

Model names: a local folder (HF safetensors or MLX-converted, e.g. a 4-bit
``mlx-community/Qwen2.5-3B-Instruct-4bit`` download) or hub id, ``default`` (the embedded
SmolLM2-135M-Instruct) or ``tiny`` (the tiny random model); any other name fails at once, in
one line (:func:`cotaudit.providers._local.check_model_name`); the weights load on the first
generate or probe call, not when the provider starts. Model args: ``-M openblas=true``
preloads the system OpenBLAS on Linux CPU (see :mod:`cotaudit.engine.openblas`); ``-M
max_batch_rows=N``: rows decoding together across concurrently running samples (default 64;
1 decodes one job at a time).

Requires ``pip install mlx-lm`` (macOS, Apple silicon) or ``pip install "mlx[cpu]" mlx-lm``
(Linux): ``pip install 'cotaudit[mlx]'`` / ``'cotaudit[mlx-cpu]'``.
"""

from __future__ import annotations

import functools
from typing import Any

from cotaudit.engine.batcher import DEFAULT_MAX_BATCH_ROWS
from cotaudit.providers._local import (
    LocalEngineAPI,
    alias_path,
    batch_rows_arg,
    check_model_name,
)

MLX_MISSING = (
    "the mlx/ provider needs mlx-lm: pip install mlx-lm (macOS on Apple silicon) or "
    "pip install 'mlx[cpu]' mlx-lm (Linux CPU); or use hf-probe/ or mlx-server/"
)


def _require_mlx() -> None:
    """RuntimeError(:data:`MLX_MISSING`) unless mlx and mlx-lm are installed (found, not
    imported: OpenBLAS must be preloaded before anything imports mlx)."""
    import importlib.util

    if importlib.util.find_spec("mlx_lm") is None or importlib.util.find_spec("mlx") is None:
        raise RuntimeError(MLX_MISSING)


@functools.lru_cache(maxsize=4)
def _load_engine(
    path: str, openblas: bool | None, max_batch_rows: int = DEFAULT_MAX_BATCH_ROWS
) -> Any:
    """One loaded model per (path, openblas, max_batch_rows) per process."""
    _require_mlx()
    from cotaudit.engine.mlx import MLXEngine

    return MLXEngine.load(path, openblas=openblas, max_batch_rows=max_batch_rows)


class MLXAPI(LocalEngineAPI):
    """Inspect provider over :class:`cotaudit.engine.mlx.MLXEngine`."""

    backend = "mlx"
    model_arg_names = ("openblas", "max_batch_rows")

    def start(
        self, openblas: bool | None = None, max_batch_rows: int = DEFAULT_MAX_BATCH_ROWS
    ) -> None:
        check_model_name(self.model_name, "mlx/")
        rows = batch_rows_arg(max_batch_rows)
        _require_mlx()
        self.load_engine = lambda: _load_engine(alias_path(self.model_name), openblas, rows)
