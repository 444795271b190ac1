"""trace_tutor's metric set: the headline and compact keys of its tables."""

from __future__ import annotations

from collections.abc import Mapping

from cotaudit.display.headline import HeadlineSpec
from cotaudit.studies.metrics import select

TRACE_HEADLINE_CONDITION = "answer_key"


_CI = ("mean_diff", "mean_ci_low", "mean_ci_high")


def trace_headline_spec(auc_max: float | None = None) -> HeadlineSpec:
    """Mean Delta_context (key visible minus key masked TRACE AUC) of the answer-key
    explanations over n problems, with its problem-bootstrap CI; with ``auc_max`` (the largest
    AUC, last fraction minus first) it lies in [-auc_max, auc_max]."""
    prefix = f"visible_vs_masked/{TRACE_HEADLINE_CONDITION}"
    return HeadlineSpec(
        f"{prefix}/mean_diff",
        f"{prefix}/n",
        "problem",
        "problems",
        interval=(f"{prefix}/mean_ci_low", f"{prefix}/mean_ci_high"),
        bounds=(-auc_max, auc_max) if auc_max is not None else None,
    )


def trace_headline_keys() -> list[str]:
    """The headline's keys: mean Delta_context, n, its CI."""
    return trace_headline_spec().keys()


def trace_compact_keys() -> list[str]:
    """Headline, then: wrong-key Delta_context; answer-key vs question-only AUC (key visible and
    masked, all pairs); the answer-key 0%-probe drop; original accuracy per condition."""
    return [
        *trace_headline_keys(),
        *(f"visible_vs_masked/wrong_key/{f}" for f in _CI),
        *(f"answer_key_vs_question_only/visible/all/{f}" for f in _CI),
        *(f"answer_key_vs_question_only/masked/all/{f}" for f in _CI),
        *(f"zero_probe_drop/answer_key/{f}" for f in _CI),
        "accuracy/question_only",
        "accuracy/answer_key",
        "accuracy/wrong_key",
    ]


def trace_compact(tables: Mapping[str, float]) -> dict[str, float]:
    """The compact keys from the union of the trace tables (headline always present)."""
    return select(tables, trace_compact_keys(), keep_nan=trace_headline_keys())


TRACE_TABLES = (
    ("trace_table_ii", False),
    ("trace_table_iii", False),
    ("trace_table_iv", True),
    ("trace_delta_context", True),
    ("trace_zero_probe_drop", True),
    ("trace_table_v", False),
    ("trace_anchoring", False),
    ("trace_checkpoint_counts", False),
)
