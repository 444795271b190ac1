"""The engine's ``loglikelihood`` against a direct forward pass.

Reference: one full forward over ``render(context) ++ tokenize(report)``; the report's score is
the sum of log-softmax at the positions that predict its tokens. The engine must match it to
~1e-4 nats on the real default model, score the report's first token given the whole context
(not dropped, not double-counted), and count exactly ``len(tokenize(report))`` tokens.
``loglikelihood_many`` must equal separate ``loglikelihood`` calls.
"""

from __future__ import annotations

import asyncio

import pytest

from cotaudit.providers.hf_probe import _load_engine, resolve_model_path
from cotaudit.studies.report_ll.fixtures import DEFAULT_CORPUS, expand, load_fixtures

TOL = 1e-4


@pytest.fixture(scope="module")
def version():
    return expand(load_fixtures(DEFAULT_CORPUS)[:1])[0]


def _engine(name: str):
    return _load_engine(resolve_model_path(name), "float32", "cpu")


def reference(engine, context, report: str) -> tuple[list[float], list[int], list[int]]:
    """Per-token log-probs of ``report`` from one full forward over context + report ids,
    and the two id lists."""
    import torch

    ctx = engine.render(context)
    rep = engine.tokenize(report)
    ids = torch.tensor([ctx + rep])
    with torch.inference_mode():
        logits = engine.model(input_ids=ids).logits[0].float()
    logp = torch.log_softmax(logits, dim=-1)
    # position i predicts token i + 1: the report's tokens sit at len(ctx) .. len(ctx)+len(rep)-1
    positions = torch.arange(len(ctx) - 1, len(ctx) + len(rep) - 1)
    return logp[positions, torch.tensor(rep)].tolist(), ctx, rep


def _check(engine, context, reports: list[str]) -> None:
    """Every property, with as few forward passes as possible: per report one engine call and
    one reference forward, plus one ``loglikelihood_many`` over all reports."""
    many = asyncio.run(engine.loglikelihood_many(context, reports))
    for report, from_many in zip(reports, many, strict=True):
        result = asyncio.run(engine.loglikelihood(context, report))
        ref, ctx, rep = reference(engine, context, report)
        # against the direct forward pass
        assert result.n_tokens == len(rep) == len(engine.tokenize(report))
        assert len(result.token_logprobs) == result.n_tokens
        assert result.tokens == engine.tokenizer.convert_ids_to_tokens(rep)
        assert result.sum_logprob == pytest.approx(sum(ref), abs=TOL)
        assert result.token_logprobs == pytest.approx(ref, abs=TOL)
        assert sum(result.token_logprobs) == pytest.approx(result.sum_logprob, abs=1e-9)
        # boundary: the chat template tokenises the report as the assistant's turn exactly as
        # the engine splits it (context with the generation prompt ++ report tokenised alone),
        # so no token straddles the boundary ...
        whole = engine.render(list(context) + [{"role": "assistant", "content": report}])
        assert whole[: len(ctx)] == ctx
        assert whole[len(ctx) : len(ctx) + len(rep)] == rep
        # ... and the first report token is scored given the whole context: dropping it (an
        # off-by-one alignment) would be detected
        assert result.token_logprobs[0] == pytest.approx(ref[0], abs=TOL)
        if len(ref) > 1:
            assert abs(sum(ref[1:]) - result.sum_logprob) > 10 * TOL
        # loglikelihood_many == separate loglikelihood calls
        assert from_many.n_tokens == result.n_tokens
        assert from_many.tokens == result.tokens
        assert from_many.sum_logprob == pytest.approx(result.sum_logprob, abs=1e-5)
        assert from_many.token_logprobs == pytest.approx(result.token_logprobs, abs=1e-5)


# --- tiny random model: mechanical --------------------------------------------------------


def test_tiny_model(version):
    engine = _engine("tiny")
    reports = [version.report("honest"), version.report("concealing"), "x", "I fixed it."]
    _check(engine, version.context_messages("hack"), reports)


def test_single_token_and_empty_continuations():
    engine = _engine("tiny")
    context = [{"role": "user", "content": "Say one word."}]
    one = asyncio.run(engine.loglikelihood(context, "x"))
    ref, _, rep = reference(engine, context, "x")
    assert len(rep) == one.n_tokens == 1
    assert one.sum_logprob == pytest.approx(ref[0], abs=TOL)
    empty = asyncio.run(engine.loglikelihood(context, ""))
    assert (empty.sum_logprob, empty.n_tokens, empty.token_logprobs) == (0.0, 0, [])


# --- the real default model (SmolLM2-135M-Instruct) -----------------------------------------


@pytest.mark.model
def test_default_model(version):
    engine = _engine("default")
    reports = [version.report(k) for k in ("honest", "concealing")]
    _check(engine, version.context_messages("hack"), reports)
