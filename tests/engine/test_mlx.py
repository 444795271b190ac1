"""The in-process MLX backend (``mlx/``) on the tiny random model, against mlx-lm's own
generation and against the HF backend on the same weights.

Tolerances, fp32 on both backends: on the tiny model per-token log-probabilities within
``LL_TOKEN_TOL`` nats and sums within ``LL_SUM_TOL`` (measured max per-token difference ~2e-6);
on the default model (marked ``model``) 1e-3 per token and 1e-2 per sum (measured 2.4e-4 per
token, 5.6e-3 over a 128-token sum). ``COTAUDIT_MLX_OPENBLAS=1`` runs these with OpenBLAS.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import mlx_engine_of, on_mlx_worker

from cotaudit.engine.openblas import openblas_status, openblas_wanted, preload_openblas

if openblas_wanted(None):  # COTAUDIT_MLX_OPENBLAS=1: before anything imports mlx
    preload_openblas()

pytest.importorskip("mlx.core")
pytest.importorskip("mlx_lm")

from cotaudit.engine.base import PrefixRequest
from cotaudit.engine.mlx import MLXEngine
from cotaudit.studies.selfcommit.prompts import SELFCOMMIT_FORCED_ANSWER_TAG, selfcommit_messages

LL_TOKEN_TOL = 1e-4
LL_SUM_TOL = 1e-3
ROOT = Path(__file__).resolve().parents[2]

MESSAGES = selfcommit_messages(
    "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips "
    "in May. How many clips did Natalia sell altogether in April and May?",
    "honest",
    72,
)
# A CoT written in the dataset's words (the tiny model's own greedy text is one repeated token).
COT_TEXT = (
    "Natalia sold 48 / 2 = 24 clips in May. Natalia sold 48 + 24 = 72 clips altogether in "
    "April and May. The final answer is 72."
)


@pytest.fixture(scope="module")
def mlx_engine() -> MLXEngine:
    return mlx_engine_of("tiny")


def _request(
    engine,
    *,
    k=2,
    temperature=0.0,
    stride=4,
    positions=None,
    seed=3,
    tag=SELFCOMMIT_FORCED_ANSWER_TAG,
):
    cot = engine.tokenize(COT_TEXT)
    if positions is None:
        positions = list(range(0, len(cot), stride)) + [len(cot)]
    return PrefixRequest(
        MESSAGES, cot, positions, tag, k=k, max_tokens=6, temperature=temperature, seed=seed
    )


def test_cached_sweep_equals_naive_reprefill(mlx_engine):
    assert mlx_engine.forkable  # the tiny Llama uses plain KVCache layers: the cached path
    seen = set()
    # the study's tag, one after which the tiny model's greedy answer depends on the prefix,
    # and none: continuations of the CoT itself from each cut (resampling)
    for tag in (SELFCOMMIT_FORCED_ANSWER_TAG, " so", ""):
        req = _request(mlx_engine, tag=tag)
        cached = asyncio.run(mlx_engine.continue_prefixes(req))
        naive = on_mlx_worker(mlx_engine, mlx_engine.naive_continue_prefixes_sync, req)
        assert len(cached) == len(req.positions)
        assert all(len(row) == req.k for row in cached)
        assert cached == naive
        seen |= {row[0] for row in cached}
    assert len(seen) > 2  # not one answer everywhere: the comparison says something


def test_forked_cache_logits_equal_fresh_prefill(mlx_engine):
    import mlx.core as mx

    e = mlx_engine
    prompt = e.render(MESSAGES)
    cot = e.tokenize(COT_TEXT)
    tag = e.tokenize(SELFCOMMIT_FORCED_ANSWER_TAG)

    def run():
        base = e.new_cache()
        e.prefill(prompt + cot, base)
        out = []
        for t in (0, 7, len(cot)):
            forked = e.prefill(tag, e.fork_cache(base, len(prompt) + t, 2), rows=2)
            fresh = e.prefill(prompt + cot[:t] + tag, e.new_cache())
            out.append(float(mx.abs(forked - fresh).max()))
        # the source cache is unchanged by the forks: fork again at full length
        again = e.prefill(tag, e.fork_cache(base, len(prompt) + len(cot), 1))
        full = e.prefill(prompt + cot + tag, e.new_cache())
        out.append(float(mx.abs(again - full).max()))
        return out

    diffs = e._scheduler.submit(run).result()
    assert max(diffs) < 1e-4, diffs


def test_non_kvcache_fallback_matches_cached_path(mlx_engine):
    # A model whose caches cannot be copied and trimmed re-prefills each prefix instead.
    fallback = on_mlx_worker(
        mlx_engine, MLXEngine, mlx_engine.model, mlx_engine.tokenizer, mlx_engine._scheduler
    )
    fallback.forkable = False
    req = _request(mlx_engine, stride=12)
    assert asyncio.run(fallback.continue_prefixes(req)) == asyncio.run(
        mlx_engine.continue_prefixes(req)
    )
    conts = ["The final answer is 72.", "24 clips"]
    a = asyncio.run(fallback.loglikelihood_many(MESSAGES, conts))
    b = asyncio.run(mlx_engine.loglikelihood_many(MESSAGES, conts))
    for x, y in zip(a, b, strict=True):
        assert x.token_logprobs == pytest.approx(y.token_logprobs, abs=1e-5)


def test_sampling_is_seeded_per_prefix(mlx_engine):
    req = _request(mlx_engine, k=4, temperature=0.7, stride=8)
    a = asyncio.run(mlx_engine.continue_prefixes(req))
    assert asyncio.run(mlx_engine.continue_prefixes(req)) == a
    sub = _request(mlx_engine, k=4, temperature=0.7, positions=req.positions[2:])
    assert asyncio.run(mlx_engine.continue_prefixes(sub)) == a[2:]
    assert any(len(set(row)) > 1 for row in a)
    other = _request(mlx_engine, k=4, temperature=0.7, seed=4)
    assert asyncio.run(mlx_engine.continue_prefixes(other)) != a


def test_generate_n_and_prefill(mlx_engine):
    greedy = asyncio.run(
        mlx_engine.generate_n(MESSAGES, max_tokens=10, temperature=0.0, seed=0, n=3)
    )
    assert len({tuple(g.token_ids) for g in greedy}) == 1
    sampled = asyncio.run(
        mlx_engine.generate_n(MESSAGES, max_tokens=10, temperature=1.0, seed=0, n=3)
    )
    assert len({tuple(g.token_ids) for g in sampled}) > 1
    head = mlx_engine.detokenize(greedy[0].token_ids[:4])
    prefilled = MESSAGES + [{"role": "assistant", "content": head}]
    rendered = mlx_engine.hf_tokenizer.decode(mlx_engine.render(prefilled))
    assert rendered.endswith("<|im_start|>assistant\n" + head)


# --- cross-backend: hf-probe/ and mlx/ on the same tiny weights ------------------------------


def test_same_greedy_cot_on_hf_probe_and_mlx():
    from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model

    hf = get_model("hf-probe/tiny")
    mlx = get_model("mlx/tiny")
    assert type(mlx.api).__name__ == "MLXAPI" and type(hf.api).__name__ == "HFProbeAPI"
    config = GenerateConfig(max_tokens=48, temperature=0.0)
    for question in ("Tom has 3 apples and buys 4 more. How many apples?", MESSAGES[0]["content"]):
        msgs = [ChatMessageUser(content=question)]
        a = asyncio.run(hf.generate(msgs, config=config))
        b = asyncio.run(mlx.generate(msgs, config=config))
        assert b.metadata["backend"] == "mlx"
        assert a.metadata["token_ids"] == b.metadata["token_ids"]
        assert a.completion == b.completion


def test_same_prefix_answers_on_hf_and_mlx(mlx_engine, tiny_engine):
    req = _request(mlx_engine, stride=6)
    assert asyncio.run(mlx_engine.continue_prefixes(req)) == asyncio.run(
        tiny_engine.continue_prefixes(req)
    )


def test_loglikelihood_matches_hf(mlx_engine, tiny_engine):
    conts = [COT_TEXT, " 72", "x", "The final answer is 72.", "\n\nThe final answer is 71."]
    ours = asyncio.run(mlx_engine.loglikelihood_many(MESSAGES, conts))
    ref = asyncio.run(tiny_engine.loglikelihood_many(MESSAGES, conts))
    single = asyncio.run(mlx_engine.loglikelihood(MESSAGES, conts[0]))
    assert single.token_logprobs == pytest.approx(ours[0].token_logprobs, abs=1e-6)
    worst = 0.0
    for cont, a, b in zip(conts, ours, ref, strict=True):
        assert a.n_tokens == b.n_tokens == len(mlx_engine.tokenize(cont))
        assert a.tokens == b.tokens
        assert a.token_logprobs == pytest.approx(b.token_logprobs, abs=LL_TOKEN_TOL)
        assert a.sum_logprob == pytest.approx(b.sum_logprob, abs=LL_SUM_TOL)
        worst = max(
            worst, max(abs(x - y) for x, y in zip(a.token_logprobs, b.token_logprobs, strict=True))
        )
    assert worst < LL_TOKEN_TOL
    empty = asyncio.run(mlx_engine.loglikelihood(MESSAGES, ""))
    assert empty.n_tokens == 0 and empty.sum_logprob == 0.0


def test_rope_parameters_of_transformers_5_configs_reach_mlx():
    from cotaudit.engine.mlx import rope_overrides

    assert rope_overrides({"rope_parameters": {"rope_theta": 1e5, "rope_type": "default"}}) == {
        "rope_theta": 1e5
    }
    assert rope_overrides({"rope_theta": 1e4, "rope_parameters": {"rope_theta": 1e5}}) == {}
    assert rope_overrides({"rope_theta": 1e4}) == {}
    yarn = {"rope_theta": 1e6, "rope_type": "yarn", "factor": 4.0}
    assert rope_overrides({"rope_parameters": yarn}) == {"rope_theta": 1e6, "rope_scaling": yarn}
    # per-layer-type parameters (no top-level theta in them) are left to mlx-lm
    assert rope_overrides({"rope_parameters": {"full_attention": {"rope_theta": 1e6}}}) == {}


@pytest.mark.model
def test_default_model_same_greedy_cot_and_loglikelihood_on_hf_and_mlx(default_engine):
    """SmolLM2-135M (rope_theta 1e5 under transformers 5's rope_parameters): same greedy CoT,
    log-likelihoods within 1e-3 nats per token (measured 2.4e-4) and 1e-2 per sum."""
    mlx_default = mlx_engine_of("default")
    assert mlx_default.model.args.rope_theta == 100000.0
    a = asyncio.run(default_engine.generate(MESSAGES, max_tokens=24))
    b = asyncio.run(mlx_default.generate(MESSAGES, max_tokens=24))
    assert a.token_ids == b.token_ids
    conts = [a.text, "The final answer is 72."]
    ours = asyncio.run(mlx_default.loglikelihood_many(MESSAGES, conts))
    ref = asyncio.run(default_engine.loglikelihood_many(MESSAGES, conts))
    for x, y in zip(ours, ref, strict=True):
        assert x.token_logprobs == pytest.approx(y.token_logprobs, abs=1e-3)
        assert x.sum_logprob == pytest.approx(y.sum_logprob, abs=1e-2)


# --- cross-sample batching ------------------------------------------------------------------

QUESTIONS = [
    "Tom has 3 apples and buys 4 more. How many apples does he have?",
    "A box holds 12 eggs. How many eggs are in 5 boxes?",
    "Sara reads 15 pages a day. How many pages does she read in 6 days?",
]


def _mlx_alone_and_batched(engine, cot_tokens, monkeypatch, questions=QUESTIONS, stride=8):
    """Greedy CoTs, sampled CoTs (n=2) and sampled forced answers (prefixes every ``stride``
    tokens), each job alone on the worker and then all concurrently; returns both and the jobs
    of every batched step."""
    messages = [selfcommit_messages(q, "honest", 0) for q in questions]
    greedy = [
        on_mlx_worker(engine, engine.generate_sync, m, cot_tokens, 0.0, 0)[0].token_ids
        for m in messages
    ]
    cots = [engine.tokenize(COT_TEXT)] + greedy[1:]
    requests = [
        PrefixRequest(
            m,
            c,
            list(range(0, len(c) + 1, stride)),
            SELFCOMMIT_FORCED_ANSWER_TAG,
            k=3,
            max_tokens=5,
            temperature=0.7,
            seed=i,
        )
        for i, (m, c) in enumerate(zip(messages, cots, strict=True))
    ]
    alone = (
        greedy,
        [on_mlx_worker(engine, engine.continue_prefixes_sync, r) for r in requests],
        [
            [
                g.token_ids
                for g in on_mlx_worker(engine, engine.generate_sync, m, cot_tokens, 1.0, 5, 2)
            ]
            for m in messages
        ],
    )
    steps = []
    real = engine._stepper.step

    def step(jobs):
        steps.append([type(j).__name__ for j in jobs])
        return real(jobs)

    monkeypatch.setattr(engine._stepper, "step", step)

    async def batched():
        out = await asyncio.gather(
            *[engine.generate(m, max_tokens=cot_tokens) for m in messages],
            *[engine.continue_prefixes(r) for r in requests],
            *[
                engine.generate_n(m, max_tokens=cot_tokens, temperature=1.0, seed=5, n=2)
                for m in messages
            ],
        )
        n = len(messages)
        return (
            [g.token_ids for g in out[:n]],
            list(out[n : 2 * n]),
            [[g.token_ids for g in gens] for gens in out[2 * n :]],
        )

    return alone, asyncio.run(batched()), steps


def test_mlx_batched_equals_alone(mlx_engine, monkeypatch):
    """Batched decoding gives every job the tokens it gets alone. On MLX's bundled BLAS the
    matrix products are row-independent, so this holds bit for bit; with OpenBLAS
    (``COTAUDIT_MLX_OPENBLAS=1``) a row's last float bits can depend on its batch, and the
    engine says so (``rows_independent`` False)."""
    assert mlx_engine.rows_independent == (not openblas_status().loaded)
    assert mlx_engine.max_batch_rows == 64
    alone, batched, steps = _mlx_alone_and_batched(mlx_engine, 40, monkeypatch)
    assert batched == alone
    assert any(gens[0] != gens[1] for gens in alone[2])  # sampling sampled
    # CoTs and prefix jobs of several samples shared decode steps
    assert max(len(s) for s in steps) >= 6
    assert any({"GenerateJob", "PrefixJob"} <= set(s) for s in steps)


def test_grouped_jobs_attention_equals_mlx_lm_attention_per_job(mlx_engine):
    """The CPU attention of a batched step (scaling and head grouping once for all rows) gives
    the logits of mlx-lm's attention called per job: bit for bit where matrix products are
    row-independent (MLX's bundled BLAS), else within float32 rounding (OpenBLAS)."""
    import mlx.core as mx

    from cotaudit.engine.mlx_batch import GenerateJob, PrefixJob, Sweep

    e, stepper = mlx_engine, mlx_engine._stepper
    engine_default = stepper.grouped_attention
    assert engine_default == (mx.default_device() == mx.cpu)  # grouped on the CPU only
    messages = [selfcommit_messages(q, "honest", 0) for q in QUESTIONS]
    request = _request(e, k=3, temperature=0.7, positions=[5])

    def steps(grouped: bool) -> list:
        # jobs of 1, 2 and 3 rows (a CoT, two sampled CoTs, a prefix), caches of three lengths
        jobs = [
            GenerateJob(stepper, messages[0], 8, 0.0, 0, 1),
            GenerateJob(stepper, messages[1], 8, 1.0, 5, 2),
            PrefixJob(stepper, Sweep(e, request), 5),
            GenerateJob(stepper, messages[2], 8, 0.0, 0, 1),
        ]
        for job in jobs:
            job.start()
        stepper.grouped_attention = grouped
        try:
            out = []
            for _ in range(3):
                logits = stepper.step(jobs)
                for job, part in zip(jobs, logits, strict=True):
                    job.advance(part)
                out.append(mx.concatenate(logits))
            mx.eval(out)
            return out
        finally:
            stepper.grouped_attention = engine_default

    grouped = on_mlx_worker(e, steps, True)
    per_job = on_mlx_worker(e, steps, False)
    for a, b in zip(grouped, per_job, strict=True):
        assert a.shape == (7, e.model.args.vocab_size)
        if e.rows_independent:
            assert mx.array_equal(a, b).item()
        else:
            assert mx.allclose(a, b, rtol=0, atol=1e-4).item()


@pytest.mark.model
def test_mlx_batched_equals_alone_default_model(monkeypatch):
    engine = mlx_engine_of("default")
    # two samples, short CoTs, prefixes every 16 tokens: a decode step of the default model on
    # MLX's bundled CPU BLAS is slow
    alone, batched, steps = _mlx_alone_and_batched(engine, 12, monkeypatch, QUESTIONS[:2], 16)
    assert batched == alone
    assert any({"GenerateJob", "PrefixJob"} <= set(s) for s in steps)


# --- the task, end to end ---------------------------------------------------------------------


def test_selfcommit_end_to_end_on_mlx(selfcommit_on_tiny, monkeypatch):
    """selfcommit on ``mlx/tiny`` through Inspect; fails if any other backend does the work."""
    from cotaudit.engine import hf as hf_module
    from cotaudit.engine import inspect_prefill

    monkeypatch.chdir(ROOT)

    def forbidden(*args, **kwargs):
        raise AssertionError("the mlx/ run fell back to another backend")

    for name in ("generate_sync", "continue_prefixes_sync", "loglikelihood_many_sync"):
        if hasattr(hf_module.HFEngine, name):
            monkeypatch.setattr(hf_module.HFEngine, name, forbidden)
    monkeypatch.setattr(inspect_prefill.InspectPrefillEngine, "for_model", forbidden)
    calls = []
    real = MLXEngine.continue_prefixes_sync

    def spy(self, request):
        calls.append(len(request.positions))
        return real(self, request)

    monkeypatch.setattr(MLXEngine, "continue_prefixes_sync", spy)
    log, probed = selfcommit_on_tiny("mlx/tiny", "mlx")
    assert len(log.samples) == 2
    assert probed >= 1 and len(calls) == probed


def test_provider_rejects_unknown_model_args():
    from cotaudit.providers.mlx_provider import MLXAPI

    with pytest.raises(ValueError, match="unknown model args"):
        MLXAPI("tiny", dtype="float16")


def test_openblas_status_is_detected_never_required():
    status = openblas_status()
    assert isinstance(status.hint, str) and status.hint
    if status.applies:
        # MLX is imported by now: preloading either is already in effect or declines quietly
        assert preload_openblas() == status.loaded


def test_openblas_preload_before_mlx_takes_effect():
    status = openblas_status()
    if not status.applies or status.available_path is None:
        pytest.skip(f"no OpenBLAS to preload here: {status.hint}")
    code = (
        "from cotaudit.engine.openblas import preload_openblas, openblas_status\n"
        "assert not openblas_status().loaded\n"
        "assert preload_openblas()\n"
        "import mlx.core as mx\n"
        "a = mx.ones((64, 64)); mx.eval(a @ a)\n"
        "print(openblas_status().loaded)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"
