"""``mlx-server/<model>``: Inspect provider for a running ``mlx_lm.server``.

The server is the user's own (``mlx_lm.server --model <model> --port 8080``); cotaudit only
talks to it. ``<model>`` names the served model's tokenizer (a local folder or hub id, or the
aliases ``default`` and ``tiny``), which renders the chat template client-side.

Base URL, first found: ``--model-base-url URL``, ``-M url=URL``, ``$MLX_SERVER_BASE_URL``,
else ``http://127.0.0.1:8080`` (the server's default). (``-M base_url=`` cannot work: Inspect
0.3.285's ``get_model`` already takes ``base_url`` and fails with "got multiple values for
keyword argument 'base_url'" before any provider runs.) Model args:

- ``tokenizer``: tokenizer folder or hub id when it differs from ``<model>``.
- ``timeout`` (300 s): a request with no complete answer by then fails (``MLXServerTimeout``).
- ``connect_timeout`` (5 s), ``retry_window`` (30 s: how long transient failures are retried
  before the error is raised), ``max_concurrency`` (8 requests in flight).
- ``seed_requests`` (true): send seeds with sampled requests (reproducible, served one at a
  time by the server); false lets the server batch them.
- ``server_model``: the ``model`` field sent to the server (default: none, i.e. the model the
  server was started with).

Chat generation goes through Inspect's retry (``should_retry``); ``loglikelihood`` is not
available (the server has no prompt log-probabilities) and fails before any request.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any

from inspect_ai.model import RetryDecision

from cotaudit.engine.base import Message
from cotaudit.engine.mlx import rope_overrides
from cotaudit.engine.mlx_server import (
    BASE_URL_ENV,
    DEFAULT_BASE_URL,
    MLXServerEngine,
    ServerOptions,
)
from cotaudit.providers._local import EngineAPI, resolve_model_path

BACKEND = "mlx-server"
logger = logging.getLogger(__name__)


def _load_tokenizer(path: str, name: str, model_name: str) -> Any:
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(path)
    except Exception as e:  # noqa: BLE001 - say which tokenizer failed and how to fix it
        raise RuntimeError(
            f"mlx-server/{model_name}: cannot load tokenizer {name!r} to render the chat "
            f"template client-side: {e}. Pass -M tokenizer=<local folder or hub id of the "
            "model the server runs>."
        ) from e


def _warn_rope_parameters(path: str) -> None:
    """mlx_lm.server (0.32) reads ``rope_theta`` only from the top level of config.json; a
    folder written by transformers >= 5 has it under ``rope_parameters`` and is served with
    the default 10000. The in-process ``mlx/`` provider corrects this; the server cannot be
    corrected from here, so say so."""
    import json
    from pathlib import Path

    config = Path(path) / "config.json"
    if not config.is_file():
        return
    try:
        overrides = rope_overrides(json.loads(config.read_text()))
    except (OSError, ValueError):
        return
    if overrides and overrides.get("rope_theta") != 10000:
        logger.warning(
            "%s has rope_parameters %s but no top-level rope_theta: mlx_lm.server 0.32 serves it "
            'with rope_theta 10000 (a different model); add "rope_theta": %s to its '
            "config.json before starting the server",
            config,
            overrides,
            overrides["rope_theta"],
        )


class MLXServerAPI(EngineAPI):
    """Inspect provider over :class:`cotaudit.engine.mlx_server.MLXServerEngine`."""

    backend = BACKEND
    model_arg_names = ("url", "tokenizer", *ServerOptions.names())

    def start(self, url: str | None = None, tokenizer: str | None = None, **options: Any) -> None:
        """``options``: the fields of :class:`cotaudit.engine.mlx_server.ServerOptions`. The
        base URL is Inspect's ``base_url``, else ``url``, else ``$MLX_SERVER_BASE_URL``, else
        the server's default."""
        model_name = self.model_name
        url = self.base_url or url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL
        self.base_url = url
        tokenizer_path = resolve_model_path(
            tokenizer or model_name, f"{BACKEND}/" if tokenizer is None else "-M tokenizer="
        )
        _warn_rope_parameters(tokenizer_path)
        self.probe_engine = MLXServerEngine(
            url,
            _load_tokenizer(tokenizer_path, tokenizer or model_name, model_name),
            name=f"mlx-server/{model_name}",
            options=ServerOptions(**options),
        )

    def max_connections(self) -> int:
        return self.probe_engine.options.max_concurrency

    def should_retry(self, ex: BaseException) -> bool | RetryDecision:
        if self.probe_engine.should_retry(ex):
            return RetryDecision.transient()
        return RetryDecision.no()

    def retry_wait(self) -> Any:
        from tenacity import wait_exponential, wait_random

        return wait_exponential(multiplier=0.5, max=8) + wait_random(0, 0.5)

    async def complete(
        self, messages: list[Message], *, max_tokens: int, temperature: float, seed: int, n: int
    ) -> tuple[Sequence[Any], int, dict[str, Any]]:
        """``n`` concurrent requests of one attempt each (Inspect retries); the prompt's tokens
        as the server counted them, else as rendered here; the server's base URL."""
        engine = self.probe_engine
        prompt = engine.render(messages)
        outs = await engine.complete_n(
            prompt, n=n, max_tokens=max_tokens, temperature=temperature, seed=seed
        )
        return outs, outs[0].prompt_tokens or len(prompt), {"base_url": engine.base_url}
