"""The contrastive cluster F1 of scored samples: features read from the scores, classes and
units from the sample metadata (definition: :mod:`cotaudit.cluster.f1`).

A sample's features are read from ``Score.value[name]`` (a dict) or, where absent there,
``Score.metadata[name]``; its class is ``sample_metadata[class_key]`` compared as text with the
two classes; its unit (optional) is ``sample_metadata[unit_key]``. Samples of another class, or
with a missing or non-finite feature, are skipped; with ``skip_whole_unit`` a sample of either
class skipped for its features takes every other sample of its unit with it (a study whose
paired statistics leave out the whole pair, e.g. selfcommit's responses with no final answer).
The Inspect metric over these functions is
:func:`cotaudit.scorers.cluster_f1.contrastive_cluster_f1`; the functions take any object with
the attributes of Inspect's ``SampleScore`` (:class:`cotaudit.scores.SampleScoreLike`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from cotaudit.cluster.contrast import Clustering, ClusterMetric, register_cluster_metric
from cotaudit.cluster.f1 import DEFAULT_PREFIX, ClusterF1Result, cluster_f1
from cotaudit.scores import SampleScoreLike


def check_config(
    features: Sequence[str],
    directions: Mapping[str, int],
    primary: str | None,
    positive_class: str,
    negative_class: str,
    unit_key: str | None = None,
    skip_whole_unit: bool = False,
) -> None:
    """Raise ValueError for a configuration error (never for data)."""
    if skip_whole_unit and unit_key is None:
        raise ValueError("skip_whole_unit needs a unit_key (the unit whose samples go together)")
    if str(positive_class) == str(negative_class):
        raise ValueError(f"positive and negative class are both {positive_class!r}")
    if not features:
        raise ValueError("contrastive_cluster_f1 needs at least one feature")
    bad = {f: directions.get(f) for f in features if directions.get(f) not in (1, -1)}
    if bad:
        raise ValueError(f"directions must give +1 or -1 for every feature; got {bad}")
    if primary is not None and primary not in features:
        raise ValueError(f"primary feature {primary!r} not among {list(features)}")


def cluster_f1_from_scores(
    scores: Sequence[SampleScoreLike],
    features: Sequence[str],
    class_key: str,
    positive_class: str,
    negative_class: str,
    directions: Mapping[str, int],
    primary: str | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    unit_key: str | None = None,
    skip_whole_unit: bool = False,
) -> ClusterF1Result:
    """:func:`cotaudit.cluster.f1.cluster_f1` on the usable samples of ``scores``.

    Arguments as for :func:`cotaudit.scorers.cluster_f1.contrastive_cluster_f1`; sample ids
    come from ``sample_id``.

    Raises:
        ValueError: a usable sample whose ``sample_metadata`` lacks ``unit_key`` (naming the
            sample and the key).
    """
    check_config(
        features, directions, primary, positive_class, negative_class, unit_key, skip_whole_unit
    )
    rows, labels, ids, units = cluster_f1_inputs(
        scores, features, class_key, positive_class, negative_class, unit_key, skip_whole_unit
    )
    return cluster_f1(
        np.asarray(rows, dtype=float).reshape(len(rows), len(features)),
        labels,
        str(positive_class),
        [directions[f] for f in features],
        feature_names=list(features),
        primary=primary,
        sample_ids=ids,
        units=units,
        unit_name=unit_key or "sample",
        n_boot=n_boot,
        seed=seed,
    )


def cluster_contrast_from_scores(
    scores: Sequence[SampleScoreLike],
    features: Sequence[str],
    class_key: str,
    positive_class: str,
    negative_class: str,
    directions: Mapping[str, int],
    primary: str | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    n_nearest: int = 3,
    unit_key: str | None = None,
    skip_whole_unit: bool = False,
) -> dict[str, Any]:
    """JSON-able contrast of the two clusters (see ``ClusterF1Result.contrast``).

    Adds ``negative_class`` and ``n_skipped``: the scores not used (another or no class, a
    missing or non-finite feature, or, with ``skip_whole_unit``, such a sample's unit).
    """
    result = cluster_f1_from_scores(
        scores,
        features,
        class_key,
        positive_class,
        negative_class,
        directions,
        primary,
        n_boot,
        seed,
        unit_key,
        skip_whole_unit,
    )
    contrast = result.contrast(n_nearest)
    contrast["negative_class"] = negative_class
    contrast["n_skipped"] = len(scores) - result.n_positive - result.n_negative - result.n_collapsed
    return contrast


def cluster_f1_inputs(
    scores: Sequence[SampleScoreLike],
    features: Sequence[str],
    class_key: str,
    positive_class: str,
    negative_class: str,
    unit_key: str | None = None,
    skip_whole_unit: bool = False,
) -> tuple[list[list[float]], list[str], list[Any], list[str] | None]:
    """Feature rows, class labels, sample ids and units (``sample_metadata[unit_key]`` as
    text; None without ``unit_key``) of the usable samples, in input order.

    With ``skip_whole_unit`` (needs ``unit_key``), a unit any of whose samples of the two
    classes has a missing or non-finite feature is left out entirely."""
    kept: list[tuple[list[float], str, Any, str | None]] = []
    broken: set[str] = set()
    classes = (str(positive_class), str(negative_class))
    for s in scores:
        metadata = s.sample_metadata or {}
        if class_key not in metadata or str(metadata[class_key]) not in classes:
            continue
        values = [v for v in (_feature(s, f) for f in features) if v is not None]
        if len(values) < len(features):
            if unit_key is not None and unit_key in metadata:
                broken.add(str(metadata[unit_key]))
            continue
        unit = None
        if unit_key is not None:
            if unit_key not in metadata:
                raise ValueError(
                    f"contrastive_cluster_f1: sample {s.sample_id!r} has no sample_metadata "
                    f"field {unit_key!r} (unit_key)"
                )
            unit = str(metadata[unit_key])
        kept.append((values, str(metadata[class_key]), s.sample_id, unit))
    if skip_whole_unit:
        kept = [k for k in kept if k[3] not in broken]
    rows = [k[0] for k in kept]
    labels = [k[1] for k in kept]
    ids = [k[2] for k in kept]
    units = [str(k[3]) for k in kept]
    return rows, labels, ids, (units if unit_key is not None else None)


def _feature(s: SampleScoreLike, name: str) -> float | None:
    """``Score.value[name]``, else ``Score.metadata[name]``; None unless a finite number."""
    value = s.score.value
    if isinstance(value, Mapping) and name in value:
        raw = value[name]
    else:
        raw = (s.score.metadata or {}).get(name)
    if isinstance(raw, (int, float)) and math.isfinite(raw):
        return float(raw)
    return None


def _recompute(scores: Sequence[SampleScoreLike], options: Mapping[str, Any]) -> Clustering:
    """``contrastive_cluster_f1(**options)`` on ``scores``, for the contrast and the report."""
    opts = dict(options)
    prefix = opts.pop("prefix", DEFAULT_PREFIX)
    opts.pop("keys", None)  # which of its keys the metric logged
    result = cluster_f1_from_scores(scores, **opts)
    return Clustering(prefix, result, str(opts["negative_class"]))


register_cluster_metric("contrastive_cluster_f1", ClusterMetric(_recompute))
