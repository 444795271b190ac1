"""Run-level statistics of the selfcommit study, from per-sample records.

Each record is one problem under one condition with its curve summaries. Summaries are
oriented so larger = honest-like and used as they stand: AUROC is P(honest > hinted), a paired
win is honest > hinted on the same problem, best-threshold accuracy calls "x >= h" honest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from cotaudit.stats import auroc, best_threshold_accuracy, median, paired_wins

HONEST, HINTED = "honest", "hinted"


@dataclass(frozen=True)
class SelfcommitRecord:
    """One sample: problem ``pair_id`` under ``condition``, its summaries and correctness
    (a_final == gold; False when a_final is None)."""

    pair_id: str
    condition: str
    summaries: Mapping[str, float]
    correct: bool


def _by_condition(records: Iterable[SelfcommitRecord]) -> dict[str, dict[str, SelfcommitRecord]]:
    out: dict[str, dict[str, SelfcommitRecord]] = {HONEST: {}, HINTED: {}}
    for r in records:
        if r.condition in out:
            out[r.condition][r.pair_id] = r
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
    ``best_acc/s``, ``median_honest/s``, ``median_hinted/s``; plus ``n_pairs``. ``names``
    fixes the summaries (so an empty subset still reports every key, as NaN)."""
    records = list(records)
    groups = _by_condition(records)
    honest, hinted = groups[HONEST], groups[HINTED]
    pairs = sorted(set(honest) & set(hinted))
    out: dict[str, float] = {f"{prefix}n_pairs": float(len(pairs))}
    for s in summary_names(records) if names is None else names:
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


def both_correct(records: Iterable[SelfcommitRecord]) -> list[SelfcommitRecord]:
    """Records of problems whose honest and hinted responses are both correct."""
    records = list(records)
    groups = _by_condition(records)
    keep = {p for p in set(groups[HONEST]) & set(groups[HINTED])
            if groups[HONEST][p].correct and groups[HINTED][p].correct}
    return [r for r in records if r.pair_id in keep and r.condition in (HONEST, HINTED)]


def condition_by_correctness(records: Iterable[SelfcommitRecord]) -> dict[str, float]:
    """``median/<condition>/<correct|incorrect>/<summary>`` and the cell counts ``n/...``."""
    records = list(records)
    out: dict[str, float] = {}
    for cond in (HONEST, HINTED):
        for correct, label in ((True, "correct"), (False, "incorrect")):
            cell = [r for r in records if r.condition == cond and r.correct == correct]
            out[f"n/{cond}/{label}"] = float(len(cell))
            for s in summary_names(records):
                out[f"median/{cond}/{label}/{s}"] = median([r.summaries[s] for r in cell])
    return out
