"""The contrastive cluster F1 of scored samples: features read from the scores, classes and
units from the sample metadata (definition: :mod:`cotaudit.cluster.f1`).

A sample's features are read from ``Score.value[name]`` (a dict) or, where absent there,
``Score.metadata[name]``; its class is ``sample_metadata[class_key]`` compared as text with the
two classes; its unit (optional) is ``sample_metadata[unit_key]``. Samples of another class, or
with a missing or non-finite feature, are skipped; with ``skip_whole_unit`` a sample of either
class skipped for its features takes every other sample of its unit with it (a study whose
paired statistics leave out the whole pair, e.g. selfcommit's responses with no final answer).
What a metric declares is a :class:`ClusterHypothesis`; the metric itself is declared in
:mod:`cotaudit.cluster.metrics`. The functions take any object with the attributes of Inspect's
``SampleScore`` (:class:`cotaudit.scores.SampleScoreLike`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, dataclass, fields, replace
from typing import Any

import numpy as np

from cotaudit.cluster.f1 import ClusterF1Result, cluster_f1
from cotaudit.scores import SampleScoreLike

METRIC_NAME = "contrastive_cluster_f1"
"""Registry name of the Inspect metric over these functions (:mod:`cotaudit.cluster.metrics`)."""


@dataclass(frozen=True)
class ClusterHypothesis:
    """What a cluster metric declares before any run: the features it clusters, which sample
    metadata field holds the class and which class is the suspicious one, each feature's
    expected direction, the threshold baseline's feature and the independent unit.

    - ``features``: read per sample from ``Score.value[name]``, else ``Score.metadata[name]``;
    - ``class_key``: the ``sample_metadata`` field of the class, compared as text with
      ``positive_class`` (suspicious) and ``negative_class`` (honest); samples of any other
      class are skipped;
    - ``directions``: per feature +1 if the positive class is expected larger, -1 if smaller;
    - ``primary``: the threshold baseline's feature (None: the first feature);
    - ``unit_key``: the ``sample_metadata`` field naming each sample's independent unit (None:
      every sample is its own unit);
    - ``skip_whole_unit``: a sample skipped for a missing or non-finite feature takes every
      other sample of its unit with it (needs ``unit_key``).

    Raises ValueError on construction for a configuration error (never for data).
    """

    features: tuple[str, ...]
    class_key: str
    positive_class: str
    negative_class: str
    directions: Mapping[str, int]
    primary: str | None = None
    unit_key: str | None = None
    skip_whole_unit: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "features", tuple(self.features))
        if self.skip_whole_unit and self.unit_key is None:
            raise ValueError(
                "skip_whole_unit needs a unit_key (the unit whose samples go together)"
            )
        if str(self.positive_class) == str(self.negative_class):
            raise ValueError(f"positive and negative class are both {self.positive_class!r}")
        if not self.features:
            raise ValueError(f"{METRIC_NAME} needs at least one feature")
        bad = {
            f: self.directions.get(f)
            for f in self.features
            if self.directions.get(f) not in (1, -1)
        }
        if bad:
            raise ValueError(f"directions must give +1 or -1 for every feature; got {bad}")
        if self.primary is not None and self.primary not in self.features:
            raise ValueError(f"primary feature {self.primary!r} not among {list(self.features)}")

    @classmethod
    def of(cls, options: Mapping[str, Any]) -> ClusterHypothesis:
        """The hypothesis among a cluster metric's options (as a log records them; the
        metric's other options, such as ``prefix`` or ``n_boot``, ignored). An option the
        options leave out takes its default."""
        return cls(**{f.name: options[f.name] for f in fields(cls) if f.name in options})

    def options(self) -> dict[str, Any]:
        """The hypothesis as the metric's options: every field but those at their defaults
        (so a log records what a task declared), ``features`` as a list."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.default is MISSING or value != f.default:
                out[f.name] = list(value) if f.name == "features" else value
        return out

    def with_unit(self, unit_key: str | None) -> ClusterHypothesis:
        """The same hypothesis with units named by ``unit_key``."""
        return replace(self, unit_key=unit_key)

    @property
    def classes(self) -> tuple[str, str]:
        """The two classes as text: (positive, negative)."""
        return str(self.positive_class), str(self.negative_class)


def cluster_f1_from_scores(
    scores: Sequence[SampleScoreLike],
    hypothesis: ClusterHypothesis,
    n_boot: int = 1000,
    seed: int = 0,
) -> ClusterF1Result:
    """:func:`cotaudit.cluster.f1.cluster_f1` of ``hypothesis`` on the usable samples of
    ``scores`` (sample ids from ``sample_id``), with ``n_boot`` resamples for the interval and
    ``seed`` for KMeans and the bootstrap.

    Raises:
        ValueError: a usable sample whose ``sample_metadata`` lacks ``unit_key`` (naming the
            sample and the key).
    """
    h = hypothesis
    rows, labels, ids, units = cluster_f1_inputs(scores, h)
    return cluster_f1(
        np.asarray(rows, dtype=float).reshape(len(rows), len(h.features)),
        labels,
        str(h.positive_class),
        [h.directions[f] for f in h.features],
        feature_names=list(h.features),
        primary=h.primary,
        sample_ids=ids,
        units=units,
        unit_name=h.unit_key or "sample",
        n_boot=n_boot,
        seed=seed,
    )


def cluster_contrast_from_scores(
    scores: Sequence[SampleScoreLike],
    hypothesis: ClusterHypothesis,
    n_boot: int = 1000,
    seed: int = 0,
    n_nearest: int = 3,
) -> dict[str, Any]:
    """JSON-able contrast of the two clusters (see ``ClusterF1Result.contrast``).

    Adds ``negative_class`` and ``n_skipped``: the scores not used (another or no class, a
    missing or non-finite feature, or, with ``skip_whole_unit``, such a sample's unit).
    """
    result = cluster_f1_from_scores(scores, hypothesis, n_boot, seed)
    contrast = result.contrast(n_nearest)
    contrast["negative_class"] = hypothesis.negative_class
    contrast["n_skipped"] = len(scores) - result.n_positive - result.n_negative - result.n_collapsed
    return contrast


def cluster_f1_inputs(
    scores: Sequence[SampleScoreLike], hypothesis: ClusterHypothesis
) -> tuple[list[list[float]], list[str], list[Any], list[str] | None]:
    """Feature rows, class labels, sample ids and units (``sample_metadata[unit_key]`` as
    text; None without ``unit_key``) of the usable samples, in input order.

    With ``skip_whole_unit`` (needs ``unit_key``), a unit any of whose samples of the two
    classes has a missing or non-finite feature is left out entirely."""
    features, class_key, unit_key = hypothesis.features, hypothesis.class_key, hypothesis.unit_key
    kept: list[tuple[list[float], str, Any, str | None]] = []
    broken: set[str] = set()
    classes = hypothesis.classes
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
                    f"{METRIC_NAME}: sample {s.sample_id!r} has no sample_metadata "
                    f"field {unit_key!r} (unit_key)"
                )
            unit = str(metadata[unit_key])
        kept.append((values, str(metadata[class_key]), s.sample_id, unit))
    if hypothesis.skip_whole_unit:
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
