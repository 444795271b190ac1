"""The exact estimator on the transformers engine: the one-pass tree scores equal a re-prefill
of every path, and on real CoTs of the embedded model the exact value agrees with a large
seeded sample of forced answers."""

from __future__ import annotations

import math

import pytest
import torch
from scipy.stats import beta

from cotaudit.answers import extract_final_answer, extract_forced_answer
from cotaudit.engine.base import AnswerScoreRequest, AnswerTree, PrefixRequest
from cotaudit.probing.exact import integer_plan, token_classes
from cotaudit.studies.selfcommit.prompts import SELFCOMMIT_FORCED_ANSWER_TAG, selfcommit_messages

MESSAGES = selfcommit_messages("Tom has 3 apples and buys 4 more. How many apples?", "honest", 7)


def _naive(engine, request: AnswerScoreRequest):
    """Every node log-prob and read mass by a full forward pass over prompt + cot[:t] + tag +
    path: the re-prefill the one-pass scores must equal."""
    prompt, tag = engine.render(request.messages), engine.tokenize(request.tag)
    tree = request.tree

    def logp(t: int, path: list[int]) -> torch.Tensor:
        ids = prompt + list(request.cot_token_ids[:t]) + tag + path
        with torch.inference_mode():
            logits = engine.model(torch.tensor([ids])).logits[0, -1].float()
        return torch.log_softmax(logits / request.temperature, dim=-1)

    out = []
    for t in request.positions:
        nodes = [
            float(logp(t, tree.path(tree.parents[i]))[tree.tokens[i]]) for i in range(len(tree))
        ]
        reads = [
            float(logp(t, tree.path(node)).exp()[list(request.token_sets[s])].sum())
            for node, s in request.reads
        ]
        out.append((nodes, reads))
    return out


@pytest.mark.parametrize("temperature", [0.7, 1.3])
def test_one_pass_tree_scores_equal_reprefill_tiny(tiny_engine, temperature):
    """Branches of different depths, reads at the root, inner nodes and leaves, cuts at 0, inside
    and at the end of the CoT."""
    cot = tiny_engine.generate_sync(MESSAGES, 40, 0.0, 0)[0].token_ids
    a, b, c, d = (tiny_engine.tokenize(w)[0] for w in ("1", "8", "$", " dollars"))
    tree = AnswerTree(tokens=(a, b, c, a, b, d), parents=(-1, 0, -1, 2, 3, 1))
    sets = (frozenset({a, b, c}), frozenset(range(0, 4096, 7)))
    request = AnswerScoreRequest(
        messages=MESSAGES,
        cot_token_ids=cot,
        positions=[0, 17, len(cot)],
        tag=SELFCOMMIT_FORCED_ANSWER_TAG,
        tree=tree,
        token_sets=sets,
        reads=((-1, 0), (1, 1), (4, 0), (5, 1), (2, 1)),
        temperature=temperature,
    )
    scores = tiny_engine._locked(tiny_engine.score_answers_sync, request)
    naive = _naive(tiny_engine, request)
    assert len(scores) == 3
    for got, (nodes, reads) in zip(scores, naive, strict=True):
        assert got.node_logprobs == pytest.approx(nodes, abs=1e-4)
        assert got.read_masses == pytest.approx(reads, abs=1e-5)


def test_a_branch_below_prune_below_is_left_out_tiny(tiny_engine):
    """With prune_below above every first token's probability, no branch is fed: the root's
    children keep their log-probabilities, deeper nodes read -inf and their reads 0."""
    cot = tiny_engine.generate_sync(MESSAGES, 20, 0.0, 0)[0].token_ids
    a, b = (tiny_engine.tokenize(w)[0] for w in ("1", "8"))
    request = AnswerScoreRequest(
        MESSAGES,
        cot,
        [3, len(cot)],
        SELFCOMMIT_FORCED_ANSWER_TAG,
        tree=AnswerTree(tokens=(a, b), parents=(-1, 0)),
        token_sets=(frozenset({a}),),
        reads=((-1, 0), (1, 0)),
        temperature=1.0,
    )
    whole = tiny_engine._locked(tiny_engine.score_answers_sync, request)
    pruned_request = AnswerScoreRequest(**{**request.__dict__, "prune_below": 0.999})
    pruned = tiny_engine._locked(tiny_engine.score_answers_sync, pruned_request)
    for w, p in zip(whole, pruned, strict=True):
        assert p.node_logprobs[0] == pytest.approx(w.node_logprobs[0], abs=1e-5)
        assert p.node_logprobs[1] == float("-inf") and p.read_masses[1] == 0.0
        assert p.read_masses[0] == pytest.approx(w.read_masses[0], abs=1e-6)


K = 200
"""Forced answers sampled per prefix in the agreement check."""
ANSWER_TOKENS = 4
"""The answer budget of both estimators in the agreement check (the forms fit it; a form that
fills it counts whole, as a sampled answer cut there parses whole)."""
PROBLEMS = (
    ("A baker makes 12 muffins and sells 5. How many muffins are left?", 7),
    ("Sam has 4 boxes with 6 pens each. How many pens does he have?", 24),
    ("Lena reads 15 pages a day for 3 days. How many pages does she read?", 45),
)


def _sampled(engine, messages, cot: list[int], t: int, seed: int) -> list[str]:
    """K answers after prompt ++ cot[:t] ++ tag, the tag's tokens but its last one fed as part
    of the prefix (one prefill per cut: the same tokens as the study's request, without K rows
    each feeding the whole tag)."""
    tag = engine.tokenize(SELFCOMMIT_FORCED_ANSWER_TAG)
    last = engine.detokenize(tag[-1:])
    assert engine.tokenize(last) == tag[-1:]
    ids = list(cot[:t]) + tag[:-1]
    request = PrefixRequest(
        messages, ids, [len(ids)], last, k=K, max_tokens=ANSWER_TOKENS, temperature=0.7, seed=seed
    )
    return engine.continue_prefixes_sync(request)[0]


@pytest.mark.model
def test_exact_agrees_with_a_large_sample_on_real_cots(default_engine):
    """On 21 prefixes of three real greedy CoTs of the embedded model, the share of K = 200
    seeded forced answers (temperature 0.7) that parse to the CoT's own final answer lies, within
    its Clopper-Pearson interval (99% for the 21 together: Bonferroni, 1 - 0.01/21 each), in
    [p_exact, p_exact + (1 - covered)]: p_exact is a lower bound that leaves out at most the
    uncovered mass."""
    engine = default_engine
    classes = token_classes(engine.vocabulary())
    checks = []
    for question, gold in PROBLEMS:
        messages = selfcommit_messages(question, "honest", gold)
        cot = engine.generate_sync(messages, 120, 0.0, 0)[0]
        a_final = extract_final_answer(cot.text)
        assert a_final is not None, cot.text
        n = len(cot.token_ids)
        positions = [round(i * n / 6) for i in range(7)]
        plan = integer_plan(a_final, engine.tokenize, classes, max_tokens=ANSWER_TOKENS)
        request = plan.request(
            messages, cot.token_ids, positions, SELFCOMMIT_FORCED_ANSWER_TAG, 0.7
        )
        points = [plan.point(s) for s in engine._locked(engine.score_answers_sync, request)]
        for t, point in zip(positions, points, strict=True):
            answers = _sampled(engine, messages, cot.token_ids, t, seed=11 + t)
            hits = sum(extract_forced_answer(x) == a_final for x in answers)
            checks.append((question, t, point, hits))
    alpha = 0.01 / len(checks)
    assert len(checks) >= 20
    for question, t, point, hits in checks:
        lo = beta.ppf(alpha / 2, hits, K - hits + 1) if hits else 0.0
        hi = beta.ppf(1 - alpha / 2, hits + 1, K - hits) if hits < K else 1.0
        assert 0.0 <= point.p <= point.covered <= 1.0 + 1e-6
        upper = point.p + (1.0 - point.covered)
        assert lo <= upper + 1e-9 and hi >= point.p - 1e-9, (question, t, point, hits / K)
    # the estimator is informative here: somewhere it is neither 0 nor 1
    assert any(0.05 < point.p < 0.95 for _, _, point, _ in checks)
    assert math.fsum(1 - point.covered for *_, point, _ in checks) / len(checks) < 0.2
