"""The probe engine over any Inspect model that continues a final assistant message (prefill).

For Inspect's ``vllm`` and ``sglang`` providers (whose prefix caching does the cache reuse) and
any other provider that honours assistant prefill. Token positions come from the model's
tokenizer (a transformers tokenizer named by ``tokenizer``, by default the model's own name):
the CoT text is re-tokenised. Prefix t is sent as token ids (``render(prompt) ++ cot[:t] ++
tag``) to an OpenAI-compatible server's completions endpoint, else as the decoded text of the
first t tokens plus the tag in a final assistant message.

``loglikelihood`` reads prompt log-probabilities of ``render(context + [assistant:
continuation])`` (prefill, so no end-of-turn token follows it); the continuation's tokens are
the last entries. On a vLLM server started with ``--enable-scale-out`` and
``--enable-prompt-tokens-details`` the token ids go to its ``/inference/v1/generate`` endpoint
(:data:`GENERATE_PATH`) with ``prompt_logprobs=0`` and ``skip_reading_prefix_cache=false``, so
the prefix cache serves the context: vLLM computes prompt log-probabilities only for the
positions it computes, rows ``cached..L-2`` for a prompt of L tokens whose first ``cached``
came from its cache (``usage.prompt_tokens_details.cached_tokens``), the rows before being left
unset. The continuation's rows (``start-1..L-2``, start its first token) are therefore read only
when ``cached <= start - 1``; otherwise, or when the server could not send the answer because an
unset row held NaN or +inf (HTTP 400, "Out of range float values are not JSON compliant"), the
request is sent again with ``skip_reading_prefix_cache=true`` (a whole prefill). A server
without the endpoint (HTTP 403 or 404: no ``--enable-scale-out``, a router that does not forward
it) or without the cached count in its answers (no ``--enable-prompt-tokens-details``) is asked
through Inspect's chat request with ``GenerateConfig(prompt_logprobs=1)`` (Inspect's ``vllm``
and ``sglang`` providers return them in ``ChatCompletionChoice.prompt_logprobs``), for which
vLLM reads no prefix cache. A provider that returns none fails with :class:`EngineCapabilityError`.

``score_answers`` (exact answer scores) reads the next-token distribution at the request's
temperature after every answer-tree node that has children or reads, depth by depth: the nodes
of one depth, at every cut where their path is at least ``prune_below`` likely, go in one
completions call per id list, each a list of token-id prompts ``render(prompt) ++ cot[:t] ++
tag ++ path(node)`` with ``max_tokens=1``, ``temperature=T`` and ``logprob_token_ids`` (vLLM:
the log-probabilities of the listed ids, at most :data:`MAX_TOKEN_IDS` a request). A server
started with ``--logprobs-mode processed_logprobs`` returns log_softmax(z / T), the
distribution the token is sampled from (its default, raw log-probabilities, is log_softmax(z)
whatever T: a request at T != 1 on such a server fails with :class:`EngineCapabilityError`).
The ids asked for are the children's tokens and, per read set, the set itself or, when smaller,
its complement over the vocabulary (mass = 1 - the complement's). A set too large for one
request is read by its mass: one id a of it (the anchor) is read as above and again with
``allowed_token_ids`` = the set, which renormalises q over the set (vLLM's processed
log-probabilities come after that mask), so mass(set) = q(a) / q(a | set). These are sampling
requests, not ``prompt_logprobs`` ones, so the server's prefix cache serves the shared prompt +
CoT (vLLM skips the cache for a request with ``prompt_logprobs`` unless told otherwise).
:attr:`requests` counts the calls and prompts sent, and the scorings' prompt and cached tokens.

Two provider behaviours are adjusted on the model's API object when the engine is built (see
:func:`keep_turns_as_written` and :func:`fail_fast_on_dead_server`): the turns reach the server
as written (Inspect's ``vllm`` provider would merge consecutive user messages), and a server that
answers HTTP 5xx while its ``/health`` fails stops the run at once with
:class:`DeadServerError` instead of being retried for minutes.

Every request of one sample carries the sample's routing key (:func:`routing_key`) in the
:data:`ROUTING_HEADER` header: the CoT and report scorings through the provider's own requests
(:func:`route_by_sample`), the prefix sweeps and exact scores on the completions endpoint. A
session-affine router in front of several replicas (vllm-router's ``consistent_hash`` policy)
then keeps the sample on one replica, whose prefix cache holds its prompt and CoT.

Greedy requests (temperature 0) carry no ``seed``: it cannot change them, and on vLLM's CPU
build a seeded sampling request is what can kill the engine (see
``scripts/vllm_cpu_server.py``). The exact scores' sampling requests carry none either: only
their log-probabilities are read.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from inspect_ai.model import GenerateConfig, Model

from cotaudit.engine.base import (
    SCORING_BACKENDS,
    AnswerScoreRequest,
    AnswerScores,
    AnswerTree,
    EngineCapabilityError,
    Generation,
    LoglikResult,
    Message,
    PrefixRequest,
    seed_for,
)
from cotaudit.engine.chat import to_inspect
from cotaudit.engine.tokens import TokenizerVerbs

logger = logging.getLogger(__name__)

MAX_TOKEN_IDS = 128
"""The most ``logprob_token_ids`` one vLLM request may list (``MAX_LOGPROB_TOKEN_IDS``)."""


GENERATE_PATH = "/inference/v1/generate"
"""vLLM's token-in, token-out endpoint (server flag ``--enable-scale-out``): takes the prompt's
token ids and vLLM's own ``SamplingParams``, ``skip_reading_prefix_cache`` among them."""


@dataclass
class ServerRequests:
    """What the engine has sent to its server itself (not through Inspect's chat requests):
    ``calls`` (HTTP requests to the completions endpoint and :data:`GENERATE_PATH`) and the
    token-id ``prompts`` they carried (a call with a list of n prompts is n requests in the
    server's scheduler, each prefilling what its prefix cache lacks);
    ``scorings`` (continuations scored on :data:`GENERATE_PATH`), the ``scoring_prompt_tokens``
    and ``scoring_cached_tokens`` (served from the prefix cache, as the server counted them:
    computed = prompt - cached) of every request they sent that the server answered, and
    ``scoring_refills``: scorings sent a second time, without reading the cache, because it held
    part of the continuation or the server could not send the rows it left unset."""

    calls: int = 0
    prompts: int = 0
    scorings: int = 0
    scoring_prompt_tokens: int = 0
    scoring_cached_tokens: int = 0
    scoring_refills: int = 0


ROUTING_HEADER = "X-Session-ID"
"""The header that carries a sample's routing key: the first hash key vllm-router's
``consistent_hash`` policy reads (before ``X-User-ID``, the body's ``session_params`` and
``user``). Without any key it hashes what it reads of the request: every chat request the same
(it reads no text from them), every token-id prompt by its length, so a sample's requests are
spread over the replicas by length, not kept together."""

ROUTING_KEY_ENV = "COTAUDIT_ROUTING_KEY"
"""Environment variable: ``off`` sends no routing key (to measure a router without it)."""


def routing_key() -> str | None:
    """The active Inspect sample's routing key, ``None`` outside a sample or when
    :data:`ROUTING_KEY_ENV` is ``off``: the first 32 hex digits of the SHA-256 of the JSON list
    ``[task name, sample id, epoch]``. Stable across requests, runs and ``eval-retry`` of the
    same sample; hex, so any sample id is a valid header value."""
    from inspect_ai.log._samples import sample_active

    active = sample_active()
    if active is None or os.environ.get(ROUTING_KEY_ENV) == "off":
        return None
    ident = json.dumps([active.task, str(active.sample.id), active.epoch])
    return hashlib.sha256(ident.encode()).hexdigest()[:32]


def routing_headers() -> dict[str, str]:
    """``{ROUTING_HEADER: routing_key()}``, or no header when there is no key."""
    key = routing_key()
    return {ROUTING_HEADER: key} if key is not None else {}


def route_by_sample(api: Any) -> None:
    """Make every request ``api`` sends itself (Inspect's chat requests: the CoT, report
    scorings) carry :func:`routing_headers`, through the OpenAI-compatible providers'
    ``request_headers`` (merged beneath a request's own ``extra_headers``)."""
    original = getattr(api, "request_headers", None)
    if original is None or getattr(original, "_cotaudit_routed", False):
        return

    def request_headers(config: GenerateConfig) -> dict[str, str]:
        return {**original(config), **routing_headers()}

    request_headers._cotaudit_routed = True  # type: ignore[attr-defined]
    api.request_headers = request_headers


class DeadServerError(RuntimeError):
    """The model server answers every request with an HTTP 5xx and its ``/health`` check fails:
    its engine has died, and retrying cannot help."""


def keep_turns_as_written(api: Any) -> None:
    """Make ``api`` send consecutive user (or assistant) messages as separate turns.

    Inspect's ``vllm`` provider merges them into one message joined by a newline
    (``collapse_user_messages()`` is true) before the server applies the chat template. A
    report_ll transcript ends with a command's output and then the report request, two user
    turns: merged, the server's prompt lost one end-of-turn plus user header (SmolLM2: 4 tokens
    fewer than our rendering), so its prompt log-probabilities no longer lined up with ours and
    the model read a different chat from the one ``hf-probe/`` and ``mlx/`` score. The chat
    template itself (the server's and ours are the same) is left to render the turns.
    """
    for name in ("collapse_user_messages", "collapse_assistant_messages"):
        if getattr(api, name, lambda: False)():
            setattr(api, name, lambda: False)


def server_root(api: Any) -> str | None:
    """The server's root URL (``base_url`` without ``/v1``), if the provider has one."""
    base = getattr(api, "base_url", None)
    return str(base).rstrip("/").removesuffix("/v1") if base else None


def server_health(root: str, timeout: float = 5.0) -> str | None:
    """``None`` if ``GET {root}/health`` answers 200, or if it does not but ``GET
    {root}/readiness`` does; else what ``/health`` answered instead.

    A router over replicas (vllm-router) answers ``/health`` with 503 as soon as one replica is
    down, while ``/readiness`` answers 200 as long as one is healthy: its requests then go to
    the healthy ones, so a 5xx from it stays retryable. A vLLM server has no ``/readiness``."""
    import httpx

    try:
        status = httpx.get(f"{root}/health", timeout=timeout).status_code
        if status != 200 and httpx.get(f"{root}/readiness", timeout=timeout).status_code == 200:
            return None
    except httpx.HTTPError as e:
        return f"{type(e).__name__}: {e}"
    return None if status == 200 else f"HTTP {status}"


def dead_server_error(api: Any, ex: BaseException) -> DeadServerError | None:
    """A :class:`DeadServerError` if ``ex`` is an HTTP 5xx from a server whose ``/health``
    fails, else ``None`` (a 5xx from a healthy server stays a retryable fault)."""
    status = getattr(ex, "status_code", None)
    root = server_root(api)
    if not isinstance(status, int) or status < 500 or root is None:
        return None
    health = server_health(root)
    if health is None:
        return None
    return DeadServerError(
        f"the model server at {root} answered HTTP {status} and its /health check failed "
        f"({health}): its engine has died, so the run stops instead of retrying. Restart the "
        "server (its log has the cause). On vLLM's CPU build a seeded sampling request kills "
        "the engine (RuntimeError: CPU Generator does not use offset) unless the server was "
        "started with --no-enable-chunked-prefill."
    )


def fail_fast_on_dead_server(api: Any) -> None:
    """Make ``api.should_retry`` raise :class:`DeadServerError` for a dead server.

    Inspect retries 5xx answers (vLLM's provider every 5 s, for as long as the run's retry
    budget allows); a vLLM whose engine died answers every request with HTTP 500 and fails its
    ``/health`` check, so each retry is wasted. Raising from the retry decision stops the
    request at once (every request through this model: CoT generation too) with an error that
    says why.
    """
    original = getattr(api, "should_retry", None)
    if original is None or getattr(original, "_cotaudit_fail_fast", False):
        return

    def should_retry(ex: BaseException) -> Any:
        dead = dead_server_error(api, ex)
        if dead is not None:
            logger.error("%s", dead)
            raise dead from ex
        return original(ex)

    should_retry._cotaudit_fail_fast = True  # type: ignore[attr-defined]
    api.should_retry = should_retry


class InspectPrefillEngine(TokenizerVerbs):
    """Engine verbs implemented with ``Model.generate`` and assistant prefill; token positions
    and the vocabulary (its end id the tokenizer's end-of-sequence id) from ``tokenizer``."""

    def __init__(self, model: Model, tokenizer: Any) -> None:
        self.model = model
        self.tokenizer = self.hf_tokenizer = tokenizer
        self.eos_ids = [tokenizer.eos_token_id] if tokenizer.eos_token_id is not None else []
        self._processed_logprobs: bool | None = None
        self._generate_endpoint: bool | None = None  # None: not yet tried
        self.requests = ServerRequests()
        api = getattr(model, "api", None)  # None: a stand-in model in a unit test
        if api is not None:
            keep_turns_as_written(api)
            fail_fast_on_dead_server(api)
            route_by_sample(api)

    _render = TokenizerVerbs.render
    """:meth:`render`, under the name the vLLM benchmark and tests read."""

    @classmethod
    def for_model(cls, model: Model, tokenizer: str | None = None) -> InspectPrefillEngine:
        """Load the transformers tokenizer ``tokenizer`` (default: the model's name)."""
        from transformers import AutoTokenizer

        name = tokenizer or model.api.model_name
        try:
            tok = AutoTokenizer.from_pretrained(name)
        except Exception as e:  # noqa: BLE001 - surface which tokenizer failed and how to fix it
            raise RuntimeError(
                f"cannot load tokenizer {name!r} for token positions on {model}: {e}. "
                "Pass -T tokenizer=<hub id or local path> naming the model's tokenizer."
            ) from e
        return cls(model, tok)

    async def generate(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float = 0.0,
        seed: int = 0,
    ) -> Generation:
        out = await self.model.generate(
            to_inspect(messages),
            config=GenerateConfig(
                max_tokens=max_tokens, temperature=temperature, seed=seed if temperature else None
            ),
        )
        return Generation(text=out.completion, token_ids=self.tokenize(out.completion))

    async def continue_prefixes(self, request: PrefixRequest) -> list[list[str]]:
        """The k answers per prefix. On an OpenAI-compatible server (``vllm/``, ``sglang/``)
        the prompt is sent as token ids to its completions endpoint: exactly
        ``render(messages) ++ cot[:t] ++ tag``, the HF and MLX engines' sequence. Sending it as
        text (an assistant prefill) lets the server re-tokenise across the joins: with
        trace_tutor's tag, which starts with a blank line, the assistant header's newline and
        the tag's merged into one token at t = 0 and the greedy answers differed from
        ``hf-probe/``. Other providers get the assistant prefill."""
        client = await self._completions_client()
        prefixes = self._prefixes(request)

        async def one(t: int) -> list[str]:
            answers: list[str] = []
            attempt = 0
            while len(answers) < request.k:
                # greedy answers are identical: one is asked for (vLLM refuses n > 1 greedy)
                n = request.k - len(answers) if request.temperature else 1
                seed = seed_for(request.seed, t, attempt) if request.temperature else None
                if client is not None:
                    got = await self._complete_ids(client, prefixes[t], request, n, seed)
                else:
                    got = await self._complete_prefill(request, t, n, seed)
                if not got:
                    raise RuntimeError(f"{self.model} returned no choices for prefix t={t}")
                answers += got[:n] if request.temperature else got[:1] * request.k
                attempt += 1
            return answers

        return list(await asyncio.gather(*(one(t) for t in request.positions)))

    async def _completions_client(self) -> Any:
        """The provider's OpenAI client if it has a completions endpoint, else ``None``.
        (Inspect's ``vllm`` provider connects on its first request: ``_ensure_server_started``
        does that first when the engine is used before any ``generate``.)"""
        api = getattr(self.model, "api", None)
        ensure = getattr(api, "_ensure_server_started", None)
        if ensure is not None:
            await ensure()
        client = getattr(api, "client", None)
        return client if hasattr(client, "completions") else None

    async def _complete_ids(
        self, client: Any, ids: list[int], request: PrefixRequest, n: int, seed: int | None
    ) -> list[str]:
        extra = {} if seed is None else {"seed": seed}
        out = await self._create_completion(
            client,
            prompt=ids,
            n=n,
            max_tokens=request.max_tokens,
            temperature=request.temperature,
            **extra,
        )
        return [c.text for c in sorted(out.choices, key=lambda c: c.index)]

    async def _create_completion(self, client: Any, **params: Any) -> Any:
        """``client.completions.create`` for the served model, with the sample's routing
        header; a dead server gets its own error."""
        api = self.model.api
        name = api.service_model_name() if hasattr(api, "service_model_name") else api.model_name
        prompt = params["prompt"]
        self.requests.calls += 1
        self.requests.prompts += len(prompt) if prompt and isinstance(prompt[0], list) else 1
        try:
            return await client.completions.create(
                model=name, extra_headers=routing_headers(), **params
            )
        except Exception as e:  # noqa: BLE001 - a dead server gets its own error
            dead = dead_server_error(api, e)
            if dead is not None:
                raise dead from e
            raise

    async def _check_processed_logprobs(self, client: Any, ids: list[int]) -> None:
        """Fail unless the server's log-probabilities are at the request's temperature: the same
        token's value at T = 1 and T = 1/2 differs only then (raw log-probabilities ignore T)."""
        if self._processed_logprobs is None:
            [one] = await self._next_token_logprobs(client, [ids], [0], 1.0)
            [half] = await self._next_token_logprobs(client, [ids], [0], 0.5)
            self._processed_logprobs = abs(one[0] - half[0]) > 1e-6
        if not self._processed_logprobs:
            raise EngineCapabilityError(
                f"{self.model} returns log-probabilities before temperature (vLLM's default "
                "--logprobs-mode raw_logprobs), so the forced-answer distribution at T != 1 "
                "cannot be read: start the server with --logprobs-mode processed_logprobs "
                "(scripts/vllm_cpu_server.py does)"
            )

    async def _complete_prefill(
        self, request: PrefixRequest, t: int, n: int, seed: int | None
    ) -> list[str]:
        prefix = self.detokenize(request.cot_token_ids[:t]) + request.tag
        messages = list(request.messages) + [{"role": "assistant", "content": prefix}]
        out = await self.model.generate(
            to_inspect(messages),
            config=GenerateConfig(
                max_tokens=request.max_tokens,
                temperature=request.temperature,
                seed=seed,
                num_choices=n,
            ),
        )
        return [c.message.text for c in out.choices]

    async def score_answers(self, request: AnswerScoreRequest) -> list[AnswerScores]:
        """The tree's scores after each prefix from the server's next-token log-probabilities
        at the request's temperature (see the module docstring), read level by level.

        At node n (-1: right after the tag), with q = softmax(z / T) there: a child token's
        log-probability is log q[token]; a read (n, S) is sum over v in S of q[v], or
        1 - sum over v not in S of q[v] when the complement (over the tokenizer's ids) is
        the smaller set. Node n is read at cut t only where P(path to n | prefix_t) >=
        ``request.prune_below`` (the root always): a node left unread reads -inf below it and
        its reads 0, so p loses less than ``prune_below`` per unread node. The nodes of one
        depth, at every cut where they are read, go to the server in one completions call
        (:meth:`_read_level`); depths follow one another, each needing its parents' values."""
        if not request.positions:
            return []
        client = await self._completions_client()
        if client is None:
            raise EngineCapabilityError(
                f"{self.model}: the exact estimator (answer scores) needs a vLLM server's "
                f"completions endpoint (vllm/), or {SCORING_BACKENDS}"
            )
        prompt_ids, tag_ids = self._prompt_and_tag(request)
        tree, temperature = request.tree, request.temperature
        if temperature != 1.0:
            await self._check_processed_logprobs(client, prompt_ids)
        vocab = frozenset(range(len(self.tokenizer)))
        # per read set: (complemented, the ids asked for)
        asked = [
            (True, sorted(vocab - s)) if 2 * len(s) > len(vocab) else (False, sorted(s))
            for s in request.token_sets
        ]
        plan = _node_plan(tree, request.reads, asked, MAX_TOKEN_IDS)
        floor = math.log(request.prune_below) if request.prune_below > 0 else -math.inf
        children: dict[int, list[int]] = {}
        for child, parent in enumerate(tree.parents):
            children.setdefault(parent, []).append(child)
        cot = list(request.cot_token_ids)
        cuts = {t: prompt_ids + cot[:t] + tag_ids for t in request.positions}
        logq: dict[int, dict[int, dict[int, float]]] = {t: {} for t in cuts}
        # (t, node, set) -> log q(anchor) with the next token restricted to the set's ids
        masked: dict[tuple[int, int, int], float] = {}
        path_lp: dict[int, dict[int, float]] = {t: {-1: 0.0} for t in cuts}
        for level in _levels(tree, plan):
            calls = []
            jobs: list[tuple[int, list[int], int | None]] = []  # node, cuts, set read by mass
            for n in level:
                at = [t for t in cuts if n == -1 or path_lp[t].get(n, -math.inf) >= floor]
                prompts = [cuts[t] + tree.path(n) for t in at]
                ids, big = plan[n]
                for i in range(0, len(ids), MAX_TOKEN_IDS):
                    chunk = ids[i : i + MAX_TOKEN_IDS]
                    calls.append(self._next_token_logprobs(client, prompts, chunk, temperature))
                    jobs.append((n, at, None))
                for read_set in big:
                    members = asked[read_set][1]
                    calls.append(
                        self._next_token_logprobs(
                            client, prompts, members[:1], temperature, allowed=members
                        )
                    )
                    jobs.append((n, at, read_set))
            for (n, at, by_mass), found in zip(jobs, await asyncio.gather(*calls), strict=True):
                for t, got in zip(at, found, strict=True):
                    if by_mass is None:
                        logq[t].setdefault(n, {}).update(got)
                    else:
                        masked[(t, n, by_mass)] = got[asked[by_mass][1][0]]
            for n in level:
                for t in cuts:
                    if n in logq[t]:
                        for child in children.get(n, ()):
                            path_lp[t][child] = path_lp[t][n] + logq[t][n][tree.tokens[child]]

        def scores(t: int) -> AnswerScores:
            read = logq[t]
            node_lp = [
                read[parent][tok] if parent in read else -math.inf
                for tok, parent in zip(tree.tokens, tree.parents, strict=True)
            ]
            masses = []
            for node, s in request.reads:
                complemented, ids = asked[s]
                if node not in read:
                    masses.append(0.0)
                    continue
                if (t, node, s) in masked:  # q(anchor) / q(anchor | next in the set)
                    mass = math.exp(read[node][ids[0]] - masked[(t, node, s)])
                else:
                    mass = math.fsum(math.exp(read[node][v]) for v in ids)
                masses.append(min(1.0, max(0.0, 1.0 - mass if complemented else mass)))
            return AnswerScores(node_lp, masses)

        return [scores(t) for t in request.positions]

    async def _next_token_logprobs(
        self,
        client: Any,
        prompts: list[list[int]],
        wanted: list[int],
        temperature: float,
        allowed: Sequence[int] | None = None,
    ) -> list[dict[int, float]]:
        """log q(v) for each v in ``wanted`` (at most :data:`MAX_TOKEN_IDS`) after each prompt,
        q the server's next-token distribution at ``temperature``, restricted to ``allowed``
        and renormalised over it when given (``allowed_token_ids``: the server's processed
        log-probabilities are taken after that mask): one completions call that carries every
        prompt, with ``wanted`` as its ``logprob_token_ids``. (The whole vocabulary,
        ``logprobs=-1``, would read any set in one request, but its answer took 3.6-4.0 s
        against 0.15 s for 13 ids on the CPU server: the server writes 49,152 values.)"""
        if not prompts:
            return []
        body: dict[str, Any] = {"logprob_token_ids": wanted, "return_tokens_as_token_ids": True}
        if allowed is not None:
            body["allowed_token_ids"] = list(allowed)
        try:
            out = await self._create_completion(
                client,
                prompt=prompts,
                max_tokens=1,
                temperature=temperature,
                logprobs=len(wanted),
                extra_body=body,
            )
        except Exception as e:  # noqa: BLE001 - name what the exact scores need
            if getattr(e, "status_code", None) == 400:
                raise EngineCapabilityError(
                    f"{self.model} refused a log-probability request ({e}); the exact estimator "
                    "over vllm/ needs vLLM >= 0.32 (logprob_token_ids) started with "
                    "--max-logprobs -1 --logprobs-mode processed_logprobs "
                    "(scripts/vllm_cpu_server.py)"
                ) from e
            raise
        choices = sorted(out.choices, key=lambda c: c.index)
        if len(choices) != len(prompts):
            raise RuntimeError(
                f"{self.model} answered {len(choices)} choices for {len(prompts)} prompts"
            )
        found = []
        for choice in choices:
            top = choice.logprobs.top_logprobs if choice.logprobs else None
            got = {
                int(k.removeprefix("token_id:")): float(v)
                for k, v in (top[0] if top else {}).items()
            }
            missing = set(wanted) - set(got)
            if missing:
                raise EngineCapabilityError(
                    f"{self.model} returned no log-probabilities for token ids "
                    f"{sorted(missing)[:5]}: the exact estimator needs a vLLM server "
                    "(logprob_token_ids)"
                )
            found.append(got)
        return found

    async def loglikelihood(self, context: Sequence[Message], continuation: str) -> LoglikResult:
        """log p(continuation | context) from the provider's prompt log-probabilities.

        The continuation's tokens are those of ``render(context + [assistant: continuation])``
        after the longest common start with ``render(context)`` (the generation prompt): the
        same tokens the HF and MLX engines score unless the continuation's first characters
        merge with the end of the assistant header (then the merged token is scored).
        """
        if not self.tokenize(continuation):
            return LoglikResult(0.0, 0, [], [])
        full_messages = list(context) + [{"role": "assistant", "content": continuation}]
        ctx_ids = self.render(context)
        full_ids = self.render(full_messages)
        common = 0
        for a, b in zip(ctx_ids, full_ids, strict=False):
            if a != b:
                break
            common += 1
        n_cont = len(full_ids) - common
        if n_cont <= 0:
            raise RuntimeError(
                f"{self.model}: the chat template drops the continuation {continuation[:40]!r}"
            )
        # the tokenizer's own token strings, as the HF and MLX engines record them
        tokens = self.tokenizer.convert_ids_to_tokens(full_ids[-n_cont:])
        cached_path = await self._scored_by_generate(full_ids, common)
        if cached_path is not None:
            return LoglikResult.summed(cached_path, tokens)
        out = await self.model.generate(
            to_inspect(full_messages),
            config=GenerateConfig(prompt_logprobs=1, max_tokens=1, temperature=0.0),
        )
        plp = out.choices[0].prompt_logprobs if out.choices else None
        if plp is None or not plp.content:
            raise EngineCapabilityError(
                f"{self.model} returned no prompt log-probabilities, so it cannot score a fixed "
                "continuation (Inspect's vllm/ and sglang/ providers return them for "
                f"GenerateConfig(prompt_logprobs=...)); use a provider that can: "
                f"{SCORING_BACKENDS}, or vllm/"
            )
        entries = plp.content
        if len(entries) != len(full_ids) - 1:
            served = out.usage.input_tokens if out.usage is not None else None
            raise RuntimeError(
                f"{self.model}: prompt log-probabilities cover {len(entries)} tokens but the "
                f"prompt has {len(full_ids)} with tokenizer {self.tokenizer.name_or_path!r} "
                f"(the server counted {served}); the tokenizer (-T tokenizer=) or chat "
                "template differs from the served model's, so continuation tokens cannot be "
                "located"
            )
        return LoglikResult.summed([float(e.logprob) for e in entries[-n_cont:]], tokens)

    async def _scored_by_generate(self, ids: list[int], start: int) -> list[float] | None:
        """log p(ids[i] | ids[:i]) for i in ``start..len(ids)-1`` from :data:`GENERATE_PATH`,
        the prefix cache serving what it holds of ``ids[:start]`` (module docstring); ``None``
        when the server has no such endpoint or does not count cached tokens (remembered: the
        chat request is used from then on)."""
        if self._generate_endpoint is False:
            return None
        await self._completions_client()  # Inspect's vllm provider sets base_url on connecting
        root = server_root(getattr(self.model, "api", None))
        if root is None:
            self._generate_endpoint = False
            return None
        try:
            body = await self._generate(root, ids, skip_cache=False)
        except _HTTPStatus as e:
            if e.status_code != 400:
                raise
            # vLLM 0.32 refuses to send rows it left unset that hold NaN or +inf ("Out of
            # range float values are not JSON compliant"): the cache was read, so the request
            # is sent again without it (another 400 is then raised)
            body = {"usage": {"prompt_tokens_details": {"cached_tokens": start}}}
        if body is None:
            self._generate_endpoint = False
            return None
        cached = _cached_tokens(body)
        if cached is None:  # rows it left unset could not be told apart
            logger.warning(
                "%s: %s answers without usage.prompt_tokens_details.cached_tokens, so report "
                "scorings go through chat requests without the prefix cache; start the server "
                "with --enable-prompt-tokens-details (scripts/vllm_cpu_server.py does)",
                self.model,
                GENERATE_PATH,
            )
            self._generate_endpoint = False
            return None
        self._generate_endpoint = True
        if cached > start - 1:  # the continuation's first rows were served, not computed
            self.requests.scoring_refills += 1
            body = await self._generate(root, ids, skip_cache=True)
            assert body is not None  # the endpoint answered a moment ago
        self.requests.scorings += 1
        rows = body.get("prompt_logprobs") or []
        if len(rows) != len(ids):
            raise RuntimeError(
                f"{self.model}: {GENERATE_PATH} returned {len(rows)} prompt log-probability "
                f"rows for a prompt of {len(ids)} tokens"
            )
        return [float(rows[i][str(ids[i])]["logprob"]) for i in range(start, len(ids))]

    async def _generate(self, root: str, ids: list[int], skip_cache: bool) -> Any:
        """The JSON answer of :data:`GENERATE_PATH` to ``ids`` with one greedy token and the
        prompt tokens' own log-probabilities, or ``None`` on HTTP 403/404 (no such endpoint)."""
        import httpx

        api = self.model.api
        headers = routing_headers()
        key = getattr(api, "api_key", None)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        payload = {
            "token_ids": ids,
            "sampling_params": {
                "max_tokens": 1,
                "temperature": 0.0,
                "prompt_logprobs": 0,
                "skip_reading_prefix_cache": skip_cache,
                "detokenize": False,
            },
        }
        async with httpx.AsyncClient(timeout=600.0) as http:
            answer = await http.post(f"{root}{GENERATE_PATH}", json=payload, headers=headers)
        if answer.status_code in (403, 404):
            return None
        self.requests.calls += 1
        self.requests.prompts += 1
        if answer.status_code >= 400:
            failure = _HTTPStatus(answer.status_code, f"{GENERATE_PATH}: {answer.text[:300]}")
            raise (
                dead_server_error(api, failure) if answer.status_code >= 500 else None
            ) or failure
        body = answer.json()
        self.requests.scoring_prompt_tokens += len(ids)
        self.requests.scoring_cached_tokens += _cached_tokens(body) or 0
        return body


class _HTTPStatus(RuntimeError):
    """An HTTP failure with its ``status_code`` (what :func:`dead_server_error` reads)."""

    def __init__(self, status_code: int, text: str) -> None:
        super().__init__(f"HTTP {status_code}: {text}")
        self.status_code = status_code


def _cached_tokens(body: dict[str, Any]) -> int | None:
    """``usage.prompt_tokens_details.cached_tokens`` of a :data:`GENERATE_PATH` answer."""
    details = (body.get("usage") or {}).get("prompt_tokens_details") or {}
    cached = details.get("cached_tokens")
    return int(cached) if cached is not None else None


def _node_plan(
    tree: AnswerTree,
    reads: Sequence[tuple[int, int]],
    asked: Sequence[tuple[bool, list[int]]],
    most: int,
) -> dict[int, tuple[list[int], list[int]]]:
    """Per node with children or reads (-1: the root): (the token ids to read after it, the
    read sets to take by mass). The ids are its children's tokens and, per read, the ids the
    read asks for (``asked[set]``) when they all fit in ``most``; otherwise each read whose
    ids do not fit is taken by mass: only its first id (its anchor) is read, and again with
    the next token restricted to the read's ids."""
    kids: dict[int, set[int]] = {}
    for tok, parent in zip(tree.tokens, tree.parents, strict=True):
        kids.setdefault(parent, set()).add(tok)
    own: dict[int, list[int]] = {}
    for node, s in reads:
        own.setdefault(node, []).append(s)
    plan: dict[int, tuple[list[int], list[int]]] = {}
    for node in kids.keys() | own.keys():
        ids = set(kids.get(node, set()))
        sets = sorted(set(own.get(node, [])))
        if len(ids.union(*(asked[s][1] for s in sets))) <= most:
            plan[node] = (sorted(ids.union(*(asked[s][1] for s in sets))), [])
            continue
        small = [s for s in sets if len(asked[s][1]) <= most // 4]
        big = [s for s in sets if s not in small]
        ids = ids.union(*(asked[s][1] for s in small), *(asked[s][1][:1] for s in big))
        plan[node] = (sorted(ids), big)
    return plan


def _levels(tree: AnswerTree, nodes: Iterable[int]) -> list[list[int]]:
    """``nodes`` grouped by depth, the root's level first."""
    by_depth: dict[int, list[int]] = {}
    for node in nodes:
        by_depth.setdefault(tree.depth(node), []).append(node)
    return [by_depth[d] for d in sorted(by_depth)]
