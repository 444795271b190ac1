"""The HF probe engine on real (tiny random / SmolLM2) weights: cache reuse equals re-prefill."""

import asyncio
from itertools import pairwise

import pytest

from cotaudit.engine.base import PrefixRequest
from cotaudit.engine.inspect_prefill import InspectPrefillEngine
from cotaudit.studies.selfcommit.prompts import SELFCOMMIT_FORCED_ANSWER_TAG, selfcommit_messages

MESSAGES = selfcommit_messages("Tom has 3 apples and buys 4 more. How many apples?", "honest", 7)


def _request(engine, cot_len=90, k=3, temperature=0.0, stride=7):
    cot = engine.generate_sync(MESSAGES, cot_len, 0.0, 0)[0].token_ids
    positions = list(range(0, len(cot), stride)) + [len(cot)]
    return PrefixRequest(
        MESSAGES,
        cot,
        positions,
        SELFCOMMIT_FORCED_ANSWER_TAG,
        k=k,
        max_tokens=8,
        temperature=temperature,
        seed=3,
    )


def test_cached_sweep_equals_naive_reprefill_tiny(tiny_engine):
    req = _request(tiny_engine)
    cached = tiny_engine._locked(tiny_engine.continue_prefixes_sync, req)
    naive = tiny_engine._locked(tiny_engine.naive_continue_prefixes_sync, req)
    assert len(cached) == len(req.positions)
    assert cached == naive  # token for token (same decoded text) at every prefix


@pytest.mark.model
def test_cached_sweep_equals_naive_reprefill_default_model(default_engine):
    req = _request(default_engine, cot_len=60, k=2, stride=15)
    cached = default_engine._locked(default_engine.continue_prefixes_sync, req)
    naive = default_engine._locked(default_engine.naive_continue_prefixes_sync, req)
    assert cached == naive


def test_sampling_is_seeded_per_prefix(tiny_engine):
    req = _request(tiny_engine, temperature=0.7, k=4)
    a = tiny_engine._locked(tiny_engine.continue_prefixes_sync, req)
    b = tiny_engine._locked(tiny_engine.continue_prefixes_sync, req)
    assert a == b
    # seeds depend on (seed, t), not on which other prefixes are probed
    sub = PrefixRequest(
        req.messages,
        req.cot_token_ids,
        req.positions[2:],
        req.tag,
        k=4,
        max_tokens=8,
        temperature=0.7,
        seed=3,
    )
    assert tiny_engine._locked(tiny_engine.continue_prefixes_sync, sub) == a[2:]
    # k samples differ at temperature 0.7 somewhere
    assert any(len(set(row)) > 1 for row in a)


def test_generate_continues_final_assistant_message(tiny_engine):
    gen = tiny_engine.generate_sync(MESSAGES, 12, 0.0, 0)[0]
    head = tiny_engine.detokenize(gen.token_ids[:5])
    prefilled = MESSAGES + [{"role": "assistant", "content": head}]
    rendered = tiny_engine.tokenizer.decode(tiny_engine.render(prefilled))
    # the prompt ends with the partial assistant text itself: no end-of-turn, no new turn
    assert rendered.endswith("<|im_start|>assistant\n" + head)
    cont = tiny_engine.generate_sync(prefilled, 7, 0.0, 0)[0]
    # greedy continuation of the prefilled head reproduces the original greedy completion
    assert (head + cont.text).startswith(tiny_engine.detokenize(gen.token_ids[:8])[: len(head) + 3])


def test_loglikelihood_many_equals_single_and_forward(tiny_engine):
    import torch

    ctx = MESSAGES
    reports = ["The answer is 7.", "I think it is 12 apples."]
    many = tiny_engine._locked(tiny_engine.loglikelihood_many_sync, ctx, reports)
    for text, res in zip(reports, many, strict=True):
        single = asyncio.run(tiny_engine.loglikelihood(ctx, text))
        assert single.sum_logprob == pytest.approx(res.sum_logprob, abs=1e-4)
        ctx_ids = tiny_engine.render(ctx)
        cont = tiny_engine.tokenize(text)
        with torch.inference_mode():
            logits = tiny_engine.model(input_ids=torch.tensor([ctx_ids + cont])).logits[0]
        logp = torch.log_softmax(logits.float(), -1)
        direct = sum(float(logp[len(ctx_ids) - 1 + i, tok]) for i, tok in enumerate(cont))
        assert res.n_tokens == len(cont)
        assert res.sum_logprob == pytest.approx(direct, abs=1e-4)


class _RecordingModel:
    """Stands in for an Inspect Model: records the prefill text of each request."""

    def __init__(self):
        self.prefills = []

    async def generate(self, messages, config):
        from inspect_ai.model import ModelOutput

        self.prefills.append(messages[-1].text)
        out = ModelOutput.from_content("mock", "5")
        out.choices = out.choices * (config.num_choices or 1)
        return out


def test_generic_prefill_prefixes_are_cumulative(tiny_engine):
    model = _RecordingModel()
    engine = InspectPrefillEngine(model, tiny_engine.tokenizer)
    cot = tiny_engine.tokenize("First add 3 and 4 to get 7. Then check: 7 - 4 = 3. So 7.")
    positions = [0, 4, 9, len(cot)]
    req = PrefixRequest(MESSAGES, cot, positions, "\nAnswer: ", k=2, max_tokens=4, temperature=0.7)
    answers = asyncio.run(engine.continue_prefixes(req))
    assert answers == [["5", "5"]] * 4
    texts = sorted(model.prefills, key=len)
    assert texts == [engine.detokenize(cot[:t]) + "\nAnswer: " for t in positions]
    bodies = [t[: -len("\nAnswer: ")] for t in texts]
    for shorter, longer in pairwise(bodies):
        assert longer.startswith(shorter)  # cumulative, never disjoint chunks


def test_batched_and_forked_sweeps_agree(tiny_engine):
    for temperature in (0.0, 0.8):
        req = _request(tiny_engine, temperature=temperature, k=3, stride=11)
        batched = tiny_engine._locked(tiny_engine.batched_continue_prefixes_sync, req)
        forked = tiny_engine._locked(tiny_engine.forked_continue_prefixes_sync, req)
        assert batched == forked


def test_shared_prefix_attention_equals_masked_sdpa():
    """Rows cut at their own lengths over one shared prefix == SDPA over an expanded, masked
    cache (random tensors, GQA with 2 query heads per kv head)."""
    import torch

    from cotaudit.engine.shared_prefix import SharedKV, shared_prefix_attention

    torch.manual_seed(0)
    B, Hkv, g, L, s, q, d = 4, 2, 2, 9, 3, 2, 8
    prefix_k, prefix_v = torch.randn(1, Hkv, L, d), torch.randn(1, Hkv, L, d)
    suffix_k, suffix_v = torch.randn(B, Hkv, s, d), torch.randn(B, Hkv, s, d)
    lengths = torch.tensor([0, 3, 9, 5])
    query = torch.randn(B, Hkv * g, q, d)
    out, _ = shared_prefix_attention(
        None,
        query,
        SharedKV(prefix_k, suffix_k, lengths),
        SharedKV(prefix_v, suffix_v, lengths),
        None,
        scaling=0.3,
    )
    keys = torch.cat([prefix_k.expand(B, -1, -1, -1), suffix_k], 2).repeat_interleave(g, 1)
    values = torch.cat([prefix_v.expand(B, -1, -1, -1), suffix_v], 2).repeat_interleave(g, 1)
    mask = torch.zeros(B, 1, q, L + s, dtype=torch.bool)
    for b in range(B):
        mask[b, :, :, : lengths[b]] = True
        for i in range(q):
            mask[b, :, i, L : L + s - q + i + 1] = True
    expected = torch.nn.functional.scaled_dot_product_attention(
        query, keys, values, mask, scale=0.3
    )
    assert torch.allclose(out, expected.transpose(1, 2), atol=1e-5)


def test_context_lru_gives_identical_scores(tiny_engine):
    tiny_engine._contexts.clear()
    first = tiny_engine._locked(tiny_engine.loglikelihood_many_sync, MESSAGES, ["The answer is 7."])
    assert len(tiny_engine._contexts) == 1
    again = tiny_engine._locked(tiny_engine.loglikelihood_many_sync, MESSAGES, ["The answer is 7."])
    assert again[0].token_logprobs == first[0].token_logprobs
