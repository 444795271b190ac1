"""``hf-probe/``: a Hugging Face transformers provider for Inspect with prefill and probe verbs.

Like Inspect's ``hf/`` for plain chat generation, plus: a final assistant message is continued
(prefill), ``num_choices`` samples come back as choices of one batch, and the probe engine's
verbs (``continue_prefixes`` with KV-cache reuse, ``loglikelihood``) are reachable as
``get_model().api.probe_engine``.

Model names: a local folder (a LoRA adapter folder too, loaded as its base with the adapter
merged in: :meth:`cotaudit.engine.hf.HFEngine.load`) or hub id, ``default`` (the embedded
SmolLM2-135M-Instruct) or ``tiny`` (a tiny random model for mechanical tests); any other name
fails at once, in one line
(:func:`cotaudit.providers._local.check_model_name`); the weights load on the first generate
or probe call, not when the provider starts. Model args: ``-M dtype=float32|bfloat16|
float16|auto``, ``-M device=cpu|cuda|mps``, ``-M max_batch_rows=N`` (rows decoding together
across concurrently running samples, default 64; 1 decodes one sample's job at a time),
``-M pad_rows=false`` (decode steps at their own row count where the step's products need a
multiple, :mod:`cotaudit.engine.hf_batch`: faster one job at a time, but results then depend
on the batch in the last float bits). With
batching, ``--max-connections N`` lets up to N samples' CoTs decode in one batch.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from cotaudit.providers._local import (
    LocalEngineAPI,
    ModelArgError,
    alias_path,
    batch_rows_arg,
    bool_arg,
    check_model_name,
    resolve_model_path,  # noqa: F401 - with _load_engine, a loaded engine without a provider
)

if TYPE_CHECKING:
    from cotaudit.engine.hf import HFEngine

DTYPES = ("float32", "bfloat16", "float16", "auto")
"""The ``-M dtype`` values (``auto``: the model's own)."""


@functools.lru_cache(maxsize=4)
def _load_engine(
    path: str,
    dtype: str,
    device: str,
    max_batch_rows: int | None = None,
    pad_rows: bool = True,
) -> HFEngine:
    """One loaded model per (path, dtype, device, max_batch_rows, pad_rows) per process
    (``max_batch_rows`` None: the engine's default). torch is imported here, on first load."""
    from cotaudit.engine.batcher import DEFAULT_MAX_BATCH_ROWS
    from cotaudit.engine.hf import HFEngine

    return HFEngine.load(
        path,
        dtype=dtype,
        device=device,
        max_batch_rows=DEFAULT_MAX_BATCH_ROWS if max_batch_rows is None else max_batch_rows,
        pad_rows=pad_rows,
    )


class HFProbeAPI(LocalEngineAPI):
    """Inspect provider over :class:`cotaudit.engine.hf.HFEngine`."""

    backend = "hf-probe"
    model_arg_names = ("dtype", "device", "max_batch_rows", "pad_rows")

    def start(
        self,
        dtype: str = "float32",
        device: str = "cpu",
        max_batch_rows: int | None = None,
        pad_rows: bool | str = True,
    ) -> None:
        if dtype not in DTYPES:
            raise ModelArgError(
                f"hf-probe: -M dtype must be one of {', '.join(DTYPES)}, got {dtype!r}"
            )
        check_model_name(self.model_name, "hf-probe/")
        rows = None if max_batch_rows is None else batch_rows_arg(max_batch_rows)
        pad = bool_arg("pad_rows", pad_rows)
        self.load_engine = lambda: _load_engine(
            alias_path(self.model_name), dtype, device, rows, pad
        )
