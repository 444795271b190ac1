"""Scorer of the resampling probe: the sample's values
(:func:`cotaudit.probing.resample_record.resample_values`), its record in the score's metadata,
and an explanation listing the CoT's sentences, the most important first, each with a bar."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspect_ai.scorer import Metric, Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState

from cotaudit.display.text import bar, fmt_number, md_text, sparkline
from cotaudit.probing.resample_record import (
    METRICS,
    STORE_KEY,
    STUDY_PREFIX,
    ResampleRecord,
    resample_values,
)
from cotaudit.scorers.metric_table import inspect_metrics

resample_summary: Callable[..., Metric] = inspect_metrics(METRICS)["resample_summary"]

SHOWN_SENTENCES = 12
"""Sentences listed in a sample's explanation (the most important first)."""


def explanation_of(record: ResampleRecord) -> str:
    """Markdown: the two curves as sparklines, then the sentences by |RI| (largest first), each
    with a bar of |RI|, RI with its 95% interval over continuations, and the sentence (escaped)."""
    lines = [
        f"r(t), continuations reaching {record.reference} (n = {record.n} per cut): "
        f"`{sparkline(record.resampled)}`",
        f"forced (k = {record.k}): `{sparkline(record.forced)}`",
        "",
    ]
    order = sorted(
        range(len(record.chunks)),
        key=lambda i: -abs(record.chunks[i].resampling or 0.0),
    )
    for i in order[:SHOWN_SENTENCES]:
        chunk = record.chunks[i]
        low, high = chunk.resampling_ci
        lines.append(
            f"- `{bar(abs(chunk.resampling or 0.0))}` sentence {i + 1}: RI "
            f"{fmt_number(chunk.resampling)} [{fmt_number(low)}, {fmt_number(high)}], CI "
            f"{fmt_number(chunk.counterfactual)}: {md_text(chunk.text)}"
        )
    return "\n".join(lines)


def beside_study_score(
    state: TaskState, value: dict[str, Any], metadata: dict[str, Any], explanation: str
) -> str:
    """A study score with ``-T resample``: the resampling values join ``value`` as
    ``resample_<key>`` and the record ``metadata`` as ``resample`` (both in place); returns the
    explanation with the sentences by importance after it (unchanged when nothing was
    resampled)."""
    if state.store.get(STORE_KEY) is None:
        return explanation
    record = ResampleRecord.from_store(state.store)
    value |= {STUDY_PREFIX + k: v for k, v in resample_values(record).items()}
    metadata["resample"] = record.model_dump(mode="json")
    return explanation + "\n\n**Resampling from sentence cuts**\n\n" + explanation_of(record)


@scorer(metrics=[resample_summary()])
def resample_scorer() -> Scorer:
    """The resampling probe's record read back: value = the sample's values (empty when the CoT
    had no final answer), metadata ``resample`` = the record."""

    async def score(state: TaskState, target: Target) -> Score:
        if state.store.get(STORE_KEY) is None:
            return Score(value={}, explanation="No final answer in the CoT: not resampled.")
        record = ResampleRecord.from_store(state.store)
        return Score(
            value=resample_values(record),
            answer=str(record.reference),
            explanation=explanation_of(record),
            metadata={"resample": record.model_dump(mode="json")},
        )

    return score
