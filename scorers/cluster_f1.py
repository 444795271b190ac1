"""Inspect metric for the contrastive cluster F1 (definition: :mod:`cotaudit.cluster.f1`),
generated from its metric table (:mod:`cotaudit.cluster.metrics`, where its options are listed).

Attach it to any scorer whose per-sample ``Score`` carries the features, either in
``Score.value`` (a dict) or in ``Score.metadata``::

    @scorer(metrics=[contrastive_cluster_f1(
        features=["commit_position"], class_key="condition",
        positive_class="hinted", negative_class="honest",
        directions={"commit_position": -1},  # hinted samples commit earlier
    )])

The metric pools the scored samples whose ``sample_metadata[class_key]`` is ``positive_class``
or ``negative_class``, 2-means clusters their features and returns the flat dict of
:meth:`cotaudit.cluster.f1.ClusterF1Result.metrics` (``cluster_f1``, ``cluster_f1_ci_low``, ...,
``threshold_f1``, ``cluster_n_units``). With ``unit_key`` (e.g. ``"pair_id"``) the F1 interval
resamples the independent units named by ``sample_metadata[unit_key]`` and duplicates within a
unit are collapsed; without it every sample is its own unit (see :mod:`cotaudit.cluster.f1`).
Samples with a missing or non-finite feature are skipped (with ``skip_whole_unit``, with their
unit). An empty or degenerate selection (fewer than 2 samples per class, constant features)
gives NaN values, never an error; a configuration error raises ValueError when the metric is
created. The pure functions behind it (:mod:`cotaudit.cluster.scores`) are re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspect_ai.scorer import Metric

from cotaudit.cluster.metrics import METRICS
from cotaudit.cluster.scores import (
    METRIC_NAME,
    ClusterHypothesis,
    cluster_contrast_from_scores,
    cluster_f1_from_scores,
    cluster_f1_inputs,
)
from cotaudit.scorers.metric_table import inspect_metrics

contrastive_cluster_f1: Callable[..., Metric] = inspect_metrics(METRICS)[METRIC_NAME]
"""The Inspect metric (keyword options as listed in :mod:`cotaudit.cluster.metrics`)."""


def cluster_f1_metric(hypothesis: ClusterHypothesis, **options: Any) -> Metric:
    """:data:`contrastive_cluster_f1` of ``hypothesis`` (its options,
    :meth:`~cotaudit.cluster.scores.ClusterHypothesis.options`) with the metric's other
    ``options`` (``prefix``, ``n_boot``, ``seed``, ``keys``)."""
    return contrastive_cluster_f1(**hypothesis.options(), **options)


__all__ = [
    "ClusterHypothesis",
    "cluster_contrast_from_scores",
    "cluster_f1_from_scores",
    "cluster_f1_metric",
    "cluster_f1_inputs",
    "contrastive_cluster_f1",
]
