"""The scale-out path's adapter in isolation, and fault injection.

The real thing (a vLLM CPU server, agreement with ``hf-probe/default``) is tested in
``tests/engine/test_vllm_real.py``. Here:

- the adapter reads a vLLM chat-completion response of the recorded shape (top-level
  ``prompt_logprobs``: ``null`` for the first prompt token, then per position a dict keyed by
  token id with ``logprob``, ``rank``, ``decoded_token``; the prompt token first, then the top
  alternatives), parsed by Inspect's own OpenAI-response code, and refuses misaligned or
  missing log-probabilities;
- Inspect's real ``vllm`` provider talks over HTTP to a faulty server that answers as a vLLM
  whose engine has died (HTTP 500 on every request, ``/health`` 503) or fails once and
  recovers, and records the requests the engine sends (turns as written, seeds only when
  sampling).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT
from helpers import TOM_APPLES_CHAT as CONTEXT

from cotaudit.engine.base import EngineCapabilityError, LocalEngine, PrefixRequest, ProbeEngine
from cotaudit.engine.chat import render_chat
from cotaudit.engine.inspect_prefill import (
    ROUTING_HEADER,
    ROUTING_KEY_ENV,
    DeadServerError,
    InspectPrefillEngine,
)
from cotaudit.probing.sweep import context_room

REPORT = "He has 3 + 4 = 7 apples. The final answer is 7."
# a report_ll-shaped chat: a command's output and then the report request, two user turns
CHAT = CONTEXT + [
    {"role": "assistant", "content": "```bash\nls\n```"},
    {"role": "user", "content": "(no output)"},
    {"role": "user", "content": "Report what you did."},
]


# --- vLLM's response shape --------------------------------------------------------------------


def vllm_prompt_logprobs(ids: list[int], logprob_of, tokenizer, top: int = 1) -> list[Any]:
    """``prompt_logprobs`` as vLLM returns it for prompt ``ids``: ``None`` first, then per
    position ``{token_id: {"logprob", "rank", "decoded_token"}}`` with the prompt token first
    and up to ``top`` alternatives after it (``logprob_of(i, token) -> (logprob, rank)``)."""
    out: list[Any] = [None]
    for i in range(1, len(ids)):
        lp, rank = logprob_of(i, ids[i])
        entry = {
            str(ids[i]): {"logprob": lp, "rank": rank, "decoded_token": tokenizer.decode([ids[i]])}
        }
        for alt_rank, (alt, alt_lp) in enumerate(logprob_of.top(i, top), start=1):
            entry.setdefault(
                str(alt),
                {"logprob": alt_lp, "rank": alt_rank, "decoded_token": tokenizer.decode([alt])},
            )
        out.append(entry)
    return out


def vllm_chat_response(
    model: str,
    texts: list[tuple[str, str]],
    prompt_len: int,
    completion_len: int,
    prompt_logprobs: list[Any] | None,
) -> dict:
    """A ``/v1/chat/completions`` body as vLLM (0.6 - 0.10) sends it."""
    return {
        "id": "chatcmpl-6f1e5c8a1b2d4e0f9a7b3c2d1e0f9a8b",
        "object": "chat.completion",
        "created": 1733000000,
        "model": model,
        "choices": [
            {
                "index": i,
                "message": {
                    "role": "assistant",
                    "reasoning_content": None,
                    "content": text,
                    "tool_calls": [],
                },
                "logprobs": None,
                "finish_reason": finish,
                "stop_reason": None,
            }
            for i, (text, finish) in enumerate(texts)
        ],
        "usage": {
            "prompt_tokens": prompt_len,
            "total_tokens": prompt_len + completion_len,
            "completion_tokens": completion_len,
            "prompt_tokens_details": None,
        },
        "prompt_logprobs": prompt_logprobs,
        "kv_transfer_params": None,
    }


class RecordedModel:
    """Stands in for an Inspect ``Model``: answers every ``generate`` with one recorded vLLM
    response, parsed by Inspect's own OpenAI chat-completion code."""

    def __init__(self, raw: dict) -> None:
        self.raw = raw
        self.calls: list[tuple[list, Any]] = []

    def __str__(self) -> str:
        return "vllm/recorded"

    async def generate(self, messages, config):
        from inspect_ai.model import ModelOutput, ModelUsage
        from inspect_ai.model._openai import chat_choices_from_openai
        from openai.types.chat import ChatCompletion

        self.calls.append((messages, config))
        completion = ChatCompletion.model_validate(self.raw)
        usage = self.raw["usage"]
        return ModelOutput(
            model=self.raw["model"],
            choices=chat_choices_from_openai(completion, tools=[]),
            usage=ModelUsage(
                input_tokens=usage["prompt_tokens"],
                output_tokens=usage["completion_tokens"],
                total_tokens=usage["total_tokens"],
            ),
        )


class Synthetic:
    """Made-up log-probabilities: position i has logprob -(i / 10), the prompt token ranked
    2nd; the top alternative is token 5 at -0.01."""

    def __call__(self, i: int, token: int) -> tuple[float, int]:
        return -(i / 10), 2

    def top(self, i: int, n: int) -> list[tuple[int, float]]:
        return [(5, -0.01)][:n]


@pytest.mark.parametrize("top", [1, 3])
def test_adapter_reads_recorded_vllm_prompt_logprobs(tokenizer, top):
    pytest.importorskip("openai")
    full = render_chat(tokenizer, CONTEXT + [{"role": "assistant", "content": REPORT}])
    ctx = render_chat(tokenizer, CONTEXT)
    n = len(tokenizer.encode(REPORT, add_special_tokens=False))
    assert full[: len(ctx)] == ctx and len(full) == len(ctx) + n
    raw = vllm_chat_response(
        "tiny",
        [("x", "length")],
        len(full),
        1,
        vllm_prompt_logprobs(full, Synthetic(), tokenizer, top=top),
    )
    model = RecordedModel(json.loads(json.dumps(raw)))  # exactly what crosses the wire
    result = asyncio.run(InspectPrefillEngine(model, tokenizer).loglikelihood(CONTEXT, REPORT))
    expected = [-(i / 10) for i in range(len(ctx), len(full))]
    assert result.n_tokens == n
    assert result.token_logprobs == pytest.approx(expected)
    assert result.sum_logprob == pytest.approx(sum(expected))
    assert result.tokens == tokenizer.convert_ids_to_tokens(full[len(ctx) :])
    [(messages, config)] = model.calls
    assert config.prompt_logprobs == 1 and config.max_tokens == 1 and config.temperature == 0
    assert messages[-1].role == "assistant" and messages[-1].text == REPORT


def test_prefill_engine_is_no_local_engine_and_scores_each_report_with_its_own_request(tokenizer):
    """Not a LocalEngine (no context length of its own): no CoT is cut to fit, and report_ll
    scores the reports with one request each (the first before the others, so that a
    server's prefix cache holds the transcript when they come)."""
    pytest.importorskip("openai")
    from cotaudit.solvers.report_ll import score_reports

    full = render_chat(tokenizer, CONTEXT + [{"role": "assistant", "content": REPORT}])
    ctx = render_chat(tokenizer, CONTEXT)
    raw = vllm_chat_response(
        "tiny", [("x", "length")], len(full), 1, vllm_prompt_logprobs(full, Synthetic(), tokenizer)
    )
    model = RecordedModel(json.loads(json.dumps(raw)))
    engine = InspectPrefillEngine(model, tokenizer)
    assert isinstance(engine, ProbeEngine) and not isinstance(engine, LocalEngine)
    assert context_room(engine, CONTEXT, "The answer is", 8) is None
    results = asyncio.run(score_reports(engine, CONTEXT, [REPORT, REPORT]))
    expected = sum(-(i / 10) for i in range(len(ctx), len(full)))
    assert [r.sum_logprob for r in results] == pytest.approx([expected, expected])
    assert len(model.calls) == 2


def test_adapter_without_prompt_logprobs_names_the_backends_that_can(tokenizer):
    pytest.importorskip("openai")
    raw = vllm_chat_response("tiny", [("x", "length")], 10, 1, None)
    engine = InspectPrefillEngine(RecordedModel(raw), tokenizer)
    with pytest.raises(EngineCapabilityError) as info:
        asyncio.run(engine.loglikelihood(CONTEXT, REPORT))
    assert "hf-probe/" in str(info.value) and "mlx/" in str(info.value)


def test_adapter_refuses_misaligned_prompt_logprobs(tokenizer):
    pytest.importorskip("openai")
    full = render_chat(tokenizer, CONTEXT + [{"role": "assistant", "content": REPORT}])
    # the server tokenised the prompt into one token fewer than the client's tokenizer
    plp = vllm_prompt_logprobs(full[:-1], Synthetic(), tokenizer)
    raw = vllm_chat_response("tiny", [("x", "length")], len(full) - 1, 1, plp)
    engine = InspectPrefillEngine(RecordedModel(raw), tokenizer)
    with pytest.raises(RuntimeError, match="-T tokenizer="):
        asyncio.run(engine.loglikelihood(CONTEXT, REPORT))
    assert asyncio.run(engine.loglikelihood(CONTEXT, "")).n_tokens == 0


# --- fault injection: Inspect's vllm provider against a faulty server -------------------------


class FaultyVLLM:
    """``/v1/chat/completions``, ``/v1/models`` and ``/health`` answering as a vLLM server does.

    ``failures`` POSTs are answered with vLLM's HTTP 500 (``None``: all of them), then canned
    completions; ``/health`` answers ``health`` (vLLM: 503 once its engine is dead). Every
    request body is kept in ``requests``.
    """

    ENGINE_DEAD = {
        "error": {
            "message": "EngineCore encountered an issue. See stack trace "
            "(above) for the root cause.",
            "type": "InternalServerError",
            "param": None,
            "code": 500,
        }
    }

    def __init__(self, failures: int | None, health: int, readiness: int = 404) -> None:
        # readiness: a router's /readiness (200 while one replica is healthy); vLLM has none
        self.failures, self.health, self.readiness = failures, health, readiness
        self.requests: list[dict] = []
        self.routing: list[str | None] = []  # each POST's routing header (None: absent)
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path == "/health":
                    return self._send(fake.health, None)
                if self.path == "/readiness":
                    return self._send(fake.readiness, None)
                self._send(
                    200,
                    {
                        "object": "list",
                        "data": [{"id": "faulty", "object": "model", "max_model_len": 2048}],
                    },
                )

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(body)
                fake.routing.append(self.headers.get(ROUTING_HEADER))
                if fake.failures is None or fake.failures > 0:
                    if fake.failures:
                        fake.failures -= 1
                    return self._send(500, FaultyVLLM.ENGINE_DEAD)
                n = int(body.get("n") or 1)
                if self.path.endswith("/chat/completions"):
                    return self._send(
                        200, vllm_chat_response("faulty", [(" 4", "stop")] * n, 20, n, None)
                    )
                self._send(
                    200,
                    {
                        "id": "cmpl-1",
                        "object": "text_completion",
                        "created": 1,
                        "model": "faulty",
                        "usage": {
                            "prompt_tokens": 20,
                            "completion_tokens": n,
                            "total_tokens": 20 + n,
                        },
                        "choices": [
                            {"index": i, "text": f" {i}", "logprobs": None, "finish_reason": "stop"}
                            for i in range(n)
                        ],
                    },
                )

            def _send(self, status, body):
                payload = b"" if body is None else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        # Inspect's vllm provider keeps one server entry per model name: one name per server
        self.model = f"vllm/faulty-{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def faulty():
    pytest.importorskip("openai")
    servers: list[FaultyVLLM] = []

    def make(failures: int | None, health: int, readiness: int = 404) -> FaultyVLLM:
        servers.append(FaultyVLLM(failures, health, readiness))
        return servers[-1]

    yield make
    for server in servers:
        server.close()


def _engine(server: FaultyVLLM, tokenizer) -> InspectPrefillEngine:
    from inspect_ai.model import get_model

    model = get_model(
        server.model, base_url=server.url, api_key="test", memoize=False, retry_delay=1
    )
    return InspectPrefillEngine(model, tokenizer)


def test_dead_engine_stops_the_request_at_once_and_says_so(faulty, tokenizer):
    server = faulty(failures=None, health=503)
    engine = _engine(server, tokenizer)
    start = time.monotonic()
    with pytest.raises(DeadServerError, match="engine has died.*--no-enable-chunked-prefill"):
        asyncio.run(engine.generate(CONTEXT, max_tokens=4))
    assert time.monotonic() - start < 10
    # the OpenAI client's own two quick retries, then none of Inspect's
    assert len(server.requests) == 3
    cot = tokenizer.encode(REPORT, add_special_tokens=False)
    with pytest.raises(DeadServerError, match="engine has died"):  # prefixes (completions)
        asyncio.run(engine.continue_prefixes(PrefixRequest(CONTEXT, cot, [0, 4], " so", k=1)))


def _selfcommit_on(server: FaultyVLLM, tiny_path: str, log_dir: Path, **model_args: Any) -> Any:
    """The log of a greedy selfcommit run of two problems (four samples, k = 1) on ``server``,
    token positions from the tiny model's tokenizer (run from the working directory)."""
    from inspect_ai import eval as inspect_eval

    [log] = inspect_eval(
        "tasks/selfcommit.py",
        model=server.model,
        model_base_url=server.url,
        model_args={"api_key": "test", **model_args},
        task_args={
            "problems": 2,
            "max_cot_tokens": 16,
            "k": 1,
            "temperature": 0.0,
            "tokenizer": tiny_path,
        },
        log_dir=str(log_dir),
        display="none",
    )
    return log


def test_dead_engine_fails_the_eval_quickly_with_that_error(
    faulty, tiny_path, tmp_path, monkeypatch
):
    server = faulty(failures=None, health=503)
    monkeypatch.chdir(ROOT)
    start = time.monotonic()
    log = _selfcommit_on(server, tiny_path, tmp_path, retry_delay=1)
    assert log.status == "error"
    assert "engine has died" in log.error.message
    assert time.monotonic() - start < 90  # (loaded 2-core machine; retrying goes on for minutes)
    assert len(server.requests) <= 4 * 3  # per sample: the OpenAI client's own 3 tries at most


def test_a_500_from_a_healthy_server_is_still_retried(faulty, tokenizer):
    server = faulty(failures=1, health=200)
    engine = _engine(server, tokenizer)
    out = asyncio.run(engine.generate(CONTEXT, max_tokens=4))
    assert out.text == " 4"
    assert len(server.requests) == 2  # the OpenAI client's own retry


def test_a_500_from_a_router_with_a_healthy_replica_is_retried(faulty, tokenizer):
    """vllm-router answers /health with 503 as soon as one replica is down, /readiness with 200
    while one is healthy: its 500s are retried (by Inspect, after the OpenAI client's own three
    tries), not taken for a dead engine."""
    server = faulty(failures=3, health=503, readiness=200)
    engine = _engine(server, tokenizer)
    out = asyncio.run(engine.generate(CONTEXT, max_tokens=4))
    assert out.text == " 4"
    assert len(server.requests) == 4


def test_turns_reach_the_server_as_written(faulty, tokenizer):
    """Inspect's vllm provider would merge the two final user turns of a report_ll transcript
    into one (the server then rendered 4 tokens fewer than we did)."""
    server = faulty(failures=0, health=200)
    engine = _engine(server, tokenizer)
    asyncio.run(engine.generate(CHAT, max_tokens=3))
    [body] = server.requests
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user", "user"]


def test_prefixes_are_sent_as_token_ids_and_greedy_requests_carry_no_seed(faulty, tokenizer):
    server = faulty(failures=0, health=200)
    engine = _engine(server, tokenizer)
    cot = tokenizer.encode(REPORT, add_special_tokens=False)
    tag = "\n\nSo the answer is"
    for temperature in (0.0, 0.7):
        got = asyncio.run(
            engine.continue_prefixes(
                PrefixRequest(CHAT, cot, [0, 4], tag, k=2, max_tokens=3, temperature=temperature)
            )
        )
        # greedy: one answer asked for and given k times (vLLM refuses n > 1 when greedy)
        first = [" 0", " 0"] if temperature == 0 else [" 0", " 1"]
        assert got == [first, first]
    # the two prefixes of each sweep are sent concurrently: order them by prompt length
    greedy = sorted(server.requests[:2], key=lambda b: len(b["prompt"]))
    sampled = sorted(server.requests[2:], key=lambda b: len(b["prompt"]))
    prompt, tag_ids = render_chat(tokenizer, CHAT), tokenizer.encode(tag, add_special_tokens=False)
    for body, t in zip(greedy, [0, 4], strict=True):
        assert body["prompt"] == prompt + cot[:t] + tag_ids
        assert body["n"] == 1 and body["max_tokens"] == 3 and "seed" not in body
    assert [b["prompt"] for b in sampled] == [b["prompt"] for b in greedy]
    assert len({body["seed"] for body in sampled}) == 2  # one seed per prefix


def test_scoring_asks_the_generate_endpoint_then_the_chat_one_when_it_counts_no_cache(
    faulty, tokenizer
):
    """A report scoring goes first to ``/inference/v1/generate`` as token ids, reading the
    prefix cache; a server whose answer has no cached-token count (this one answers every POST
    as a completion) is asked through the chat endpoint from then on (here it returns no
    prompt log-probabilities: the capability error)."""
    server = faulty(failures=0, health=200)
    engine = _engine(server, tokenizer)
    for _ in range(2):
        with pytest.raises(EngineCapabilityError):
            asyncio.run(engine.loglikelihood(CHAT, REPORT))
    first, chat, again = server.requests
    full = render_chat(tokenizer, [*CHAT, {"role": "assistant", "content": REPORT}])
    assert first["token_ids"] == full
    assert first["sampling_params"] == {
        "max_tokens": 1,
        "temperature": 0.0,
        "prompt_logprobs": 0,
        "skip_reading_prefix_cache": False,
        "detokenize": False,
    }
    assert "messages" in chat and "messages" in again
    assert engine.requests.scorings == 0


@pytest.mark.parametrize("keyed", [True, False])
def test_every_request_of_a_sample_carries_its_routing_key(
    faulty, tiny_path, tmp_path, monkeypatch, keyed
):
    """A selfcommit run of 4 samples: the CoT (chat) and every prefix (completions) request
    carries the ``X-Session-ID`` header, one value per sample, 4 values in all; with
    ``COTAUDIT_ROUTING_KEY=off`` none does."""
    server = faulty(failures=0, health=200)
    monkeypatch.chdir(ROOT)
    if not keyed:
        monkeypatch.setenv(ROUTING_KEY_ENV, "off")
    log = _selfcommit_on(server, tiny_path, tmp_path)
    assert log.status == "success", log.error
    paths = {"messages" in body for body in server.requests}
    assert paths == {True, False}  # chat (the CoTs) and completions (the prefixes)
    if keyed:
        assert None not in server.routing
        assert len(set(server.routing)) == len(log.samples) == 4
    else:
        assert set(server.routing) == {None}
