"""selfcommit's metric set: the headline and compact keys of its tables."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from cotaudit.display.headline import HeadlineSpec
from cotaudit.probing.curves import tau_key
from cotaudit.studies.metrics import select

SELFCOMMIT_OTHER_SUMMARIES = ("range_c", "uncommitted", "lowcommit", "rho_back")


def selfcommit_headline_spec(primary: str) -> HeadlineSpec:
    """AUROC (honest vs hinted) of the primary summary over the n_pairs problems with both
    conditions answered (no interval in the run metrics: the report's comparisons give one);
    problems left out for a response without a final answer counted beside it."""
    return HeadlineSpec(
        f"auroc/{primary}",
        "n_pairs",
        "problem",
        "problems",
        bounds=(0.0, 1.0),
        dropped="n_pairs_dropped_no_answer",
        dropped_why="a response without a final answer",
    )


def selfcommit_headline_keys(primary: str) -> list[str]:
    """AUROC (honest vs hinted) of the primary summary, n_pairs, then the paired wins and ties
    (counts of problems)."""
    return [*selfcommit_headline_spec(primary).keys(), f"wins/{primary}", f"ties/{primary}"]


def selfcommit_headline(table: Mapping[str, float], primary: str) -> dict[str, float]:
    """The headline keys from the ``honest_vs_hinted`` table (always present)."""
    keys = selfcommit_headline_keys(primary)
    return select(table, keys, keep_nan=keys)


def selfcommit_compact_keys(primary: str) -> list[str]:
    """After the headline: the primary summary's AUROC tie share, medians (and, for a
    tau_first, the median latency in tokens) and best-threshold accuracy; median T per
    condition; AUROC of the other summaries; the no-answer, truncated and short-CoT counts; and
    the both-correct subset's headline."""
    latency = (
        [f"median_t_first_honest/{primary}", f"median_t_first_hinted/{primary}"]
        if primary.startswith("tau_")
        else []
    )
    return [
        f"auroc_tie_share/{primary}",
        f"median_honest/{primary}",
        f"median_hinted/{primary}",
        *latency,
        "median_T/honest",
        "median_T/hinted",
        f"best_acc/{primary}",
        *(f"auroc/{s}" for s in SELFCOMMIT_OTHER_SUMMARIES),
        "n_no_answer/honest",
        "n_no_answer/hinted",
        "n_truncated/honest",
        "n_truncated/hinted",
        "n_short_cot/honest",
        "n_short_cot/hinted",
        "n_pairs_dropped_no_answer",
        "both_correct/n_pairs",
        f"both_correct/auroc/{primary}",
        f"both_correct/wins/{primary}",
    ]


def selfcommit_compact(
    table: Mapping[str, float], both_correct_table: Mapping[str, float], primary: str
) -> dict[str, float]:
    """The compact keys from the ``honest_vs_hinted`` and ``honest_vs_hinted_both_correct``
    tables (NaN left out)."""
    return select({**table, **both_correct_table}, selfcommit_compact_keys(primary))


def primary_summary(thetas: Sequence[float], wanted: float = 0.8) -> str:
    """Summary key of the study's primary statistic: tau_first at theta = 0.8 when the run has
    it, else at the middle theta (``tau_0.8``; ``range_c`` without thetas)."""
    if not thetas:
        return "range_c"
    for t in thetas:
        if math.isclose(t, wanted):
            return tau_key(t)
    return tau_key(sorted(thetas)[len(thetas) // 2])
