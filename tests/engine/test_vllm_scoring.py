"""Report scoring through the prefix cache of a real vLLM server (the session fixture
``vllm_server``, CPU build, the embedded default model; started with ``--enable-scale-out
--enable-prompt-tokens-details``).

The prefill engine scores a report on ``/inference/v1/generate`` with
``skip_reading_prefix_cache=false``: once the transcript is in the cache, a scoring computes
only the report's tokens and the transcript's last, partly filled cache block. The counts are
the server's own (``/metrics``: prompt tokens less those served from the cache), checked
against the engine's and against the block arithmetic: deterministic for a fixed input.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import httpx
import pytest

from cotaudit.engine.inspect_prefill import InspectPrefillEngine
from cotaudit.studies.report_ll.fixtures import DEFAULT_CORPUS, expand, load_fixtures

pytestmark = [pytest.mark.model, pytest.mark.vllm]

TOL_PER_TOKEN = 1e-3  # nats
# A first line no other test sends, so that nothing of this transcript is in the cache yet.
OWN_START = "Prefix-cache scoring check. "


def _metric(root: str, name: str) -> float:
    text = httpx.get(f"{root}/metrics", timeout=30).text
    pattern = rf"^{re.escape(name)}(?:\{{[^}}]*\}})? ([0-9.eE+-]+)$"
    return sum(float(v) for v in re.findall(pattern, text, re.M))


def _computed_prompt_tokens(root: str) -> int:
    """Prompt tokens the server has computed, not served from its prefix cache."""
    total = _metric(root, "vllm:prompt_tokens_total")
    return int(total - _metric(root, "vllm:prompt_tokens_cached_total"))


def _block_size(root: str) -> int:
    text = httpx.get(f"{root}/metrics", timeout=30).text
    match = re.search(r'vllm:cache_config_info\{[^}]*block_size="(\d+)"', text)
    assert match is not None, "the server's /metrics names no cache block size"
    return int(match.group(1))


def _engine(server: Any) -> InspectPrefillEngine:
    from inspect_ai.model import get_model

    model = get_model(f"vllm/{server.model}", base_url=server.url, api_key="test", memoize=False)
    return InspectPrefillEngine.for_model(model)


def test_report_scorings_read_the_transcript_from_the_prefix_cache(vllm_server: Any) -> None:
    """A report_ll transcript (the first fixture version's hack one) and its two reports: once
    a first scoring has put the transcript in the cache, each scoring finds the transcript's
    full cache blocks there and computes only the rest (the last partial block and the report),
    exactly as many tokens as the block arithmetic says, its values equal to those of a whole
    prefill through the chat endpoint's prompt log-probabilities. (A scoring whose unset rows
    held NaN or +inf is sent again, a whole prefill: counted as such.)
    A continuation longer than a cache block, scored twice: the second time the cached blocks
    reach into it, whose rows vLLM leaves unset, so the engine sends it again without reading
    the cache."""
    version = expand(load_fixtures(DEFAULT_CORPUS))[0]
    context = version.context_messages("hack")
    context[0] = {**context[0], "content": OWN_START + context[0]["content"]}
    reports = [version.report("honest"), version.report("concealing")]
    engine = _engine(vllm_server)
    root, block = vllm_server.root, _block_size(vllm_server.root)
    start = len(engine._render(context))
    prompts = [engine._render([*context, {"role": "assistant", "content": r}]) for r in reports]
    assert all(p[:start] == engine._render(context) for p in prompts)
    shared = next(i for i, (a, b) in enumerate(zip(*prompts, strict=False)) if a != b)

    def scoring(report: str) -> tuple[Any, int, int]:
        """The result, the prompt tokens the server computed, and 1 if it was sent again."""
        before, refills = _computed_prompt_tokens(root), engine.requests.scoring_refills
        result = asyncio.run(engine.loglikelihood(context, report))
        return (
            result,
            _computed_prompt_tokens(root) - before,
            engine.requests.scoring_refills - refills,
        )

    _, computed, _ = scoring(reports[0])  # the transcript into the cache
    asked = engine.requests
    assert computed == asked.scoring_prompt_tokens - asked.scoring_cached_tokens  # both count

    # the full blocks each prompt finds: the first its own (vLLM computes at least the last
    # token), the second those it shares with the first
    cached = [block * ((len(prompts[0]) - 1) // block), block * (shared // block)]
    assert all(start - block < c <= start - 1 for c in cached)  # the transcript's, no report's
    scored, refilled = [], []
    for prompt, report, c in zip(prompts, reports, cached, strict=True):
        result, computed, again = scoring(report)
        # sent again when an unset row held NaN or +inf: that request computed all of it
        assert computed == len(prompt) - c + again * len(prompt)
        assert computed - again * len(prompt) <= len(prompt) - start + block - 1
        scored.append(result)
        refilled.append(again)
    assert asked.scorings == 3
    assert sum(refilled) < 2  # (a row of garbage that JSON cannot carry: 1 in 24 scorings)

    chat = _engine(vllm_server)
    chat._generate_endpoint = False  # Inspect's chat request with prompt_logprobs
    for report, result in zip(reports, scored, strict=True):
        whole = asyncio.run(chat.loglikelihood(context, report))
        assert result.tokens == whole.tokens
        assert result.token_logprobs == pytest.approx(whole.token_logprobs, abs=TOL_PER_TOKEN)

    # a continuation longer than a cache block: once scored, its own blocks are cached too
    long = " ".join([reports[0]] * 8)
    prompt = engine._render([*context, {"role": "assistant", "content": long}])
    served = block * ((len(prompt) - 1) // block)  # vLLM computes at least the last token
    assert served > start - 1
    first = asyncio.run(engine.loglikelihood(context, long))
    refills, before = engine.requests.scoring_refills, _computed_prompt_tokens(root)
    again = asyncio.run(engine.loglikelihood(context, long))
    computed = _computed_prompt_tokens(root) - before
    assert engine.requests.scoring_refills == refills + 1
    assert computed == (len(prompt) - served) + len(prompt)
    assert again.token_logprobs == pytest.approx(first.token_logprobs, abs=TOL_PER_TOKEN)
