"""``mlx-server/``: the client engine against fake servers (down, slow, garbage, HTTP errors,
Inspect's retry) and against a real ``mlx_lm.server`` running the tiny model.

The fake-server tests need no MLX. The real-server tests start ``mlx_lm.server`` on 127.0.0.1
(a free port) as a subprocess and stop it by PID.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from helpers import ROOT
from helpers import TOM_APPLES_CHAT as MESSAGES

from cotaudit.engine.base import EngineCapabilityError, LocalEngine, PrefixRequest
from cotaudit.engine.mlx_server import (
    MLXServerBadResponse,
    MLXServerEngine,
    MLXServerError,
    MLXServerHTTPError,
    MLXServerTimeout,
    MLXServerUnreachable,
    ServerOptions,
)

# A /v1/completions answer as mlx_lm.server 0.32.2 sends it (recorded; logprobs=true).
RECORDED = {
    "id": "cmpl-a409b7df-34d1-4684-98f3-90549ff60fd4",
    "system_fingerprint": "0.32.2-0.32.4-Linux-6.18.44-x86_64-with-glibc2.36-x86_64",
    "object": "text_completion",
    "model": "default_model",
    "created": 1795962393,
    "choices": [
        {
            "index": 0,
            "finish_reason": "length",
            "logprobs": {
                "content": [
                    {"id": 671, "logprob": -7.133606910705566},
                    {"id": 671, "logprob": -6.773166179656982},
                ]
            },
            "text": "adeade",
        }
    ],
    "usage": {
        "prompt_tokens": 13,
        "completion_tokens": 2,
        "total_tokens": 15,
        "prompt_tokens_details": {"cached_tokens": 0},
    },
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- a fake server ---------------------------------------------------------------------------

Reply = tuple[int, bytes, float]  # status, body, delay before answering


class FakeServer:
    """A threaded HTTP server on 127.0.0.1 whose answers come from ``respond(n, body)``
    (n = 0, 1, ... counts requests); records the JSON bodies it got."""

    def __init__(self, respond: Callable[[int, dict], Reply]) -> None:
        self.respond = respond
        self.bodies: list[dict] = []
        lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with lock:
                    n = len(fake.bodies)
                    fake.bodies.append(body)
                status, payload, delay = fake.respond(n, body)
                time.sleep(delay)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    pass  # the client gave up

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.block_on_close = False
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeServer:
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def ok(text: str = "7", ids: list[int] | None = None, finish: str = "stop") -> Reply:
    body = json.loads(json.dumps(RECORDED))
    choice = body["choices"][0]
    choice["text"], choice["finish_reason"] = text, finish
    if ids is None:
        del choice["logprobs"]
    else:
        choice["logprobs"]["content"] = [{"id": i, "logprob": -1.0} for i in ids]
    return 200, json.dumps(body).encode(), 0.0


def engine(url: str, tokenizer, **kw) -> MLXServerEngine:
    kw.setdefault("retry_window", 0.0)
    kw.setdefault("timeout", 5.0)
    return MLXServerEngine(url, tokenizer, name="mlx-server/tiny", options=ServerOptions(**kw))


def gen(e: MLXServerEngine, messages=MESSAGES, **kw):
    kw.setdefault("max_tokens", 4)
    return asyncio.run(e.generate(messages, **kw))


# --- failures: clear errors, bounded retry, never a hang ------------------------------------


def test_server_engine_is_a_local_engine_whose_context_is_the_servers(tokenizer):
    """It renders prompts itself (a LocalEngine) but knows no context length: no CoT is cut."""
    from cotaudit.probing.sweep import context_room

    e = engine("http://127.0.0.1:9", tokenizer)
    assert isinstance(e, LocalEngine) and e.context_length is None
    assert context_room(e, MESSAGES, "The answer is", 8) is None


def test_down_server_is_a_clear_error(tokenizer):
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    e = engine(url, tokenizer)
    start = time.monotonic()
    with pytest.raises(MLXServerUnreachable, match="cannot reach mlx_lm.server at") as info:
        gen(e)
    assert time.monotonic() - start < 5
    assert url in str(info.value) and "mlx_lm.server --model" in str(info.value)


def test_down_server_is_retried_for_the_window_then_fails(tokenizer):
    e = engine(f"http://127.0.0.1:{free_port()}", tokenizer, retry_window=1.5)
    start = time.monotonic()
    with pytest.raises(MLXServerUnreachable):
        gen(e)
    assert 1.5 <= time.monotonic() - start < 15
    assert e.requests_sent >= 2


def test_server_killed_mid_run_is_a_clear_error(tokenizer):
    """Up for the first requests, then gone: later requests are retried for the window, then
    raise MLXServerUnreachable naming the URL; the answers already received stand."""
    fake = FakeServer(lambda n, body: ok(" 7", tokenizer.encode(" 7")))
    with fake:
        e = engine(fake.url, tokenizer, retry_window=1.0)
        first = gen(e)
    assert first.text == " 7"  # answered before the server died
    start = time.monotonic()
    with pytest.raises(MLXServerUnreachable) as err:
        gen(e)
    assert fake.url in str(err.value)
    assert time.monotonic() - start < 15


def test_slow_server_times_out(tokenizer):
    with FakeServer(lambda n, body: (*ok()[:2], 3.0)) as fake:
        e = engine(fake.url, tokenizer, timeout=0.5)
        start = time.monotonic()
        with pytest.raises(MLXServerTimeout, match=r"did not answer within 0.5 s"):
            gen(e)
        assert time.monotonic() - start < 2.5


@pytest.mark.parametrize(
    "payload",
    [
        b"<html>hello</html>",
        b"",
        b"[1, 2]",
        b'{"object": "list"}',
        b'{"choices": []}',
        b'{"choices": [{"text": null, "finish_reason": "stop"}]}',
        b'{"choices": [{"text": "7"}]}',
        b'{"choices": [{"text": "7", "finish_reason": "stop", "logprobs": {"content": [{}]}}]}',
    ],
)
def test_garbage_answer_is_a_clear_error_not_an_empty_answer(tokenizer, payload):
    with FakeServer(lambda n, body: (200, payload, 0.0)) as fake:
        with pytest.raises(MLXServerBadResponse, match="not with an OpenAI text completion"):
            gen(engine(fake.url, tokenizer))


def test_http_500_is_transient_404_is_not(tokenizer):
    with FakeServer(lambda n, body: (500, b'{"error": "boom"}', 0.0)) as fake:
        e = engine(fake.url, tokenizer, retry_window=60)
        with pytest.raises(MLXServerHTTPError, match=r"HTTP 500: \{\"error\": \"boom\"\}") as info:
            asyncio.run(e.complete([1, 2], max_tokens=2, temperature=0.0, seed=None))
        assert info.value.transient and e.should_retry(info.value)
    with FakeServer(lambda n, body: (404, b'{"error": "no model x"}', 0.0)) as fake:
        e = engine(fake.url, tokenizer, retry_window=60)
        with pytest.raises(MLXServerHTTPError, match="HTTP 404") as info:
            gen(e)
        assert not info.value.transient and not e.should_retry(info.value)
        assert len(fake.bodies) == 1  # not retried


def test_engine_retries_transient_failures_of_probe_requests(tokenizer):
    def flaky(n, body):
        return (500, b"busy", 0.0) if n == 0 else ok(" 7", tokenizer.encode(" 7"))

    with FakeServer(flaky) as fake:
        e = engine(fake.url, tokenizer, retry_window=20)
        req = PrefixRequest(
            MESSAGES,
            tokenizer.encode(" 3 + 4 = 7"),
            [0, 2],
            " so",
            k=2,
            max_tokens=3,
            temperature=0.0,
        )
        assert asyncio.run(e.continue_prefixes(req)) == [[" 7", " 7"], [" 7", " 7"]]
        assert len(fake.bodies) == 5


def _model(url: str, **args):
    from inspect_ai.model import get_model

    return get_model("mlx-server/tiny", base_url=url, memoize=False, **args)


def test_inspect_retry_recovers_then_gives_up_within_the_window(tokenizer):
    from inspect_ai.model import ChatMessageUser

    def flaky(n, body):
        return (503, b"loading", 0.0) if n == 0 else ok(" 7", tokenizer.encode(" 7"))

    with FakeServer(flaky) as fake:
        out = asyncio.run(
            _model(fake.url, retry_window=20).generate([ChatMessageUser(content="hi")])
        )
        assert out.completion == " 7" and len(fake.bodies) == 2  # Inspect retried once
    with FakeServer(lambda n, body: (500, b"boom", 0.0)) as fake:
        start = time.monotonic()
        with pytest.raises(MLXServerHTTPError, match="HTTP 500"):
            asyncio.run(
                _model(fake.url, retry_window=1.0).generate([ChatMessageUser(content="hi")])
            )
        assert time.monotonic() - start < 15 and len(fake.bodies) >= 2


def test_loglikelihood_refuses_before_any_request(tokenizer):
    with FakeServer(lambda n, body: ok()) as fake:
        api = _model(fake.url).api
        for call in (
            api.probe_engine.loglikelihood(MESSAGES, "7"),
            api.probe_engine.loglikelihood_many(MESSAGES, ["7", "8"]),
        ):
            with pytest.raises(EngineCapabilityError) as info:
                asyncio.run(call)
            assert "hf-probe/" in str(info.value) and "mlx/" in str(info.value)
        assert fake.bodies == [] and api.probe_engine.requests_sent == 0


# --- what is sent and how answers are read ----------------------------------------------------


def test_request_body_and_recorded_answer(tokenizer):
    ids = tokenizer.encode(" 72 clips", add_special_tokens=False)
    # the server's text drops the leading space; the token ids keep it
    with FakeServer(lambda n, body: ok("72 clips", ids + [tokenizer.eos_token_id])) as fake:
        e = engine(fake.url, tokenizer)
        head = [{"role": "assistant", "content": "She sold"}]
        g = gen(e, MESSAGES + head, max_tokens=5, temperature=0.0, seed=9)
        assert g.text == " 72 clips" and g.token_ids == ids and g.finish_reason == "stop"
        asyncio.run(e.generate(MESSAGES, max_tokens=3, temperature=0.8, seed=9))
    greedy, sampled = fake.bodies
    assert greedy["prompt"].endswith("<|im_start|>assistant\nShe sold")  # prefill, no new turn
    assert greedy["prompt"] == tokenizer.decode(e.render(MESSAGES + head))
    assert greedy["logprobs"] is True and greedy["stream"] is False
    assert (greedy["temperature"], greedy["top_p"], greedy["top_k"], greedy["min_p"]) == (
        0.0,
        1.0,
        0,
        0.0,
    )
    assert greedy["max_tokens"] == 5 and "seed" not in greedy  # greedy requests can batch
    assert sampled["temperature"] == 0.8 and isinstance(sampled["seed"], int)
    assert sampled["prompt"].endswith("<|im_start|>assistant\n")
    with FakeServer(lambda n, body: (200, json.dumps(RECORDED).encode(), 0.0)) as fake:
        g = gen(engine(fake.url, tokenizer))
        assert g.token_ids == [671, 671] and g.text == tokenizer.decode([671, 671])
        assert g.finish_reason == "max_tokens"


def test_prefix_requests_are_k_concurrent_requests(tokenizer):
    def echo(n, body):
        return ok(str(len(body["prompt"])), tokenizer.encode(str(len(body["prompt"]))))

    with FakeServer(echo) as fake:
        e = engine(fake.url, tokenizer)
        cot = tokenizer.encode(" 3 + 4 = 7. The answer is 7.")
        req = PrefixRequest(
            MESSAGES, cot, [0, 3, len(cot)], "\nAnswer:", k=3, max_tokens=2, temperature=0.7, seed=1
        )
        rows = asyncio.run(e.continue_prefixes(req))
    assert len(rows) == 3 and all(len(r) == 3 for r in rows)
    assert len(fake.bodies) == 9
    prompt = tokenizer.decode(e.render(MESSAGES))
    for t, row in zip(req.positions, rows, strict=True):
        expected = prompt + tokenizer.decode(cot[:t]) + "\nAnswer:"
        assert row == [str(len(expected))] * 3
    assert len({b["seed"] for b in fake.bodies}) == 9  # every sample has its own seed


def test_provider_base_url_and_args(tokenizer, monkeypatch, tiny_path):
    from cotaudit.providers._local import ModelNameError
    from cotaudit.providers.mlx_server_provider import MLXServerAPI

    monkeypatch.setenv("MLX_SERVER_BASE_URL", "http://127.0.0.1:9/v1")
    assert MLXServerAPI("tiny").probe_engine.base_url == "http://127.0.0.1:9"
    assert MLXServerAPI("tiny", url="http://h:1").probe_engine.base_url == "http://h:1"
    assert MLXServerAPI("tiny", base_url="http://h:2", url="http://h:1").base_url == "http://h:2"
    monkeypatch.delenv("MLX_SERVER_BASE_URL")
    assert MLXServerAPI("x", tokenizer=tiny_path).probe_engine.base_url == "http://127.0.0.1:8080"
    with pytest.raises(ValueError, match="unknown model args"):
        MLXServerAPI("tiny", temperature=1)
    with pytest.raises(ModelNameError, match="^mlx-server//nonexistent/model: no such model"):
        MLXServerAPI("/nonexistent/model")
    with pytest.raises(ModelNameError, match="^-M tokenizer=/nonexistent: no such model"):
        MLXServerAPI("x", tokenizer="/nonexistent")


# --- a real mlx_lm.server --------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_server(tiny_path, tmp_path_factory):
    """``mlx_lm.server`` with the tiny model on a free 127.0.0.1 port; stopped by PID."""
    pytest.importorskip("mlx_lm")
    tmp = tmp_path_factory.mktemp("mlx_server")
    port = free_port()
    log_path = tmp / "server.log"
    env = dict(os.environ, HF_HUB_CACHE=str(tmp / "hub"))  # /v1/models needs an existing one
    from cotaudit.engine.openblas import find_openblas, openblas_wanted

    if openblas_wanted(None) and find_openblas():  # COTAUDIT_MLX_OPENBLAS=1: faster server
        env["LD_PRELOAD"] = find_openblas()
    (tmp / "hub").mkdir()
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "mlx_lm",
                "server",
                "--model",
                tiny_path,
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                pytest.fail(f"mlx_lm.server exited ({proc.returncode}):\n{log_path.read_text()}")
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as r:
                    if json.loads(r.read()).get("status") == "ok":
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"mlx_lm.server did not come up:\n{log_path.read_text()}")
            time.sleep(0.25)
        yield url, log_path
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def _served_completions(log_path: Path) -> int:
    return log_path.read_text(errors="replace").count("POST /v1/completions")


def test_selfcommit_end_to_end_on_real_mlx_server(real_server, selfcommit_on_tiny, monkeypatch):
    """selfcommit on ``mlx-server/tiny`` against the real server; fails if another backend
    (in-process HF or MLX, generic prefill) does any of the work."""
    from cotaudit.engine import hf as hf_module
    from cotaudit.engine import inspect_prefill
    from cotaudit.engine import mlx as mlx_module

    url, log_path = real_server
    monkeypatch.chdir(ROOT)

    def forbidden(*args, **kwargs):
        raise AssertionError("the mlx-server/ run fell back to another backend")

    for cls, names in (
        (hf_module.HFEngine, ("generate_sync", "continue_prefixes_sync")),
        (mlx_module.MLXEngine, ("generate_sync", "continue_prefixes_sync")),
    ):
        for name in names:
            monkeypatch.setattr(cls, name, forbidden)
    monkeypatch.setattr(inspect_prefill.InspectPrefillEngine, "for_model", forbidden)
    sent = []
    real = MLXServerEngine.complete

    async def spy(self, prompt_ids, **kw):
        sent.append(len(prompt_ids))
        return await real(self, prompt_ids, **kw)

    monkeypatch.setattr(MLXServerEngine, "complete", spy)
    served_before = _served_completions(log_path)
    log, probed = selfcommit_on_tiny("mlx-server/tiny", "mlx-server", model_base_url=url)
    for sample in log.samples:
        assert sample.output.metadata["base_url"] == url
        rec = sample.store["selfcommit"]
        assert rec["cot_tokens"] == len(sample.output.metadata["token_ids"][0])
    assert probed >= 1
    # every request was answered by the real server (its own access log counts them)
    time.sleep(0.2)
    assert _served_completions(log_path) - served_before == len(sent) > 2 + 3 * probed


def test_real_server_greedy_equals_in_process_mlx(real_server, tokenizer):
    pytest.importorskip("mlx.core")
    from cotaudit.providers.hf_probe import resolve_model_path
    from cotaudit.providers.mlx_provider import _load_engine

    url, _ = real_server
    local = _load_engine(resolve_model_path("tiny"), None)
    remote = MLXServerEngine(url, tokenizer, options=ServerOptions(retry_window=0))
    a = asyncio.run(local.generate(MESSAGES, max_tokens=24))
    b = asyncio.run(remote.generate(MESSAGES, max_tokens=24))
    assert a.token_ids == b.token_ids and a.text == b.text
    cot = tokenizer.encode(" She has 3 + 4 = 7 apples. The final answer is 7.")
    req = PrefixRequest(
        MESSAGES, cot, list(range(0, len(cot) + 1, 5)), " so", k=2, max_tokens=5, temperature=0.0
    )
    assert asyncio.run(remote.continue_prefixes(req)) == asyncio.run(local.continue_prefixes(req))
    # seeded sampling is reproducible on the server
    sampled = PrefixRequest(
        MESSAGES, cot, [0, 6], " so", k=3, max_tokens=5, temperature=1.0, seed=4
    )
    first = asyncio.run(remote.continue_prefixes(sampled))
    assert asyncio.run(remote.continue_prefixes(sampled)) == first
    assert any(len(set(row)) > 1 for row in first)


def test_error_classes_are_mlx_server_errors():
    for cls in (MLXServerUnreachable, MLXServerTimeout, MLXServerBadResponse, MLXServerHTTPError):
        assert issubclass(cls, MLXServerError)
