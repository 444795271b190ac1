"""Client engine for a running ``mlx_lm.server`` (the user's own, on their Mac or any host).

What the server offers decides the design (measured against mlx-lm 0.32):

- ``/v1/completions`` takes a raw prompt and applies no template, so we render the chat
  template client-side with the model's own (transformers) tokenizer and post the text; a
  prefix ``prompt ++ cot[:t] ++ tag`` is the decoded text of those token ids. The server
  re-tokenises it and reuses its own prompt cache across prefixes that share a start.
- No ``n``: k answers are k concurrent requests (bounded by ``max_concurrency``).
- ``logprobs: true`` returns the generated token ids, which we keep as the CoT's tokens (the
  server's ``text`` can drop a leading space token, so text is decoded from the ids).
- No prompt log-probabilities and no ``echo``: it cannot score a fixed string, so
  :meth:`MLXServerEngine.loglikelihood` raises :class:`EngineCapabilityError` before any
  request is sent.
- Sampling parameters are sent explicitly (``top_p=1``, ``top_k=0``, ``min_p=0``) so the
  server's own command-line defaults cannot change the study's plain temperature sampling.
  Sampled requests (temperature > 0) carry a seed, which makes the server serve them one at a
  time (reproducible); ``seed_requests=False`` lets it batch them instead.

Failures are never silent: a server that is down, too slow, answers an HTTP error or answers
something that is not a completion raises an :class:`MLXServerError` naming the URL and the
fix. Transient failures (connection refused or dropped, timeouts, HTTP 5xx/429, malformed
bodies) are retried with backoff while the server has been failing for less than
``retry_window`` seconds (Inspect's retry through ``ModelAPI.should_retry`` for chat
generation, the same policy in-engine for the probe's own requests), then the error is raised.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any, TypeVar

from cotaudit.engine.base import (
    SCORING_BACKENDS,
    AnswerScoreRequest,
    AnswerScores,
    EngineCapabilityError,
    GenerateFromN,
    Generation,
    LoglikResult,
    Message,
    PrefixRequest,
    seed_for,
)
from cotaudit.engine.tokens import TokenizerVerbs

logger = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_BASE_URL = "http://127.0.0.1:8080"
"""``mlx_lm.server``'s own default host and port."""
BASE_URL_ENV = "MLX_SERVER_BASE_URL"


class MLXServerError(RuntimeError):
    """A request to mlx_lm.server failed. ``transient`` errors are worth retrying."""

    transient: bool = True


class MLXServerUnreachable(MLXServerError):
    """Connection refused, reset or dropped."""


class MLXServerTimeout(MLXServerError):
    """No complete answer within the timeout."""


class MLXServerHTTPError(MLXServerError):
    """An HTTP error status (5xx and 429 are transient, other 4xx are not)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status
        self.transient = status >= 500 or status == 429


class MLXServerBadResponse(MLXServerError):
    """HTTP 200 with a body that is not an OpenAI text completion."""


@dataclass(frozen=True)
class Completion:
    """One answer of ``/v1/completions``."""

    text: str
    token_ids: list[int]
    finish_reason: str
    prompt_tokens: int | None


def normalize_base_url(url: str) -> str:
    """``http://host:port`` with no trailing ``/`` or ``/v1``."""
    url = url.strip().rstrip("/")
    url = url.removesuffix("/v1")
    if not url.startswith(("http://", "https://")):
        url = "http://" + url
    return url


def _snippet(body: bytes | str, limit: int = 200) -> str:
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    text = " ".join(text.split())
    return text[:limit] + ("..." if len(text) > limit else "")


@dataclass
class ServerOptions:
    """How the client talks to the server. Each field is the ``mlx-server/`` provider's model
    arg of the same name (``-M name=value``)."""

    timeout: float = 300.0
    """Seconds for a complete answer; a request without one fails (:class:`MLXServerTimeout`)."""
    connect_timeout: float = 5.0
    """Seconds to connect (and for ``GET /health`` to answer)."""
    retry_window: float = 30.0
    """Seconds a failing server's transient failures are retried before the error is raised."""
    max_concurrency: int = 8
    """Requests in flight at once."""
    seed_requests: bool = True
    """Send seeds with sampled requests (reproducible, served one at a time); False lets the
    server batch them."""
    server_model: str | None = None
    """The ``model`` field sent to the server (None: the model the server was started with)."""

    def __post_init__(self) -> None:
        if self.timeout <= 0 or self.connect_timeout <= 0:
            raise ValueError("timeout and connect_timeout must be positive")
        if self.max_concurrency <= 0:
            raise ValueError("max_concurrency must be positive")
        self.timeout = float(self.timeout)
        self.connect_timeout = float(self.connect_timeout)
        self.retry_window = float(self.retry_window)
        self.max_concurrency = int(self.max_concurrency)
        self.seed_requests = bool(self.seed_requests)

    @classmethod
    def names(cls) -> list[str]:
        """The fields' names, in declaration order."""
        return [f.name for f in fields(cls)]


class MLXServerEngine(TokenizerVerbs, GenerateFromN):
    """The probe engine over a running ``mlx_lm.server``'s ``/v1/completions`` endpoint; the
    prompt is rendered here (:class:`cotaudit.engine.tokens.TokenizerVerbs`, see the module
    docstring), and the vocabulary's end ids are those that end an answer here."""

    def __init__(
        self,
        base_url: str,
        tokenizer: Any,
        *,
        name: str = "mlx-server",
        options: ServerOptions | None = None,
    ) -> None:
        self.base_url = normalize_base_url(base_url)
        self.tokenizer = self.hf_tokenizer = tokenizer
        self.name = name
        self.options = options or ServerOptions()
        # the server appends the token it stopped at (an EOS of the model's generation config,
        # e.g. Qwen's <|im_end|> or <|endoftext|>): any special token ends the answer
        stop = set(getattr(tokenizer, "all_special_ids", None) or [])
        if tokenizer.eos_token_id is not None:
            stop.add(tokenizer.eos_token_id)
        self.eos_ids = sorted(stop)
        self.requests_sent = 0
        """Completion requests posted (a test can check that the server really answered)."""
        self._failing_since: float | None = None
        self._semaphores: dict[int, asyncio.Semaphore] = {}
        self._warned_prompt_mismatch = False

    context_length: int | None = None
    """Not known to the client: the server enforces its own limit (no CoT is cut to fit)."""

    # --- tokens ---------------------------------------------------------------------------

    def prompt_text(self, token_ids: Sequence[int]) -> str:
        """The text to post so the server's ``tokenizer.encode`` (which adds special tokens)
        gives back ``token_ids``: their decoded text, minus a leading BOS the server adds."""
        text = self.tokenizer.decode(list(token_ids), skip_special_tokens=False)
        bos, bos_id = self.tokenizer.bos_token, self.tokenizer.bos_token_id
        if bos and bos_id is not None and text.startswith(bos):
            if self.tokenizer.encode(text)[:2] == [bos_id, bos_id]:
                text = text[len(bos) :]
        return text

    # --- HTTP -----------------------------------------------------------------------------

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        sem = self._semaphores.get(id(loop))
        if sem is None:
            self._semaphores = {id(loop): asyncio.Semaphore(self.options.max_concurrency)}
            sem = self._semaphores[id(loop)]
        return sem

    def _fix(self) -> str:
        return (
            f"start it with `mlx_lm.server --model <model> --host 127.0.0.1 --port <port>` and "
            f"point cotaudit at it with --model-base-url, -M url= or {BASE_URL_ENV}"
        )

    async def complete(
        self, prompt_ids: Sequence[int], *, max_tokens: int, temperature: float, seed: int | None
    ) -> Completion:
        """One ``/v1/completions`` request, one attempt; raises :class:`MLXServerError`."""
        import anyio
        import httpx

        body: dict[str, Any] = {
            "prompt": self.prompt_text(prompt_ids),
            "max_tokens": int(max_tokens),
            "temperature": float(temperature),
            "top_p": 1.0,
            "top_k": 0,
            "min_p": 0.0,
            "logprobs": True,
            "stream": False,
        }
        if self.options.server_model:
            body["model"] = self.options.server_model
        if temperature > 0 and self.options.seed_requests and seed is not None:
            body["seed"] = int(seed) % 2**31
        url = f"{self.base_url}/v1/completions"
        timeouts = httpx.Timeout(self.options.timeout, connect=self.options.connect_timeout)
        async with self._semaphore():
            self.requests_sent += 1
            try:
                with anyio.fail_after(self.options.timeout):
                    async with httpx.AsyncClient(timeout=timeouts) as client:
                        resp = await client.post(url, json=body)
            except httpx.ConnectTimeout as e:
                raise MLXServerUnreachable(
                    f"{self.name}: mlx_lm.server at {self.base_url} did not accept a "
                    f"connection within {self.options.connect_timeout:g} s; {self._fix()}"
                ) from e
            except (TimeoutError, httpx.TimeoutException) as e:
                raise MLXServerTimeout(
                    f"{self.name}: mlx_lm.server at {self.base_url} did not answer within "
                    f"{self.options.timeout:g} s (raise -M timeout= for slow models)"
                ) from e
            except (httpx.UnsupportedProtocol, httpx.InvalidURL) as e:
                err = MLXServerError(f"{self.name}: bad base URL {self.base_url!r}: {e}")
                err.transient = False
                raise err from e
            except httpx.TransportError as e:
                raise MLXServerUnreachable(
                    f"{self.name}: cannot reach mlx_lm.server at {self.base_url} "
                    f"({type(e).__name__}: {e or 'connection failed'}); {self._fix()}"
                ) from e
        if resp.status_code != 200:
            raise MLXServerHTTPError(
                f"{self.name}: mlx_lm.server at {self.base_url} answered HTTP "
                f"{resp.status_code}: {_snippet(resp.content) or '(empty body)'}",
                resp.status_code,
            )
        completion = self._parse(resp.content)
        self._failing_since = None
        n_prompt = len(prompt_ids)
        if (
            completion.prompt_tokens is not None
            and completion.prompt_tokens != n_prompt
            and not self._warned_prompt_mismatch
        ):
            self._warned_prompt_mismatch = True
            logger.warning(
                "%s: the server counted %d prompt tokens where the client tokenizer has %d "
                "(text that re-tokenises differently at a boundary, or a different tokenizer: "
                "check that -M tokenizer= names the model the server runs)",
                self.name,
                completion.prompt_tokens,
                n_prompt,
            )
        return completion

    def _parse(self, content: bytes) -> Completion:
        def bad(why: str) -> MLXServerBadResponse:
            return MLXServerBadResponse(
                f"{self.name}: {self.base_url} answered HTTP 200 but not with an OpenAI text "
                f"completion ({why}): {_snippet(content) or '(empty body)'}; is this an "
                "mlx_lm.server?"
            )

        try:
            data = json.loads(content)
        except (ValueError, UnicodeDecodeError):
            raise bad("body is not JSON") from None
        if not isinstance(data, dict):
            raise bad("body is not a JSON object")
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise bad("no choices")
        choice = choices[0]
        text = choice.get("text")
        finish = choice.get("finish_reason")
        if not isinstance(text, str):
            raise bad("choice has no text")
        if not isinstance(finish, str):
            raise bad("choice has no finish_reason")
        ids: list[int] | None = None
        logprobs = choice.get("logprobs")
        if isinstance(logprobs, dict) and isinstance(logprobs.get("content"), list):
            try:
                ids = [int(e["id"]) for e in logprobs["content"]]
            except (KeyError, TypeError, ValueError):
                raise bad("logprobs entries have no token id") from None
        if ids and finish == "stop" and ids[-1] in self.eos_ids:
            ids.pop()
        if ids is None or (not ids and text):
            ids = self.tokenize(text)
        else:
            text = self.detokenize(ids)
        usage = data.get("usage")
        prompt_tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
        return Completion(
            text=text,
            token_ids=ids,
            finish_reason="stop" if finish == "stop" else "max_tokens",
            prompt_tokens=prompt_tokens if isinstance(prompt_tokens, int) else None,
        )

    async def health(self) -> bool:
        """True when ``GET /health`` answers ``{"status": "ok"}`` within the connect timeout."""
        import httpx

        try:
            async with httpx.AsyncClient(timeout=self.options.connect_timeout) as client:
                resp = await client.get(f"{self.base_url}/health")
            return resp.status_code == 200 and resp.json().get("status") == "ok"
        except Exception:  # noqa: BLE001 - any failure means "not healthy"
            return False

    # --- retry ----------------------------------------------------------------------------

    def should_retry(self, ex: BaseException) -> bool:
        """Retry a transient :class:`MLXServerError` while the server has been failing for less
        than ``retry_window`` seconds (any success resets the clock)."""
        if not isinstance(ex, MLXServerError) or not ex.transient:
            return False
        now = time.monotonic()
        if self._failing_since is None:
            self._failing_since = now
        return now - self._failing_since < self.options.retry_window

    async def _retrying(self, attempt: Callable[[], Awaitable[T]]) -> T:
        delay = 0.5
        while True:
            try:
                return await attempt()
            except MLXServerError as ex:
                if not self.should_retry(ex):
                    raise
                logger.warning("%s (retrying in %.1f s)", ex, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 8.0)

    # --- verbs ----------------------------------------------------------------------------

    async def complete_n(
        self,
        prompt_ids: Sequence[int],
        *,
        n: int,
        max_tokens: int,
        temperature: float,
        seed: int,
    ) -> list[Completion]:
        """``n`` concurrent requests for the same prompt (the server has no ``n``), request i
        seeded with ``seed_for(seed, i)``; one attempt each, so a caller's retry policy decides
        what happens on failure."""
        return list(
            await asyncio.gather(
                *(
                    self.complete(
                        prompt_ids,
                        max_tokens=max_tokens,
                        temperature=temperature,
                        seed=seed_for(seed, i),
                    )
                    for i in range(n)
                )
            )
        )

    async def generate_n(
        self, messages: Sequence[Message], *, max_tokens: int, temperature: float, seed: int, n: int
    ) -> list[Generation]:
        prompt = self.render(messages)
        outs = await self._retrying(
            lambda: self.complete_n(
                prompt, n=n, max_tokens=max_tokens, temperature=temperature, seed=seed
            )
        )
        return [Generation(o.text, o.token_ids, o.finish_reason) for o in outs]

    async def continue_prefixes(self, request: PrefixRequest) -> list[list[str]]:
        prefixes = self._prefixes(request)

        async def one(t: int, j: int) -> str:
            out = await self._retrying(
                lambda: self.complete(
                    prefixes[t],
                    max_tokens=request.max_tokens,
                    temperature=request.temperature,
                    seed=seed_for(request.seed, t, j),
                )
            )
            return out.text

        flat = await asyncio.gather(
            *(one(t, j) for t in request.positions for j in range(request.k))
        )
        k = request.k
        return [list(flat[i * k : (i + 1) * k]) for i in range(len(request.positions))]

    def _cannot_score(self) -> EngineCapabilityError:
        return EngineCapabilityError(
            f"{self.name}: mlx_lm.server returns no prompt log-probabilities (no echo), so it "
            f"cannot score a fixed continuation; use a provider that can: {SCORING_BACKENDS} "
            "(the same weights in-process), or vllm/ (prompt_logprobs)"
        )

    async def loglikelihood(self, context: Sequence[Message], continuation: str) -> LoglikResult:
        """Always raises :class:`EngineCapabilityError` (before any request)."""
        raise self._cannot_score()

    async def loglikelihood_many(
        self, context: Sequence[Message], continuations: Sequence[str]
    ) -> list[LoglikResult]:
        """Always raises :class:`EngineCapabilityError` (before any request)."""
        raise self._cannot_score()

    async def score_answers(self, request: AnswerScoreRequest) -> list[AnswerScores]:
        """Always raises :class:`EngineCapabilityError` (before any request): the server
        returns no log-probabilities of given tokens, which the exact estimator reads."""
        raise self._cannot_score()
