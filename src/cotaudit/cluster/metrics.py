"""The contrastive cluster F1 as a run metric, declared once (definition:
:mod:`cotaudit.cluster.f1`).

:data:`METRICS` holds the metric named :data:`~cotaudit.cluster.scores.METRIC_NAME`. Its
options are the :class:`~cotaudit.cluster.scores.ClusterHypothesis` fields (``features``,
``class_key``, ``positive_class``, ``negative_class`` and ``directions`` required;
``primary``, ``unit_key``, ``skip_whole_unit``), then ``prefix`` (the key stem,
:func:`cotaudit.cluster.f1.metric_keys`), ``n_boot`` and ``seed`` (interval resamples, seed of
KMeans and the bootstrap) and ``keys`` (the keys to log, in this order; None: all of
``metric_keys(prefix)``). Its value is :meth:`cotaudit.cluster.f1.ClusterF1Result.metrics` of
:func:`cotaudit.cluster.scores.cluster_f1_from_scores`. The Inspect ``@metric`` is generated
from the table (:mod:`cotaudit.scorers.cluster_f1`); the report recomputes it
(:func:`cotaudit.report.cluster.recompute`), and the cluster contrast through the
:class:`~cotaudit.cluster.contrast.ClusterMetric` registered here (:func:`recompute`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from inspect import Parameter
from typing import Any

from cotaudit.cluster.contrast import Clustering, ClusterMetric, register_cluster_metric
from cotaudit.cluster.f1 import DEFAULT_PREFIX, ClusterF1Result, metric_keys
from cotaudit.cluster.scores import METRIC_NAME, ClusterHypothesis, cluster_f1_from_scores
from cotaudit.scores import MetricSpec, MetricTable, SampleScoreLike

REQUIRED = Parameter.empty
"""The default of an option the metric needs given (its ``@metric`` parameter has none)."""

OPTIONS: dict[str, Any] = {
    "features": REQUIRED,
    "class_key": REQUIRED,
    "positive_class": REQUIRED,
    "negative_class": REQUIRED,
    "directions": REQUIRED,
    "primary": None,
    "prefix": DEFAULT_PREFIX,
    "n_boot": 1000,
    "seed": 0,
    "unit_key": None,
    "keys": None,
    "skip_whole_unit": False,
}
"""The metric's options and their defaults (see the module docstring)."""


def options_of(logged: Mapping[str, Any]) -> dict[str, Any]:
    """The metric's options as a log records them (the options a run passed), defaults filled
    in for the others."""
    return {**OPTIONS, **logged}


def clustering(scores: Sequence[SampleScoreLike], options: Mapping[str, Any]) -> ClusterF1Result:
    """The clustering behind the metric with ``options`` on ``scores``."""
    o = options_of(options)
    return cluster_f1_from_scores(scores, ClusterHypothesis.of(o), o["n_boot"], o["seed"])


def check(options: Mapping[str, Any]) -> None:
    """Raise ValueError for a configuration error: the hypothesis
    (:class:`~cotaudit.cluster.scores.ClusterHypothesis`), the prefix or a key not of the
    prefix; TypeError for a required option not given."""
    missing = [k for k, v in options.items() if v is REQUIRED]
    if missing:
        raise TypeError(f"{METRIC_NAME}: missing options {', '.join(missing)}")
    ClusterHypothesis.of(options)
    prefix = options["prefix"]
    unknown = sorted(set(options["keys"] or ()) - set(metric_keys(prefix)))
    if unknown:
        raise ValueError(f"{METRIC_NAME}: keys {unknown} are not keys of prefix {prefix!r}")


def table(scores: Sequence[SampleScoreLike], **options: Any) -> dict[str, float]:
    """The metric's value: the keys of ``metric_keys(prefix)`` (or ``keys``, in that order)."""
    values = clustering(scores, options).metrics(options["prefix"])
    keys = options["keys"]
    return values if keys is None else {k: values[k] for k in keys}


METRICS = MetricTable(
    MetricSpec(
        METRIC_NAME,
        table,
        "Contrastive cluster F1 of ``positive_class`` vs ``negative_class`` samples "
        "(cotaudit.cluster.f1): 2-means on the features, the positive cluster fixed by the "
        "declared directions, F1 against the classes with a unit-bootstrap interval, and the "
        "threshold baseline on the primary feature.",
        OPTIONS,
        check=check,
    )
)


def recompute(scores: Sequence[SampleScoreLike], options: Mapping[str, Any]) -> Clustering:
    """The metric with its logged ``options`` on ``scores``, for the contrast and the report."""
    o = options_of(options)
    return Clustering(o["prefix"], clustering(scores, o), str(o["negative_class"]))


register_cluster_metric(METRIC_NAME, ClusterMetric(recompute))
