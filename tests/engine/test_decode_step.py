"""The written-out decode step and the caches it reads: the step against transformers' own
forward pass on real weights, the growing cache against concatenation, and a probe of a
generated CoT over the cache that generated it against a fresh prefill."""

from __future__ import annotations

import pytest
import torch

from cotaudit.engine.base import PrefixRequest
from cotaudit.engine.hf_batch import DecodedCaches, GenerateJob, GrowingCache, LayerKV
from cotaudit.engine.hf_step import DecoderStep
from cotaudit.studies.selfcommit.prompts import SELFCOMMIT_FORCED_ANSWER_TAG, selfcommit_messages

QUESTIONS = [
    "Tom has 3 apples and buys 4 more. How many apples does he have?",
    "A box holds 12 eggs. How many eggs are in 5 boxes?",
    "Sara reads 15 pages a day. How many pages does she read in 6 days?",
]


def _started_jobs(engine):
    jobs = [
        GenerateJob(engine._stepper, selfcommit_messages(q, "honest", 0), 10**6, 0.0, i, 1)
        for i, q in enumerate(QUESTIONS)
    ]
    for job in jobs:
        job.start()
    return jobs


def _step_against_transformers(engine, steps: int) -> float:
    """Max |logit difference| between the written-out step and transformers' forward pass over
    the same jobs and caches, for ``steps`` steps (both fed the written-out step's tokens)."""
    stepper, written = engine._stepper, engine._stepper.decoder_step
    assert written is not None
    worst = 0.0
    with torch.inference_mode():
        ours, theirs = _started_jobs(engine), _started_jobs(engine)
        try:
            for _ in range(steps):
                a = stepper.step(ours)
                stepper.decoder_step = None
                b = stepper.step(theirs)
                stepper.decoder_step = written
                for x, y in zip(a, b, strict=True):
                    worst = max(worst, float((x - y).abs().max()))
                for job_a, job_b, logits in zip(ours, theirs, a, strict=True):
                    job_a.decoder.advance(logits)
                    job_b.decoder.advance(logits)
        finally:
            stepper.decoder_step = written
    return worst


def test_written_out_step_equals_transformers_forward_tiny(tiny_engine):
    assert _step_against_transformers(tiny_engine, 6) < 1e-5


@pytest.mark.model
def test_written_out_step_equals_transformers_forward_default_model(default_engine):
    assert _step_against_transformers(default_engine, 4) < 1e-4


def test_step_covers_llama_family_only(tiny_engine):
    assert DecoderStep.of(tiny_engine.model) is not None
    config = tiny_engine.model.config
    kind = config.model_type
    try:
        config.model_type = "gpt2"
        assert DecoderStep.of(tiny_engine.model) is None
    finally:
        config.model_type = kind


def test_growing_cache_equals_concatenation():
    torch.manual_seed(0)
    layers = [LayerKV(torch.randn(1, 2, 5, 4), torch.randn(1, 2, 5, 4)) for _ in range(2)]

    class Source:
        pass

    source = Source()
    source.layers = layers
    # capacity 6 doubles to 12, 24, 48 in the plain layout; blocked: 16 (whole key blocks), 32
    for blocked, capacities in ((False, [6, 12, 24, 48]), (True, [16, 32])):
        cache = GrowingCache(source, rows=3, capacity=6, blocked=blocked)
        keys = [layer.keys.expand(3, -1, -1, -1) for layer in layers]
        values = [layer.values.expand(3, -1, -1, -1) for layer in layers]
        seen = {cache.values[0].shape[2]}
        for _ in range(20):
            for i in range(2):
                k, v = torch.randn(3, 2, 1, 4), torch.randn(3, 2, 1, 4)
                got_k, got_v = cache.update(k, v, i)
                keys[i] = torch.cat([keys[i], k], dim=2)
                values[i] = torch.cat([values[i], v], dim=2)
                assert torch.equal(got_k, keys[i]) and torch.equal(got_v, values[i])
            seen.add(cache.values[0].shape[2])
        assert cache.get_seq_length() == 25
        assert sorted(seen) == capacities
        key_positions = cache.keys[0].shape[2] * (cache.keys[0].shape[4] if blocked else 1)
        assert key_positions == capacities[-1]
        assert all(torch.equal(a.keys, b) for a, b in zip(cache.layers, keys, strict=True))


def test_decoded_caches_keep_a_byte_budget_and_find_prefixes():
    def cache_of(n: int) -> GrowingCache:
        class Source:
            layers = [LayerKV(torch.zeros(1, 1, n, 2), torch.zeros(1, 1, n, 2))]

        return GrowingCache(Source(), rows=1, capacity=n)

    one = cache_of(4).nbytes  # 2 tensors x 4 positions x 2 floats x 4 bytes = 64
    assert one == 64
    store = DecodedCaches(budget=2 * one)
    a, b, c = cache_of(4), cache_of(4), cache_of(4)
    store.put([1, 2, 3, 4], a)
    store.put([5, 6, 7, 8], b)
    assert store.get([1, 2]) is a  # a stored text that starts with the asked tokens
    assert store.get([1, 3]) is None
    store.put([9, 9, 9, 9], c)  # over budget: the least recently used (b) goes
    assert store.get([5, 6, 7, 8]) is None
    assert store.get([1, 2, 3, 4]) is a and store.get([9]) is c


def test_a_probe_of_a_generated_cot_reads_the_cache_that_wrote_it(tiny_engine):
    messages = selfcommit_messages(QUESTIONS[0], "honest", 7)
    gen = tiny_engine.generate_sync(messages, 40, 0.0, 0)[0]
    assert gen.finish_reason == "max_tokens" and len(gen.token_ids) == 40
    prompt = tiny_engine.render(messages)
    ids = prompt + gen.token_ids
    kept = tiny_engine.decoded.get(ids)
    assert kept is not None and kept.get_seq_length() == len(ids)  # the last token fed too
    fresh = tiny_engine._locked(tiny_engine.prefill, ids)
    for ours, theirs in zip(kept.layers, fresh.layers, strict=True):
        assert torch.allclose(ours.keys, theirs.keys, atol=1e-4)
        assert torch.allclose(ours.values, theirs.values, atol=1e-4)
    request = PrefixRequest(
        messages, gen.token_ids, [0, 9, 25, 40], SELFCOMMIT_FORCED_ANSWER_TAG, k=3, max_tokens=6
    )
    reused = tiny_engine._locked(tiny_engine.continue_prefixes_sync, request)
    store, tiny_engine.decoded = tiny_engine.decoded, DecodedCaches()
    try:
        prefilled = tiny_engine._locked(tiny_engine.continue_prefixes_sync, request)
    finally:
        tiny_engine.decoded = store
    assert reused == prefilled


def test_decode_attention_kernel_equals_sdpa_and_does_not_depend_on_other_rows():
    """The kernel (built here) against torch's SDPA over each row's own cache, for jobs of 1
    and 2 rows with different lengths; a row's output in one call with every job equals its
    output in a call of its job alone, bit for bit; the new keys and values land in the cache."""
    from cotaudit.engine.hf_kernel import decode_attention

    kernel = decode_attention()
    assert kernel is not None, "the decode attention kernel did not build"
    torch.manual_seed(0)
    hkv, g, d, capacity = 3, 3, 64, 48
    jobs = [(1, 0), (2, 17), (1, 31), (1, 47)]  # (rows, cached length): key blocks of 16
    keys = [torch.randn(rows, hkv, capacity // 16, d, 16) for rows, _ in jobs]
    values = [torch.randn(rows, hkv, capacity, d) for rows, _ in jobs]
    total = sum(rows for rows, _ in jobs)
    q = torch.randn(total, hkv * g, d)
    k_new, v_new = torch.randn(total, hkv, d), torch.randn(total, hkv, d)
    lengths = [n for _, n in jobs]
    together = kernel(q, k_new, v_new, keys, values, lengths, 0.125)
    row = 0
    for j, (rows, n) in enumerate(jobs):
        part = slice(row, row + rows)
        plain_keys = keys[j].transpose(3, 4).reshape(rows, hkv, capacity, d)  # [rows, Hkv, C, d]
        assert torch.equal(plain_keys[:, :, n], k_new[part])
        assert torch.equal(values[j][:, :, n], v_new[part])
        alone = kernel(q[part], k_new[part], v_new[part], [keys[j]], [values[j]], [n], 0.125)
        assert torch.equal(alone, together[part])
        expected = torch.nn.functional.scaled_dot_product_attention(
            q[part][:, :, None],
            plain_keys[:, :, : n + 1],
            values[j][:, :, : n + 1],
            scale=0.125,
            enable_gqa=True,
        )[:, :, 0]
        assert torch.allclose(together[part], expected, atol=1e-5)
        row += rows


def test_row_decoder_draws_follow_softmax_at_the_temperature():
    """20,000 draws of one step from logits (0, log 2, log 3, -inf) / T at T = 1 and T = 0.5:
    the shares are p = softmax(logits / T) within 4 standard errors, and a token of
    probability 0 is never drawn."""
    from cotaudit.engine.hf_batch import RowDecoder

    logits = torch.tensor([0.0, float(torch.log(torch.tensor(2.0))), 1.0986123, float("-inf")])
    for temperature in (1.0, 0.5):
        n = 20_000
        gen = torch.Generator().manual_seed(3)
        decoder = RowDecoder(n, 1, temperature, [gen], [99], torch.device("cpu"))
        decoder.advance(logits.expand(n, -1))
        counts = torch.bincount(decoder.next, minlength=4).double() / n
        weights = torch.tensor([1.0, 2.0, 3.0, 0.0]) ** (1 / temperature)
        p = weights / weights.sum()
        assert counts[3] == 0
        assert torch.all((counts - p).abs() <= 4 * (p * (1 - p) / n).sqrt() + 1e-12)
