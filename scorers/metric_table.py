"""Inspect ``@metric`` functions generated from a study's metric table.

Each :class:`cotaudit.studies.metrics.MetricSpec` becomes a registered metric factory under the
spec's name, taking the spec's options as keyword parameters (so a log records the values a run
used) and computing the spec's table on the run's sample scores."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from inspect_ai.scorer import Metric, SampleScore, metric

from cotaudit.studies.metrics import MetricSpec, MetricTable


def inspect_metric(spec: MetricSpec) -> Callable[..., Metric]:
    """The ``@metric`` factory of ``spec``: ``factory(**options)`` -> a metric computing
    ``spec(scores, **options)``."""

    def factory(**options: Any) -> Metric:
        if spec.check is not None:
            spec.check({**spec.options, **options})

        def compute(scores: list[SampleScore]) -> dict[str, float]:
            return spec(scores, **options)

        return compute

    factory.__name__ = spec.name
    factory.__qualname__ = spec.name
    factory.__doc__ = spec.doc
    factory.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=v)
            for k, v in spec.options.items()
        ],
        return_annotation=Metric,
    )
    return metric(name=spec.name)(factory)


def inspect_metrics(table: MetricTable) -> dict[str, Callable[..., Metric]]:
    """The ``@metric`` factory of every spec in ``table``, by name."""
    return {name: inspect_metric(spec) for name, spec in table.items()}
