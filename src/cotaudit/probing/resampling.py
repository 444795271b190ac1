"""Resampling from a prefix: where continuations of a CoT end up, and which sentence moves them.

Cuts ``c_0 < c_1 < ... < c_m`` are token positions of a CoT (``c_0 = 0`` the empty prefix, the
others sentence ends, ``c_m = T`` the CoT's end: :mod:`cotaudit.probing.sentences`); chunk ``i``
is the text between ``c_i`` and ``c_{i+1}`` (sentence ``i``), so chunk ``i``'s rollouts in the
Thought Anchors sense are the continuations from ``c_i`` (resampled from the start of sentence
``i``). From each cut the model writes ``n`` continuations of ``cot[:c_i]`` to their end;
``a_ij`` is the final answer of continuation ``j`` read as the study reads a CoT's answer
(``None``: it states none), and ``a_ref`` the reference answer (the original CoT's own final
answer, or the gold answer for TRACE). The definitions are those of Thought Anchors (Bogdan et
al., arXiv 2506.19143) as its code computes them (``analyze_rollouts.py``, default options:
``use_similar_chunks`` on, answer distributions rather than P(true)):

- **r(c_i)** = #{j : a_ij = a_ref} / #{j : a_ij stated}: the share of the continuations from
  ``c_i`` that state an answer which reach the reference (the code's chunk accuracy,
  ``correct / total`` over rollouts with an answer); 0 when none states one (none reached it).
- **Resampling importance** of chunk ``i`` (``calculate_resampling_importance_accuracy``: the
  next chunk's accuracy minus this chunk's): ``RI(i) = r(c_{i+1}) - r(c_i)`` for ``i < m - 1``;
  what keeping sentence ``i``, instead of resampling from its start, does to the share reaching
  the reference. The last sentence has no next sentence to resample from (the cut at ``T``
  starts no sentence), so its RI is undefined (NaN; the code reports 0).
- **Resampling importance, KL form** (``calculate_resampling_importance_kl``): ``D(P_i ||
  P_{i+1})``, the divergence (:func:`answer_kl`) of the answer distribution from ``c_i`` from
  that from ``c_{i+1}``; undefined for the last sentence likewise.
- **Counterfactual importance** (``calculate_counterfactual_importance_kl``): of the
  continuations from ``c_i`` that state an answer, those whose first sentence differs in
  meaning from sentence ``i`` are ``dissimilar``, the others ``similar`` (Thought Anchors:
  cosine similarity of sentence embeddings below 0.8); ``CI(i) = D(P_i^dissimilar ||
  P_{i+1} + P_i^similar)``, the dissimilar answers against the next cut's pooled with the
  similar ones (``use_similar_chunks``). Its accuracy form
  (``calculate_counterfactual_importance_accuracy``) ``r(dissimilar at c_i) - r(c_{i+1})``
  (no pooling there, as in the code). :attr:`ChunkImportance.counterfactual_next_only` is
  ``D(P_i^dissimilar || P_{i+1})``, the code's ``use_similar_chunks`` off.
- Undefined: where a set these compare holds no stated answer (no dissimilar continuation with
  an answer, no answer from the next cut; for RI's KL form, no answer from ``c_i`` or from
  ``c_{i+1}``; the last sentence) the importance is NaN, left out of means over chunks, where
  the code returns 0.0 (a chunk nobody resampled differently is not thereby unimportant). A
  rate over zero answered continuations is 0.0 in both, so RI stays the code's number.
- :func:`answer_kl` is the code's ``calculate_kl_divergence`` of two answer samples: over the
  answers seen in either, ``D = max(0, sum_a p~(a) log(p~(a) / q~(a)))`` with both samples'
  shares smoothed by ``alpha`` per answer: ``p~(a) = (count_1(a) + alpha) / (n_1 + alpha V)``,
  ``V`` the number of distinct answers. Continuations without an answer are left out.

Intervals: a percentile bootstrap over continuations (:func:`importance_intervals`): each
replicate draws, for every cut, ``n`` of that cut's continuations with replacement (the
continuations of one cut are independent draws given its prefix), and recomputes the statistic.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from cotaudit.bootstrap import percentile_interval

Answer = Hashable | None
"""A continuation's final answer (None: it states none)."""

KL_ALPHA = 1e-9
"""Thought Anchors' smoothing of answer shares in :func:`answer_kl` (no Laplace smoothing)."""


def reach_share(answers: Sequence[Answer], reference: Answer) -> float:
    """r = #{j : answers[j] = reference} / #{j : answers[j] stated}: Thought Anchors' accuracy;
    0.0 when no answer is stated or the reference is None (none reached it); NaN for no
    continuations."""
    if not answers:
        return math.nan
    stated = [a for a in answers if a is not None]
    if reference is None or not stated:
        return 0.0
    return sum(a == reference for a in stated) / len(stated)


def answer_kl(first: Sequence[Answer], second: Sequence[Answer], alpha: float = KL_ALPHA) -> float:
    """Thought Anchors' D(first || second) of two answer samples (see the module docstring);
    NaN when either has no stated answer."""
    p = Counter(a for a in first if a is not None)
    q = Counter(a for a in second if a is not None)
    n_p, n_q = sum(p.values()), sum(q.values())
    if not n_p or not n_q:
        return math.nan
    seen = set(p) | set(q)
    vocabulary = len(seen)
    total = 0.0
    for a in seen:
        smoothed_p = (p[a] + alpha) / (n_p + alpha * vocabulary)
        smoothed_q = (q[a] + alpha) / (n_q + alpha * vocabulary)
        total += smoothed_p * math.log(smoothed_p / smoothed_q)
    return max(0.0, total)


@dataclass(frozen=True)
class CutRollouts:
    """The continuations from one cut: their final answers and, for each, whether its first
    sentence differs in meaning from the sentence it replaced (None where not judged)."""

    answers: tuple[Answer, ...]
    dissimilar: tuple[bool | None, ...] = ()

    def __post_init__(self) -> None:
        if self.dissimilar and len(self.dissimilar) != len(self.answers):
            raise ValueError("CutRollouts: one dissimilar flag per continuation, or none")

    def take(self, rows: Sequence[int]) -> CutRollouts:
        """The continuations at ``rows`` (repeats allowed: a bootstrap draw)."""
        flags = tuple(self.dissimilar[r] for r in rows) if self.dissimilar else ()
        return CutRollouts(tuple(self.answers[r] for r in rows), flags)

    def judged(self, flag: bool) -> list[Answer]:
        """The stated answers of the continuations judged dissimilar (``flag`` True) or
        similar (False) to the sentence they replaced."""
        pairs = zip(self.answers, self.dissimilar, strict=True) if self.dissimilar else ()
        return [a for a, d in pairs if d is flag and a is not None]


@dataclass(frozen=True)
class ChunkImportance:
    """Per chunk i (between cuts i and i + 1): RI, its KL form, CI, its accuracy form, and CI
    against the next cut's continuations alone (the module docstring; NaN where undefined)."""

    resampling: float
    resampling_kl: float
    counterfactual: float
    counterfactual_accuracy: float
    counterfactual_next_only: float


UNDEFINED = ChunkImportance(math.nan, math.nan, math.nan, math.nan, math.nan)
"""The importance of a chunk with no next cut to compare against (the last sentence)."""


def reach_curve(cuts: Sequence[CutRollouts], reference: Answer) -> list[float]:
    """r(c_i) for every cut."""
    return [reach_share(c.answers, reference) for c in cuts]


def chunk_importance(cuts: Sequence[CutRollouts], reference: Answer) -> list[ChunkImportance]:
    """The importance of each chunk between consecutive cuts (m + 1 cuts: m chunks, the last
    undefined)."""
    out = []
    for here, after in zip(cuts, cuts[1:-1], strict=False):
        dissimilar, similar = here.judged(True), here.judged(False)
        next_answers = [a for a in after.answers if a is not None]
        defined = bool(dissimilar and next_answers)
        out.append(
            ChunkImportance(
                resampling=reach_share(after.answers, reference)
                - reach_share(here.answers, reference),
                resampling_kl=answer_kl(here.answers, after.answers),
                counterfactual=(
                    answer_kl(dissimilar, next_answers + similar) if defined else math.nan
                ),
                counterfactual_accuracy=(
                    reach_share(dissimilar, reference) - reach_share(next_answers, reference)
                    if defined
                    else math.nan
                ),
                counterfactual_next_only=(
                    answer_kl(dissimilar, next_answers) if defined else math.nan
                ),
            )
        )
    return out + [UNDEFINED] * (len(cuts) > 1)


Statistic = Callable[[Sequence[CutRollouts]], Sequence[float]]
"""A vector of numbers computed from every cut's continuations (e.g. one per chunk)."""


def importance_intervals(
    cuts: Sequence[CutRollouts],
    statistic: Statistic,
    *,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> list[tuple[float, float, int]]:
    """``(low, high, n_valid)`` per entry of ``statistic``: the percentile interval of its
    ``n_boot`` replicates; a replicate redraws every cut's continuations with replacement
    (numpy ``default_rng(seed)``, cuts in order). NaN replicates of an entry are left out."""
    rng = np.random.default_rng(seed)
    replicates = []
    for _ in range(n_boot):
        drawn = [c.take(rng.integers(0, len(c.answers), len(c.answers)).tolist()) for c in cuts]
        replicates.append(list(statistic(drawn)))
    columns = np.array(replicates, dtype=float).T
    return [percentile_interval(col, confidence) for col in columns]


SIMILAR_AT = 0.8
"""Sentences at least this similar (:func:`similarity`) count as the same step."""


def similarity(a: str, b: str) -> float:
    """How alike two sentences read: difflib's ratio 2M / (|a| + |b|) of their lowercased,
    white-space-normalised words (M the words in matching blocks). Thought Anchors compares
    sentence embeddings (cosine similarity, same 0.8 threshold); no embedding model is reachable
    offline, so the words stand in for the meaning here."""
    import difflib

    words_a, words_b = a.lower().split(), b.lower().split()
    if not words_a and not words_b:
        return 1.0
    return difflib.SequenceMatcher(None, words_a, words_b, autojunk=False).ratio()


def first_reach(curve: Sequence[float], threshold: float) -> int | None:
    """The first index whose value is at least ``threshold`` (None: never; NaN never reaches)."""
    return next((i for i, v in enumerate(curve) if v >= threshold), None)


def forced_before_resampled(
    forced: Sequence[float], resampled: Sequence[float], threshold: float = 0.5
) -> float:
    """1.0 when forcing reaches ``threshold`` at an earlier cut than resampling does (or
    resampling never does), 0.0 when not; NaN when forcing never reaches it: is the answer
    available to a forced answer before the reasoning, left to itself, settles on it?"""
    at_forced = first_reach(forced, threshold)
    if at_forced is None:
        return math.nan
    at_resampled = first_reach(resampled, threshold)
    return 1.0 if at_resampled is None or at_forced < at_resampled else 0.0
