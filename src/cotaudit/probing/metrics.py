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
from dataclasses import asdict, dataclass
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


@dataclass(frozen=True)
class ProbeMetricOptions:
    """The options of the probe's run metrics (the ``@metric`` parameters a log records):
    ``probe`` (``trace`` or ``selfcommit``), ``condition_key`` (the sample metadata key naming a
    sample's condition), ``headline`` (a :meth:`cotaudit.probing.summaries.Headline.record` or
    None) and ``exact_headline`` (the exact estimator's headline beside it in a run of both
    estimators, or None)."""

    probe: str = "trace"
    condition_key: str = "condition"
    headline: Mapping[str, Any] | None = None
    exact_headline: Mapping[str, Any] | None = None

    def passed(self) -> dict[str, Any]:
        """The options as a run passes them to the ``@metric`` (and its log records them):
        ``exact_headline`` only where there is one."""
        options = asdict(self)
        if self.exact_headline is None:
            del options["exact_headline"]
        return options

    def headlines(self) -> tuple[Headline | None, Headline | None]:
        """The headline and the exact headline beside it, read from their records."""
        return Headline.from_record(self.headline), Headline.from_record(self.exact_headline)


def _probe_summary(samples: Sequence[SampleScoreLike], **options: Any) -> dict[str, float]:
    o = ProbeMetricOptions(**options)
    return run_metrics(score_rows(samples), o.probe, o.condition_key, *o.headlines())


def _probe_compact(samples: Sequence[SampleScoreLike], **options: Any) -> dict[str, float]:
    o = ProbeMetricOptions(**options)
    headlines = [h for h in o.headlines() if h is not None]
    return compact_metrics(_probe_summary(samples, **options), o.probe, headlines)


OPTIONS = asdict(ProbeMetricOptions())
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
