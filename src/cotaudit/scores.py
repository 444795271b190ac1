"""What the pure library reads from a scored sample, without importing Inspect, and the metric
table computed from scored samples.

Inspect's ``SampleScore`` (during a run) and :class:`cotaudit.logs.data.ScoredSample` (read
back from a log) both have these attributes, so the record builders of the studies and the
cluster metrics run unchanged on either. A :class:`MetricTable` declares run metrics once
(a study's, the cluster F1's, the probe's; :mod:`cotaudit.studies.metrics` says how the rest is
generated from it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


class ScoreLike(Protocol):
    """The fields of an Inspect ``Score`` the library reads."""

    @property
    def value(self) -> Any: ...

    @property
    def metadata(self) -> dict[str, Any] | None: ...


class SampleScoreLike(Protocol):
    """The fields of an Inspect ``SampleScore`` the library reads."""

    @property
    def sample_id(self) -> Any: ...

    @property
    def sample_metadata(self) -> dict[str, Any] | None: ...

    @property
    def score(self) -> ScoreLike: ...


@dataclass(frozen=True)
class ScoreParts:
    """A sample's score as the library computes it: the fields of an Inspect ``Score``, which
    a scorer builds from them (``value``, ``answer``, ``explanation``, ``metadata``)."""

    value: dict[str, Any]
    answer: str | None
    explanation: str
    metadata: dict[str, Any]


Table = dict[str, float]
"""A metric's value: statistic key -> number (NaN where undefined)."""


@dataclass(frozen=True)
class MetricSpec:
    """One run metric: ``compute(samples, **options) -> Table`` over the scored samples
    (Inspect's ``SampleScore`` during a run, :class:`cotaudit.logs.data.ScoredSample` in the
    report: both are :class:`cotaudit.scores.SampleScoreLike`).

    ``options``: the metric's parameters and their defaults (the ``@metric`` signature; a log
    records the values a run used). ``sources``: for a compact metric, the full metrics
    ``(name, options)`` its keys select from, given its own options (``-T metrics=all``
    attaches those instead); the report recomputes them for a compact log. ``check``: raises
    for invalid options (all options, defaults filled in) when the ``@metric`` is created.

    What a run logs (:meth:`MetricTable.for_run`): a spec with ``sources`` belongs to the
    compact set (``-T metrics=compact``), the others to the full one (``all``); ``applies``
    says whether a run with given settings (the task's settings model) logs it (None: every run
    of its set), ``run_options`` which options it passes (None: none, so the defaults)."""

    name: str
    compute: Callable[..., Table]
    doc: str
    options: Mapping[str, Any] = field(default_factory=dict)
    sources: Callable[[Mapping[str, Any]], list[tuple[str, dict[str, Any]]]] | None = None
    check: Callable[[Mapping[str, Any]], None] | None = None
    applies: Callable[[Any], bool] | None = None
    run_options: Callable[[Any], dict[str, Any]] | None = None

    @property
    def metric_set(self) -> str:
        """The ``-T metrics`` value of the runs that log it: ``compact`` or ``all``."""
        return "all" if self.sources is None else "compact"

    def __call__(self, samples: Sequence[Any], **options: Any) -> Table:
        """The metric's table, with ``options`` over the defaults (unknown options refused)."""
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            raise TypeError(f"metric {self.name}: unknown options {', '.join(unknown)}")
        return self.compute(samples, **{**self.options, **options})


class MetricTable(dict[str, MetricSpec]):
    """A study's metrics by name (in the order the task attaches them)."""

    def __init__(self, *specs: MetricSpec) -> None:
        super().__init__((s.name, s) for s in specs)

    def for_run(self, settings: Any) -> list[tuple[str, dict[str, Any]]]:
        """``(name, options)`` of each metric a run with ``settings`` logs, in table order: the
        specs of its metric set (``settings.metrics``) that apply to it, each with the options
        it takes from the settings (:class:`MetricSpec`)."""
        return [
            (name, spec.run_options(settings) if spec.run_options else {})
            for name, spec in self.items()
            if spec.metric_set == settings.metrics
            and (spec.applies is None or spec.applies(settings))
        ]

    def recompute(self, samples: Sequence[Any], metric_defs: Iterable[Any]) -> Table:
        """Every metric of ``metric_defs`` (``.name``, ``.options``: what a log records) that
        this table holds, recomputed from ``samples`` with the logged options; others skipped."""
        out: Table = {}
        for d in metric_defs:
            spec = self.get(d.name)
            if spec is not None:
                out.update(spec(samples, **dict(d.options)))
        return out

    def full_metrics_of(
        self, name: str, options: Mapping[str, Any]
    ) -> list[tuple[str, dict[str, Any]]]:
        """The full metrics ``(name, options)`` the compact metric ``name`` (logged with
        ``options``) selects from; [] for a full metric or a name not in the table."""
        spec = self.get(name)
        return [] if spec is None or spec.sources is None else spec.sources(options)
