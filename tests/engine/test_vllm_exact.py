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

from cotaudit.engine.base import AnswerScoreRequest
from cotaudit.engine.hf import HFEngine
from cotaudit.engine.inspect_prefill import InspectPrefillEngine
from cotaudit.probing.exact import ExactPlan, integer_plan, token_classes
from cotaudit.studies.selfcommit.prompts import SELFCOMMIT_FORCED_ANSWER_TAG, selfcommit_messages

pytestmark = [pytest.mark.model, pytest.mark.vllm]

TOL = 1e-3
QUESTION = "Janet has 3 apples and buys 15 more. How many apples does she have?"
GOLD = 18
TEMPERATURE = 0.7  # selfcommit's: vLLM's log-probabilities must be the tempered ones


def _gold_request(vllm_server: Any) -> tuple[InspectPrefillEngine, ExactPlan, AnswerScoreRequest]:
    """An engine over the vLLM server, the integer plan of :data:`GOLD`, and its request at
    4 cuts (0, a third, two thirds, all) of the server's greedy CoT of :data:`QUESTION`."""
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
    return engine, plan, request


def test_exact_scores_agree_with_hf_probe(vllm_server: Any, default_engine: HFEngine) -> None:
    engine, plan, request = _gold_request(vllm_server)
    positions = request.positions

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


def _computed_prompt_tokens(root: str) -> float:
    """Prompt tokens the server has computed (not served from its prefix cache), from its
    ``/metrics``: ``vllm:prompt_tokens_total`` - ``vllm:prompt_tokens_cached_total``."""
    import re

    import httpx

    text = httpx.get(f"{root}/metrics", timeout=30).text

    def total(name: str) -> float:
        pattern = rf"^{re.escape(name)}(?:\{{[^}}]*\}})? ([0-9.eE+-]+)$"
        return sum(float(v) for v in re.findall(pattern, text, re.M))

    return total("vllm:prompt_tokens_total") - total("vllm:prompt_tokens_cached_total")


def test_exact_scores_cost_about_what_k5_sampling_costs(vllm_server: Any) -> None:
    """The same 4 cuts scored exactly and sampled k = 5: the exact scores go depth by depth
    (the root, ``1``, ``18``, ``18.`` and ``18,`` at each cut: ``$`` and ``\\boxed{`` fall below
    prune_below), one call per id list, and the sets too large for one request (after ``18``:
    its 48,611 ending tokens; after ``18.`` / ``18,``) by their mass; 8 prompts a cut against
    sampling's 5 sequences, and at most 2x sampling's computed prompt tokens."""
    from cotaudit.engine.base import PrefixRequest

    engine, _, request = _gold_request(vllm_server)
    positions = request.positions
    asyncio.run(engine.score_answers(request))  # the temperature check's requests go first
    sent = (engine.requests.calls, engine.requests.prompts)
    before = _computed_prompt_tokens(vllm_server.root)
    asyncio.run(engine.score_answers(request))
    exact = _computed_prompt_tokens(vllm_server.root) - before
    calls, prompts = engine.requests.calls - sent[0], engine.requests.prompts - sent[1]
    assert (calls, prompts) == (8, 8 * len(positions))

    sampled_request = PrefixRequest(
        request.messages,
        request.cot_token_ids,
        positions,
        SELFCOMMIT_FORCED_ANSWER_TAG,
        k=5,
        temperature=TEMPERATURE,
    )
    before = _computed_prompt_tokens(vllm_server.root)
    asyncio.run(engine.continue_prefixes(sampled_request))
    sampled = _computed_prompt_tokens(vllm_server.root) - before
    assert 0 < exact <= 2 * sampled
