"""The scale-out path: tasks on Inspect's own ``vllm/`` provider through the generic prefill
engine, with log-likelihood from ``GenerateConfig(prompt_logprobs=...)``.

vLLM itself cannot run here. Two kinds of test stand in for it:

- the adapter reads a vLLM chat-completion response of the recorded shape (top-level
  ``prompt_logprobs``: ``null`` for the first prompt token, then per position a dict keyed by
  token id with ``logprob``, ``rank``, ``decoded_token``; the prompt token first, then the top
  alternatives), parsed by Inspect's own OpenAI-response code;
- Inspect's real ``vllm`` provider talks over HTTP to a fake vLLM server that answers in that
  shape with the tiny model's numbers (transformers), so the request Inspect sends
  (``continue_final_message``, ``add_generation_prompt``, ``prompt_logprobs``, ``n``) and the
  parsing are exercised end to end, and the scores can be compared with ``hf-probe/``.
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

from cotaudit.engine.base import EngineCapabilityError, PrefixRequest
from cotaudit.engine.inspect_prefill import InspectPrefillEngine
from cotaudit.engine.mlx import render_chat

ROOT = Path(__file__).resolve().parents[1]
CONTEXT = [{"role": "user", "content": "Tom has 3 apples and buys 4 more. How many apples?"}]
REPORT = "He has 3 + 4 = 7 apples. The final answer is 7."


@pytest.fixture(scope="module")
def tiny_path() -> str:
    from cotaudit.tiny_model import tiny_model_path

    return str(tiny_model_path())


@pytest.fixture(scope="module")
def tokenizer(tiny_path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_path)


# --- vLLM's response shape --------------------------------------------------------------------


def vllm_prompt_logprobs(ids: list[int], logprob_of, tokenizer, top: int = 1) -> list[Any]:
    """``prompt_logprobs`` as vLLM returns it for prompt ``ids``: ``None`` first, then per
    position ``{token_id: {"logprob", "rank", "decoded_token"}}`` with the prompt token first
    and up to ``top`` alternatives after it (``logprob_of(i, token) -> (logprob, rank)``)."""
    out: list[Any] = [None]
    for i in range(1, len(ids)):
        lp, rank = logprob_of(i, ids[i])
        entry = {str(ids[i]): {"logprob": lp, "rank": rank,
                               "decoded_token": tokenizer.decode([ids[i]])}}
        for alt_rank, (alt, alt_lp) in enumerate(logprob_of.top(i, top), start=1):
            entry.setdefault(str(alt), {"logprob": alt_lp, "rank": alt_rank,
                                        "decoded_token": tokenizer.decode([alt])})
        out.append(entry)
    return out


def vllm_chat_response(model: str, texts: list[tuple[str, str]], prompt_len: int,
                       completion_len: int, prompt_logprobs: list[Any] | None) -> dict:
    """A ``/v1/chat/completions`` body as vLLM (0.6 - 0.10) sends it."""
    return {
        "id": "chatcmpl-6f1e5c8a1b2d4e0f9a7b3c2d1e0f9a8b",
        "object": "chat.completion",
        "created": 1733000000,
        "model": model,
        "choices": [
            {"index": i,
             "message": {"role": "assistant", "reasoning_content": None, "content": text,
                         "tool_calls": []},
             "logprobs": None, "finish_reason": finish, "stop_reason": None}
            for i, (text, finish) in enumerate(texts)
        ],
        "usage": {"prompt_tokens": prompt_len, "total_tokens": prompt_len + completion_len,
                  "completion_tokens": completion_len, "prompt_tokens_details": None},
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
            usage=ModelUsage(input_tokens=usage["prompt_tokens"],
                             output_tokens=usage["completion_tokens"],
                             total_tokens=usage["total_tokens"]),
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
    raw = vllm_chat_response("tiny", [("x", "length")], len(full), 1,
                             vllm_prompt_logprobs(full, Synthetic(), tokenizer, top=top))
    model = RecordedModel(json.loads(json.dumps(raw)))  # exactly what crosses the wire
    result = asyncio.run(InspectPrefillEngine(model, tokenizer).loglikelihood(CONTEXT, REPORT))
    expected = [-(i / 10) for i in range(len(ctx), len(full))]
    assert result.n_tokens == n
    assert result.token_logprobs == pytest.approx(expected)
    assert result.sum_logprob == pytest.approx(sum(expected))
    assert result.tokens == [tokenizer.decode([t]) for t in full[len(ctx):]]
    [(messages, config)] = model.calls
    assert config.prompt_logprobs == 1 and config.max_tokens == 1 and config.temperature == 0
    assert messages[-1].role == "assistant" and messages[-1].text == REPORT


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


# --- Inspect's vllm provider against a fake vLLM server ---------------------------------------


class FakeVLLM:
    """``/v1/chat/completions`` and ``/v1/models`` as vLLM serves them, computed with the tiny
    model in transformers (full forward per token: slow in general, fine for tiny)."""

    def __init__(self, path: str) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
        self.model_name = path
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                body = {"object": "list", "data": [{"id": fake.model_name, "object": "model",
                                                    "max_model_len": 4096}]}
                self._send(200, body)

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(body)
                if not self.path.endswith("/chat/completions"):
                    return self._send(404, {"error": "not found"})
                with fake.lock:
                    # one torch thread: with two OpenMP threads on a loaded 2-core machine a
                    # tiny forward pass is ~20x slower (measured 4.4 s vs 0.2 s per request)
                    threads = fake.torch.get_num_threads()
                    fake.torch.set_num_threads(1)
                    try:
                        answer = fake.chat(body)
                    finally:
                        fake.torch.set_num_threads(threads)
                    self._send(200, answer)

            def _send(self, status, body):
                payload = json.dumps(body).encode()
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
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def chat(self, body: dict) -> dict:
        torch = self.torch
        messages = [
            {"role": m["role"],
             "content": m["content"] if isinstance(m["content"], str)
             else "".join(p.get("text", "") for p in m["content"])}
            for m in body["messages"]
        ]
        text = self.tokenizer.apply_chat_template(
            messages, tokenize=False,
            add_generation_prompt=body.get("add_generation_prompt", True),
            continue_final_message=body.get("continue_final_message", False),
        )
        ids = self.tokenizer.encode(text, add_special_tokens=False)
        with torch.inference_mode():
            logp = torch.log_softmax(self.model(input_ids=torch.tensor([ids])).logits[0].float(), -1)
            prompt_logprobs = None
            if body.get("prompt_logprobs") is not None:
                k = int(body["prompt_logprobs"])

                class Real:
                    def __call__(self, i, tok):
                        row = logp[i - 1]
                        return float(row[tok]), int((row > row[tok]).sum()) + 1

                    def top(self, i, n):
                        v, idx = torch.topk(logp[i - 1], n)
                        return list(zip(idx.tolist(), v.tolist()))

                prompt_logprobs = vllm_prompt_logprobs(ids, Real(), self.tokenizer, top=k)
            texts, n_out = [], 0
            temperature = float(body.get("temperature") or 0.0)
            for c in range(int(body.get("n") or 1)):
                gen = torch.Generator().manual_seed(int(body.get("seed") or 0) + c)
                cur, new, finish = list(ids), [], "length"
                for _ in range(int(body.get("max_tokens") or 16)):
                    logits = self.model(input_ids=torch.tensor([cur])).logits[0, -1].float()
                    if temperature == 0:
                        tok = int(logits.argmax())
                    else:
                        probs = torch.softmax(logits / temperature, -1)
                        tok = int(torch.multinomial(probs, 1, generator=gen))
                    if tok == self.tokenizer.eos_token_id:
                        finish = "stop"
                        break
                    new.append(tok)
                    cur.append(tok)
                texts.append((self.tokenizer.decode(new, skip_special_tokens=True), finish))
                n_out += len(new)
        return vllm_chat_response(self.model_name, texts, len(ids), n_out, prompt_logprobs)


@pytest.fixture(scope="module")
def fake_vllm(tiny_path):
    pytest.importorskip("openai")
    fake = FakeVLLM(tiny_path)
    yield fake
    fake.close()


def _vllm_model(fake: FakeVLLM):
    from inspect_ai.model import get_model

    return get_model(f"vllm/{fake.model_name}", base_url=fake.url, api_key="test",
                     memoize=False)


def test_vllm_provider_loglikelihood_matches_hf_probe(fake_vllm, tiny_engine):
    model = _vllm_model(fake_vllm)
    assert type(model.api).__name__ == "VLLMAPI"
    engine = InspectPrefillEngine.for_model(model)  # tokenizer: the model's own name
    reports = [REPORT, " 7", "x"]
    ours = asyncio.run(engine.loglikelihood_many(CONTEXT, reports))
    ref = asyncio.run(tiny_engine.loglikelihood_many(CONTEXT, reports))
    for a, b in zip(ours, ref, strict=True):
        assert a.n_tokens == b.n_tokens
        assert a.token_logprobs == pytest.approx(b.token_logprobs, abs=1e-4)
        assert a.sum_logprob == pytest.approx(b.sum_logprob, abs=1e-3)
    scored = [r for r in fake_vllm.requests if r.get("prompt_logprobs") is not None]
    assert len(scored) == 3
    for r in scored:  # what Inspect's vllm provider put on the wire
        assert r["prompt_logprobs"] == 1 and r["max_tokens"] == 1
        assert r["continue_final_message"] is True and r["add_generation_prompt"] is False
        assert r["messages"][-1]["role"] == "assistant"


def test_vllm_provider_prefix_answers_equal_hf_probe(fake_vllm, tiny_engine, tokenizer):
    engine = InspectPrefillEngine.for_model(_vllm_model(fake_vllm))
    cot = tokenizer.encode(REPORT, add_special_tokens=False)
    req = PrefixRequest(CONTEXT, cot, [0, 5, 11, len(cot)], " so", k=2, max_tokens=4,
                        temperature=0.0)
    fake_vllm.requests.clear()
    assert asyncio.run(engine.continue_prefixes(req)) == asyncio.run(
        tiny_engine.continue_prefixes(req))
    assert len(fake_vllm.requests) == 4 and all(r["n"] == 2 for r in fake_vllm.requests)


def test_selfcommit_end_to_end_on_vllm_provider(fake_vllm, tmp_path, monkeypatch):
    from inspect_ai import eval as inspect_eval

    monkeypatch.chdir(ROOT)
    fake_vllm.requests.clear()
    start = time.monotonic()
    [log] = inspect_eval(
        "tasks/selfcommit.py",
        model=f"vllm/{fake_vllm.model_name}",
        model_base_url=fake_vllm.url,
        model_args={"api_key": "test"},
        task_args={"problems": 1, "max_cot_tokens": 32, "stride": 16, "k": 2,
                   "cot_temperature": 1.0, "answer_max_tokens": 3,
                   "tokenizer": fake_vllm.model_name},
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    assert time.monotonic() - start < 60
    probed = [s.store["selfcommit"] for s in log.samples
              if s.store["selfcommit"]["a_final"] is not None]
    assert probed and all(len(r["answers"]) == len(r["positions"]) for r in probed)
    prefill = [r for r in fake_vllm.requests if r["messages"][-1]["role"] == "assistant"]
    assert prefill and all(r["continue_final_message"] for r in prefill)
