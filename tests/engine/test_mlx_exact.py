"""Exact answer scores on the MLX backend (``MLXEngine.score_answers_sync``).

On the tiny model the one-pass tree scoring over the shared prefix cache is checked against a
full forward pass of ``prompt ++ cot[:t] ++ tag ++ path`` per read node (MLX itself, no
cache): every node log-probability and read mass within ``NAIVE_TOL``. On the default model
(SmolLM2-135M, fp32 on both backends) the estimator's p and covered agree with the HF engine's
within ``HF_TOL`` (absolute, on probabilities) for the model's own greedy CoT.
"""

from __future__ import annotations

import asyncio
import math

import pytest
from helpers import TOM_APPLES_CHAT as MESSAGES
from helpers import mlx_engine_of, on_mlx_worker

pytest.importorskip("mlx.core")
pytest.importorskip("mlx_lm")

from cotaudit.engine.base import AnswerScoreRequest, AnswerTree
from cotaudit.engine.mlx import MLXEngine
from cotaudit.probing.exact import integer_plan, token_classes
from cotaudit.studies.selfcommit.prompts import SELFCOMMIT_FORCED_ANSWER_TAG as TAG
from cotaudit.studies.selfcommit.prompts import selfcommit_messages

NAIVE_TOL = 1e-4
HF_TOL = 1e-3
TEMPERATURES = (1.0, 0.6)
COT_TEXT = "Tom has 3 + 4 = 7 apples. The final answer is 7."


@pytest.fixture(scope="module")
def mlx_tiny() -> MLXEngine:
    return mlx_engine_of("tiny")


def _tree_request(
    engine: MLXEngine, temperature: float, positions: list[int] | None = None
) -> AnswerScoreRequest:
    """Positions 0, inside and at the end of the CoT; a tree with branches of depth 1 to 4
    (two nodes of the same token under different parents), reads at the root, at inner nodes
    and at leaves, over a small, a large and an empty token set."""
    cot = engine.tokenize(COT_TEXT)
    seven, one, two = engine.tokenize(" 7")[0], engine.tokenize("1")[0], engine.tokenize("2")[0]
    # 0: " 7"  1: "1"  2: " 7"/"2"  3: " 7"/"2"/"1"  4: "1"/"2"  5: "1"/"2"/" 7"  6: ".../" 7"
    tree = AnswerTree((seven, one, two, one, two, seven, seven), (-1, -1, 0, 2, 1, 4, 5))
    sets = (frozenset({seven, one}), frozenset(range(200)), frozenset())
    reads = ((-1, 0), (0, 1), (3, 0), (6, 1), (2, 2), (-1, 1))
    if positions is None:
        positions = [0, 6, len(cot)]
    return AnswerScoreRequest(MESSAGES, cot, positions, TAG, tree, sets, reads, temperature)


def _naive_logits(engine: MLXEngine, request: AnswerScoreRequest) -> list[dict[int, list[float]]]:
    """Per position, per read node (-1: the tag's end), the last logits of one full forward
    pass (no cache) over prompt ++ cot[:t] ++ tag ++ path(node)."""
    import mlx.core as mx

    prompt, tag = engine.render(request.messages), engine.tokenize(request.tag)
    tree = request.tree
    nodes = sorted(set(tree.parents) | {node for node, _ in request.reads})
    out = []
    for t in request.positions:
        per_node = {}
        for node in nodes:
            ids = prompt + list(request.cot_token_ids[:t]) + tag + tree.path(node)
            logits = engine.model(mx.array([ids]))[0, -1].astype(mx.float32)
            per_node[node] = logits.tolist()
        out.append(per_node)
    return out


def _log_softmax(logits: list[float], temperature: float) -> list[float]:
    scaled = [x / temperature for x in logits]
    top = max(scaled)
    norm = top + math.log(math.fsum(math.exp(x - top) for x in scaled))
    return [x - norm for x in scaled]


def _expected(request: AnswerScoreRequest, logits: dict[int, list[float]]):
    """(node log-probabilities, read masses) at one position, by the definitions."""
    logp = {node: _log_softmax(v, request.temperature) for node, v in logits.items()}
    tree = request.tree
    nodes = [logp[p][tok] for p, tok in zip(tree.parents, tree.tokens, strict=True)]
    masses = [
        math.fsum(math.exp(logp[node][i]) for i in request.token_sets[s])
        for node, s in request.reads
    ]
    return nodes, masses


@pytest.fixture(scope="module")
def tiny_naive(mlx_tiny):
    request = _tree_request(mlx_tiny, 1.0)
    return on_mlx_worker(mlx_tiny, _naive_logits, mlx_tiny, request)


def test_tree_scores_equal_full_forward_per_path(mlx_tiny, tiny_naive):
    assert mlx_tiny._stepper.batchable  # the tiny Llama takes the one-pass tree path
    worst = 0.0
    by_temperature = []
    for temperature in TEMPERATURES:
        request = _tree_request(mlx_tiny, temperature)
        scores = asyncio.run(mlx_tiny.score_answers(request))  # through the worker
        assert len(scores) == len(request.positions)
        for got, logits in zip(scores, tiny_naive, strict=True):
            nodes, masses = _expected(request, logits)
            assert len(got.node_logprobs) == len(nodes) and len(got.read_masses) == len(masses)
            for a, b in zip(got.node_logprobs + got.read_masses, nodes + masses, strict=True):
                worst = max(worst, abs(a - b))
            assert got.read_masses[4] == 0.0  # the empty set
        by_temperature.append(scores)
    print(f"worst difference from the full forward passes: {worst:.2e}")
    assert worst < NAIVE_TOL, worst
    # the prefix matters and the temperature matters (the comparison is not vacuous)
    first = by_temperature[0]
    assert abs(first[0].node_logprobs[0] - first[-1].node_logprobs[0]) > 10 * NAIVE_TOL
    assert abs(first[0].node_logprobs[0] - by_temperature[1][0].node_logprobs[0]) > 10 * NAIVE_TOL


def test_fallback_without_tree_attention_equals_full_forward(mlx_tiny, tiny_naive, monkeypatch):
    """Models that do not batch re-prefill each path: same values (at the CoT's end)."""
    monkeypatch.setattr(mlx_tiny._stepper, "batchable", False)
    request = _tree_request(mlx_tiny, TEMPERATURES[1], [len(mlx_tiny.tokenize(COT_TEXT))])
    (got,) = on_mlx_worker(mlx_tiny, mlx_tiny.score_answers_sync, request)
    nodes, masses = _expected(request, tiny_naive[-1])
    assert got.node_logprobs == pytest.approx(nodes, abs=NAIVE_TOL)
    assert got.read_masses == pytest.approx(masses, abs=NAIVE_TOL)


def test_no_positions_and_empty_tree(mlx_tiny):
    cot = mlx_tiny.tokenize(COT_TEXT)
    none = AnswerScoreRequest(MESSAGES, cot, [], TAG, AnswerTree(), (), ())
    assert on_mlx_worker(mlx_tiny, mlx_tiny.score_answers_sync, none) == []
    # no tree nodes: only the tag's next-token mass; the whole vocabulary has mass 1
    everything = frozenset(range(mlx_tiny.model.args.vocab_size))
    root = AnswerScoreRequest(MESSAGES, cot, [2], TAG, AnswerTree(), (everything,), ((-1, 0),))
    (only,) = on_mlx_worker(mlx_tiny, mlx_tiny.score_answers_sync, root)
    assert only.node_logprobs == [] and only.read_masses == pytest.approx([1.0], abs=1e-5)


@pytest.mark.model
def test_default_model_exact_point_agrees_with_hf(default_engine):
    """SmolLM2-135M's own greedy CoT: p and covered of the integer plan on mlx/ and hf-probe/
    within HF_TOL at t = 0, inside the CoT and at its end; the vocabularies are the same."""
    mlx_default = mlx_engine_of("default")
    messages = selfcommit_messages(
        "Janet has 3 apples and buys 15 more. How many apples does she have?", "honest", 18
    )
    cot = default_engine.generate_sync(messages, 40, 0.0, 0)[0].token_ids
    vocab = mlx_default.vocabulary()
    assert vocab.texts == default_engine.vocabulary().texts
    assert mlx_default.vocabulary() is vocab  # decoded once
    plan = integer_plan(18, default_engine.tokenize, token_classes(vocab), 8)
    request = plan.request(messages, cot, [0, len(cot) // 2, len(cot)], TAG, 0.7)
    ours = on_mlx_worker(mlx_default, mlx_default.score_answers_sync, request)
    ref = default_engine.score_answers_sync(request)
    for a, b in zip(ours, ref, strict=True):
        pa, pb = plan.point(a), plan.point(b)
        assert pa.p == pytest.approx(pb.p, abs=HF_TOL)
        assert pa.covered == pytest.approx(pb.covered, abs=HF_TOL)
    assert max(plan.point(s).covered for s in ref) > 0.1  # answers that start with a digit
