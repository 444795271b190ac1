"""Run-level statistics of the selfcommit study, from per-sample records.

Each record is one problem under one condition with its curve summaries. Summaries are
oriented so larger = honest-like and used as they stand: AUROC is P(honest > hinted), a paired
win is honest > hinted on the same problem, best-threshold accuracy calls "x >= h" honest.

A response with no parsable final answer has nothing to commit to, so no curve: it is left out
of every statistic here, and so is the other response of its problem (the pair is dropped, so
AUROC, wins and medians are all over the same problems). ``n_no_answer/<condition>`` counts the
responses left out for lacking an answer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from cotaudit.display import SELFCOMMIT_VIEWER_FIELDS
from cotaudit.scores import SampleScoreLike
from cotaudit.stats import auroc, best_threshold_accuracy, median, paired_wins

HONEST, HINTED = "honest", "hinted"


@dataclass(frozen=True)
class SelfcommitRecord:
    """One sample: problem ``pair_id`` under ``condition``, its summaries, correctness
    (a_final == gold; False when a_final is None) and whether a_final parsed."""

    pair_id: str
    condition: str
    summaries: Mapping[str, float]
    correct: bool
    has_answer: bool = True


def records_from_scores(scores: Iterable[SampleScoreLike]) -> list[SelfcommitRecord]:
    """Selfcommit records from sample scores (skipping any without a value dict, or with a NaN
    summary despite a final answer).

    ``has_answer`` is False where the score's ``a_final`` is None: in new logs such samples
    have NaN summaries, in logs before issue 13 the summaries of c = 0 everywhere; either way
    the run statistics exclude them (see :func:`answered`)."""
    out = []
    for s in scores:
        value = s.score.value
        meta = s.sample_metadata or {}
        score_meta = s.score.metadata or {}
        if not isinstance(value, dict) or "condition" not in meta:
            continue
        summaries = {  # the curve summaries: not the viewer's text and correctness fields
            k: float(v)
            for k, v in value.items()
            if k not in SELFCOMMIT_VIEWER_FIELDS and isinstance(v, (int, float))
        }
        has_answer = "a_final" not in score_meta or score_meta["a_final"] is not None
        if has_answer and any(math.isnan(v) for v in summaries.values()):
            continue
        out.append(
            SelfcommitRecord(
                pair_id=str(meta["pair_id"]),
                condition=str(meta["condition"]),
                summaries=summaries,
                correct=bool(score_meta.get("correct", False)),
                has_answer=has_answer,
            )
        )
    return out


def _by_condition(records: Iterable[SelfcommitRecord]) -> dict[str, dict[str, SelfcommitRecord]]:
    out: dict[str, dict[str, SelfcommitRecord]] = {HONEST: {}, HINTED: {}}
    for r in records:
        if r.condition in out:
            out[r.condition][r.pair_id] = r
    return out


def answered(records: Iterable[SelfcommitRecord]) -> list[SelfcommitRecord]:
    """The records with a final answer whose problem's other condition (if run) has one too."""
    records = list(records)
    unanswered = {r.pair_id for r in records if not r.has_answer}
    return [r for r in records if r.pair_id not in unanswered]


def no_answer_counts(records: Iterable[SelfcommitRecord]) -> dict[str, float]:
    """``n_no_answer/<condition>``: responses without a parsable final answer;
    ``n_pairs_dropped_no_answer``: problems with both conditions where either response has none
    (their pair is left out of the paired statistics)."""
    records = list(records)
    out = {
        f"n_no_answer/{c}": float(sum(r.condition == c and not r.has_answer for r in records))
        for c in (HONEST, HINTED)
    }
    groups = _by_condition(records)
    pairs = set(groups[HONEST]) & set(groups[HINTED])
    out["n_pairs_dropped_no_answer"] = float(
        sum(not (groups[HONEST][p].has_answer and groups[HINTED][p].has_answer) for p in pairs)
    )
    return out


def summary_names(records: Iterable[SelfcommitRecord]) -> list[str]:
    """Summary keys present in every record, in first-seen order."""
    records = list(records)
    if not records:
        return []
    names = list(records[0].summaries)
    return [n for n in names if all(n in r.summaries for r in records)]


def two_condition_table(
    records: Iterable[SelfcommitRecord], prefix: str = "", names: Sequence[str] | None = None
) -> dict[str, float]:
    """Per summary s: ``auroc/s``, ``wins/s``, ``ties/s`` (over pairs with both conditions),
    ``best_acc/s``, ``median_honest/s``, ``median_hinted/s``; plus ``n_pairs`` (pairs both of
    whose responses have a final answer). Records are first restricted to :func:`answered`.
    ``names`` fixes the summaries (so an empty subset still reports every key, as NaN)."""
    records = list(records)
    names = summary_names(records) if names is None else names
    records = answered(records)
    groups = _by_condition(records)
    honest, hinted = groups[HONEST], groups[HINTED]
    pairs = sorted(set(honest) & set(hinted))
    out: dict[str, float] = {f"{prefix}n_pairs": float(len(pairs))}
    for s in names:
        h = [r.summaries[s] for r in honest.values()]
        g = [r.summaries[s] for r in hinted.values()]
        wins, ties = paired_wins(
            [honest[p].summaries[s] for p in pairs], [hinted[p].summaries[s] for p in pairs]
        )
        out[f"{prefix}auroc/{s}"] = auroc(h, g)
        out[f"{prefix}wins/{s}"] = wins
        out[f"{prefix}ties/{s}"] = ties
        out[f"{prefix}best_acc/{s}"] = best_threshold_accuracy(h, g)
        out[f"{prefix}median_honest/{s}"] = median(h)
        out[f"{prefix}median_hinted/{s}"] = median(g)
    return out


def honest_vs_hinted_table(records: Iterable[SelfcommitRecord]) -> dict[str, float]:
    """The run's two-condition table (:func:`two_condition_table`) with the
    :func:`no_answer_counts` (the ``honest_vs_hinted`` metric)."""
    records = list(records)
    return two_condition_table(records) | no_answer_counts(records)


def both_correct(records: Iterable[SelfcommitRecord]) -> list[SelfcommitRecord]:
    """Records of problems whose honest and hinted responses are both correct."""
    records = list(records)
    groups = _by_condition(records)
    keep = {p for p in set(groups[HONEST]) & set(groups[HINTED])
            if groups[HONEST][p].correct and groups[HINTED][p].correct}
    return [r for r in records if r.pair_id in keep and r.condition in (HONEST, HINTED)]


def condition_by_correctness(records: Iterable[SelfcommitRecord]) -> dict[str, float]:
    """``median/<condition>/<correct|incorrect>/<summary>`` and the cell counts ``n/...``, over
    :func:`answered` records ("incorrect" = a final answer other than gold)."""
    records = list(records)
    names = summary_names(records)
    records = answered(records)
    out: dict[str, float] = {}
    for cond in (HONEST, HINTED):
        for correct, label in ((True, "correct"), (False, "incorrect")):
            cell = [r for r in records if r.condition == cond and r.correct == correct]
            out[f"n/{cond}/{label}"] = float(len(cell))
            for s in names:
                out[f"median/{cond}/{label}/{s}"] = median([r.summaries[s] for r in cell])
    return out
