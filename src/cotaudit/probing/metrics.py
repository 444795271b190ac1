"""The generic probe's run metric, declared once: :data:`METRICS` (pure, no Inspect).

``probe_summary`` (options ``probe``, ``condition_key``, ``headline``: a
:meth:`cotaudit.probing.summaries.Headline.record` or None; ``exact_headline``: the exact
estimator's headline beside it in a run of both estimators, or None) is
:func:`cotaudit.probing.summaries.run_metrics` of the samples' ``(score value, sample metadata)``
rows: the headline's keys first, its 95% bootstrap interval over units and ``n_units`` (then
the exact headline's, with ``n_units_exact``);
``n_samples``; the mean of every value key over the samples where it is defined (NaN left
out); per condition (``<key>/<condition>``) for the main keys; with replay, ``replay_gap/<key>``
= mean over replayed samples of (own - replayed summary), overall and per condition. The Inspect
``@metric`` (:mod:`cotaudit.scorers.probe`) and the report's recomputation
(:mod:`cotaudit.report.probe`) are generated from it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cotaudit.probing.summaries import Headline, run_metrics
from cotaudit.scores import MetricSpec, MetricTable, SampleScoreLike


def score_rows(
    samples: Sequence[SampleScoreLike],
) -> list[tuple[Mapping[str, Any], Mapping[str, Any]]]:
    """Per sample: its score value (a dict; {} otherwise) and its sample metadata."""
    return [
        (s.score.value if isinstance(s.score.value, dict) else {}, s.sample_metadata or {})
        for s in samples
    ]


def _probe_summary(
    samples: Sequence[SampleScoreLike],
    probe: str,
    condition_key: str,
    headline: Mapping[str, Any] | None,
    exact_headline: Mapping[str, Any] | None = None,
) -> dict[str, float]:
    return run_metrics(
        score_rows(samples),
        probe,
        condition_key,
        Headline.from_record(headline),
        Headline.from_record(exact_headline),
    )


METRICS = MetricTable(
    MetricSpec(
        "probe_summary",
        _probe_summary,
        "Run metrics of the probe (cotaudit.probing.metrics): the headline with its bootstrap "
        "interval over units and n_units, n_samples, the mean of every value key, per "
        "condition for the main keys, and with replay the own-minus-replayed gaps.",
        {"probe": "trace", "condition_key": "condition", "headline": None, "exact_headline": None},
    )
)
