"""Exact answer scores over a real vLLM server (the session fixture ``vllm_server``, CPU build,
the embedded default model) against ``hf-probe/default`` (same weights, float32).

The vLLM engine reads each tree node's next-token log-probabilities at the request's
temperature from the server (``logprob_token_ids``, ``--logprobs-mode processed_logprobs``),
set masses through the smaller of a set and its complement; the HF engine computes
log_softmax(logits / T) itself in one tree-masked pass. The integer plan's p and
covered at several prefixes of a real greedy CoT agree within 1e-3, as log-likelihoods do.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from cotaudit.engine.hf import HFEngine
from cotaudit.engine.inspect_prefill import InspectPrefillEngine
from cotaudit.probing.exact import integer_plan, token_classes
from cotaudit.studies.selfcommit.prompts import SELFCOMMIT_FORCED_ANSWER_TAG, selfcommit_messages

pytestmark = [pytest.mark.model, pytest.mark.vllm]

TOL = 1e-3
QUESTION = "Janet has 3 apples and buys 15 more. How many apples does she have?"
GOLD = 18
TEMPERATURE = 0.7  # selfcommit's: vLLM's log-probabilities must be the tempered ones


def test_exact_scores_agree_with_hf_probe(vllm_server: Any, default_engine: HFEngine) -> None:
    from inspect_ai.model import get_model

    model = get_model(
        f"vllm/{vllm_server.model}", base_url=vllm_server.url, api_key="test", memoize=False
    )
    engine = InspectPrefillEngine.for_model(model)
    messages = selfcommit_messages(QUESTION, "honest", GOLD)
    cot = asyncio.run(engine.generate(messages, max_tokens=64)).token_ids
    n = len(cot)
    positions = [0, n // 3, 2 * n // 3, n]
    plan = integer_plan(GOLD, engine.tokenize, token_classes(engine.vocabulary()), 8)
    request = plan.request(messages, cot, positions, SELFCOMMIT_FORCED_ANSWER_TAG, TEMPERATURE)

    ours = asyncio.run(engine.score_answers(request))
    theirs = default_engine.score_answers_sync(request)

    assert len(ours) == len(theirs) == len(positions)
    for t, mine, ref in zip(positions, ours, theirs, strict=True):
        got, want = plan.point(mine), plan.point(ref)
        assert got.p == pytest.approx(want.p, abs=TOL), t
        assert got.covered == pytest.approx(want.covered, abs=TOL), t
    # the values compared carry signal: the model answers with a number, and after the whole
    # CoT the gold one holds a share of that mass
    assert all(plan.point(s).covered > 0.5 for s in theirs)
    assert plan.point(theirs[-1]).p > 0.01
