"""The generic probe's run metrics, declared once: :data:`METRICS` (pure, no Inspect).

``probe_summary`` (``-T metrics=all``) (options ``probe``, ``condition_key``, ``headline``: a
:meth:`cotaudit.probing.summaries.Headline.record` or None; ``exact_headline``: the exact
estimator's headline beside it in a run of both estimators, or None) is
:func:`cotaudit.probing.summaries.run_metrics` of the samples' ``(score value, sample metadata)``
rows: the headline's keys first, its 95% bootstrap interval over units and ``n_units`` (then
the exact headline's, with ``n_units_exact``);
``n_samples``; the mean of every value key over the samples where it is defined (NaN left
out); per condition (``<key>/<condition>``) for the main keys; with replay, ``replay_gap/<key>``
= mean over replayed samples of (own - replayed summary), overall and per condition.

``probe_compact`` (``-T metrics=compact``, the default; same options) selects from it
(:func:`cotaudit.probing.summaries.compact_metrics`): the headlines' keys always, then, NaN left
out, ``n_samples``, the main keys overall and per condition, and the overall replay gaps.

The Inspect ``@metric`` functions (:mod:`cotaudit.scorers.probe`) and the report's recomputation
(:mod:`cotaudit.report.probe`) are generated from :data:`METRICS`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from cotaudit.probing.summaries import Headline, compact_metrics, run_metrics
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


def _probe_compact(
    samples: Sequence[SampleScoreLike],
    probe: str,
    condition_key: str,
    headline: Mapping[str, Any] | None,
    exact_headline: Mapping[str, Any] | None = None,
) -> dict[str, float]:
    full = _probe_summary(samples, probe, condition_key, headline, exact_headline)
    headlines = [Headline.from_record(headline), Headline.from_record(exact_headline)]
    return compact_metrics(full, probe, [h for h in headlines if h is not None])


OPTIONS = {"probe": "trace", "condition_key": "condition", "headline": None, "exact_headline": None}
"""The probe metrics' options with their defaults."""

MetricSet = Literal["compact", "all"]
METRIC_SETS: tuple[MetricSet, ...] = ("compact", "all")
"""Values of the probe's ``-T metrics``: the metric each attaches is :data:`ATTACHED`."""

METRICS = MetricTable(
    MetricSpec(
        "probe_summary",
        _probe_summary,
        "Run metrics of the probe (cotaudit.probing.metrics): the headline with its bootstrap "
        "interval over units and n_units, n_samples, the mean of every value key, per "
        "condition for the main keys, and with replay the own-minus-replayed gaps.",
        OPTIONS,
    ),
    MetricSpec(
        "probe_compact",
        _probe_compact,
        "The compact probe set, selected from probe_summary: the headlines' keys, then (NaN "
        "left out) n_samples, the main keys overall and per condition, the replay gaps.",
        OPTIONS,
        lambda options: [("probe_summary", dict(options))],
    ),
)

ATTACHED: dict[MetricSet, str] = {"compact": "probe_compact", "all": "probe_summary"}
"""The metric of :data:`METRICS` each ``-T metrics`` value attaches."""
