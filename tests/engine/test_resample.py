"""Continuations of a CoT from its own cuts (an empty tag: resampling) on real weights: greedy
continuations reproduce the rest of the greedy CoT token for token on every decode path."""

from __future__ import annotations

import pytest

from cotaudit.engine.base import PrefixRequest, cut_and_feed
from cotaudit.studies.selfcommit.prompts import selfcommit_messages

MESSAGES = selfcommit_messages("A box holds 12 eggs. How many eggs are in 5 boxes?", "honest", 0)


def test_cut_and_feed_reads_the_cut_then_feeds_the_tag_or_the_last_token_again():
    sequence = [10, 11, 12, 20, 21, 22]  # 3 prompt tokens, then a CoT of 3
    assert cut_and_feed(sequence, 3, 2, [7, 8]) == (5, [7, 8])
    assert cut_and_feed(sequence, 3, 2, []) == (4, [21])
    assert cut_and_feed(sequence, 3, 0, []) == (2, [12])  # the last prompt token
    with pytest.raises(ValueError, match="at least one prompt token"):
        cut_and_feed([], 0, 0, [])


def _greedy_continuations(engine, cot_tokens: int, cuts: list[int]):
    cot = engine.generate_sync(MESSAGES, cot_tokens, 0.0, 0)[0].token_ids
    assert len(cot) == cot_tokens  # stopped at max_tokens: every cut has a rest to reproduce
    expected = [[engine.detokenize(cot[t:])] * 2 for t in cuts]
    return cot, expected


def _request(cot, cuts, max_tokens):
    return PrefixRequest(MESSAGES, cot, cuts, "", k=2, max_tokens=max_tokens, temperature=0.0)


def _check_hf(engine, cot_tokens: int, cuts: list[int]) -> None:
    cot, expected = _greedy_continuations(engine, cot_tokens, cuts)
    request = _request(cot, cuts, cot_tokens)  # each rest is shorter: it stops at max_tokens
    # rows of different cuts stop at different lengths: max_tokens counts from each cut
    per_cut = [
        engine._locked(engine.continue_prefixes_sync, _request(cot, [t], len(cot) - t))[0]
        for t in cuts
    ]
    assert per_cut == expected  # the batched sweep (a job in the running batch)
    for t, want in zip(cuts, expected, strict=True):
        single = _request(cot, [t], len(cot) - t)
        assert engine._locked(engine.forked_continue_prefixes_sync, single)[0] == want
        assert engine._locked(engine.naive_continue_prefixes_sync, single)[0] == want
    # all cuts in one sweep: each continuation starts with the CoT's rest after its cut
    together = engine._locked(engine.continue_prefixes_sync, request)
    for answers, t in zip(together, cuts, strict=True):
        assert all(a.startswith(engine.detokenize(cot[t:])) for a in answers)


def test_greedy_continuations_reproduce_the_cot_tiny(tiny_engine):
    _check_hf(tiny_engine, 40, [0, 1, 17, 39])


@pytest.mark.model
def test_greedy_continuations_reproduce_the_cot_default_model(default_engine):
    _check_hf(default_engine, 24, [0, 9, 23])
