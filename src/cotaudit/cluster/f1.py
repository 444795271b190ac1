"""Contrastive cluster F1: does the probe alone, with no labels and no tuned threshold, separate
the suspicious class from the honest one?

Follows the loophole-discovery step of TRACE (Wang et al. 2025, arXiv 2510.01367, section 5),
which clusters per-sample probe scores with k = 2 and contrasts the clusters, and GRIFT
(arXiv 2604.16242), which scores such a clustering by F1 against the known labels.

Definition
----------
Inputs: a feature matrix ``X`` (n samples x d features), each sample's class label, which label
is the *positive* (suspicious) class (every other label is the negative, honest class), and a
declared hypothesis direction per feature, ``dir_j = +1`` if the positive class is expected to
have larger values of feature j, ``-1`` if smaller.

1. **Pool** the samples of both classes.
2. **Standardise** each feature to z-scores over the pooled samples,
   ``z_ij = (x_ij - mean_j) / std_j`` (population std). A constant feature (``std_j`` = 0, up
   to rounding) becomes all zeros instead of NaN.
3. **2-means**: scikit-learn ``KMeans(n_clusters=2, init="k-means++", n_init=N_INIT,
   random_state=seed)`` on the z-scores. Deterministic for a fixed ``seed``.
4. **Positive cluster, fixed in advance by the declared direction**: the cluster whose centroid
   ``c`` has the larger direction-weighted sum ``sum_j dir_j * c_j``. Labels are never consulted
   to choose it, so a wrong declared direction yields a low F1 rather than being silently
   flipped. (If the two sums are equal, the direction does not decide and the direction-based
   metrics are NaN.)
5. **Scores** of the positive cluster against the positive class:
   ``precision = TP / (TP + FP)``, ``recall = TP / (TP + FN)``, ``F1 = 2TP / (2TP + FP + FN)``.
   - ``f1_ci_low`` / ``f1_ci_high``: percentile bootstrap interval (default 95%) of F1 that
     resamples the independent *units* (:mod:`cotaudit.bootstrap`): each of ``n_boot``
     resamples draws units with replacement, takes all their samples, re-standardises,
     re-clusters and re-picks the positive cluster by the declared direction. Units are
     stratified by their class make-up (positive only, negative only, both), so the number of
     units of each kind stays fixed. Without ``units`` every sample is its own unit, i.e. the
     samples are drawn with replacement within each class (the row-level bootstrap; too narrow
     when samples share a problem). Resamples whose
     features are all constant, or whose two clusters tie on the direction-weighted sum, are
     left out.
   - ``f1_optimistic``: the larger F1 of the two possible cluster-to-class mappings (chosen
     after seeing labels, so optimistic; 1.0 whenever the clusters equal the classes, whatever
     the declared direction).
   - ``f1_chance``: ``2 pi q / (pi + q)``, the F1 at the expected counts of a rule that flags
     the same number of samples independently of class, where ``pi`` is the positive-class
     fraction and ``q`` the positive-cluster fraction. With identical classes F1 is near it.
   - ``ari``: adjusted Rand index between the clusters and the classes (mapping-free).
6. **Baseline**, TRACE's threshold rule on the declared *primary* feature p: flag a sample when
   its direction-oriented score ``dir_p * x_ip`` exceeds the mean of that score over the
   negative (honest) class; precision, recall and F1 as above.
7. **Contrast** (``ClusterF1Result.contrast()``): for each cluster, the ids of the ``n_nearest``
   samples nearest its centroid (Euclidean, z-score space), its size and class make-up and its
   feature means; and the features ranked by the absolute standardised centroid difference
   ``(mean_pos_cluster_j - mean_neg_cluster_j) / std_j``.

**Units and duplicates.** With ``units`` (one label per sample: the problem pair, the
scenario), samples of the same unit with the same class and byte-identical feature vectors are
one measurement counted twice (e.g. a report scored identically under two factor levels); all
but the first are dropped before step 1, for the point estimate and the interval alike
(``n_collapsed``). Identical samples of *different* units are kept: separate measurements that
agree. ``n_units`` is the number of units left (the number of samples without ``units``).

Degenerate input (fewer than 2 samples in either class, or every feature constant over the
pooled samples) gives NaN metrics and never raises.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score
from threadpoolctl import threadpool_limits

from cotaudit.bootstrap import UnitSampler, distinct_rows, percentile_interval

N_INIT = 4
"""k-means++ restarts per clustering (fixed; each restart is seeded from ``seed``)."""

DEFAULT_PREFIX = "cluster"
"""Key stem of the cluster metrics; ``metrics()`` documents how a prefix names keys."""

_KEY_RE = re.compile(r"^[A-Za-z0-9_/.-]+$")
_CLUSTER_RATES = (
    "f1",
    "precision",
    "recall",
    "f1_ci_low",
    "f1_ci_high",
    "f1_optimistic",
    "f1_chance",
    "ari",
)
_CLUSTER_KEYS = _CLUSTER_RATES + ("n_positive", "n_negative")
_THRESHOLD_KEYS = ("f1", "precision", "recall")
_TAIL_KEYS = ("n_units",)


def metric_keys(prefix: str = DEFAULT_PREFIX) -> list[str]:
    """The keys ``ClusterF1Result.metrics(prefix)`` returns, in order.

    Cluster keys are ``{prefix}_{name}``. The threshold baseline's keys are ``threshold_{name}``
    under the default prefix ``"cluster"`` and ``{prefix}_threshold_{name}`` under any other, so
    two metrics with different prefixes on one scorer never collide. Last comes
    ``{prefix}_n_units`` (units the interval resampled).
    """
    if not _KEY_RE.match(prefix):
        raise ValueError(f"prefix {prefix!r} must match [A-Za-z0-9_/.-]+")
    base = "threshold" if prefix == DEFAULT_PREFIX else f"{prefix}_threshold"
    return (
        [f"{prefix}_{k}" for k in _CLUSTER_KEYS]
        + [f"{base}_{k}" for k in _THRESHOLD_KEYS]
        + [f"{prefix}_{k}" for k in _TAIL_KEYS]
    )


F1_TIE = (
    "the two clusters tie on the direction-weighted sum of their centroids, so the declared "
    "directions do not say which cluster is the positive one"
)
"""Why the F1 of a clustering that is not degenerate is NaN (step 4)."""


def why_f1_undefined(f1: float, degenerate: str | None) -> str | None:
    """Why a clustering's F1 is NaN: its degenerate input (fewer than 2 samples in a class,
    every feature constant), else the tie of step 4 (:data:`F1_TIE`); None when F1 is a
    number."""
    if degenerate:
        return degenerate
    return F1_TIE if math.isnan(f1) else None


@dataclass(frozen=True, eq=False)
class ClusterF1Result:
    """Outcome of :func:`cluster_f1`; see the module docstring for every definition.

    Rates are NaN when undefined (degenerate input, an empty denominator, or a tie between the
    clusters' direction-weighted sums). Per-sample arrays are in input order; the two cluster
    rows of ``centroids`` are (positive cluster, negative cluster), in raw feature units.
    """

    precision: float
    recall: float
    f1: float
    f1_ci_low: float
    f1_ci_high: float
    f1_optimistic: float
    f1_chance: float
    ari: float
    threshold_precision: float
    threshold_recall: float
    threshold_f1: float
    threshold: float
    """Threshold of the baseline rule, in direction-oriented units ``dir_p * x_p``."""
    n_positive: int
    n_negative: int
    n_boot: int
    n_boot_valid: int
    n_units: int
    """Independent units the interval resampled (after collapsing duplicates)."""
    n_collapsed: int
    """Samples dropped as byte-identical duplicates within their unit."""
    unit: str
    """What a unit is (``"sample"`` when no units were given)."""
    confidence: float
    positive_class: str
    feature_names: tuple[str, ...]
    directions: tuple[int, ...]
    primary: str
    sample_ids: tuple[Any, ...]
    is_positive: NDArray[np.bool_]
    in_positive_cluster: NDArray[np.bool_] | None
    """Per sample: assigned to the positive cluster (None if degenerate or tied)."""
    distance: NDArray[np.float64] | None
    """Per sample: z-space distance to its own cluster's centroid (None if degenerate/tied)."""
    centroids: NDArray[np.float64] | None
    std_diff: NDArray[np.float64] | None
    """Per feature: standardised centroid difference, positive minus negative cluster."""
    degenerate: str | None
    """Why the metrics are NaN, or None."""

    def why_undefined(self) -> str | None:
        """Why the F1 is NaN (:func:`why_f1_undefined`), or None when it is defined."""
        return why_f1_undefined(self.f1, self.degenerate)

    def metrics(self, prefix: str = DEFAULT_PREFIX) -> dict[str, float]:
        """Flat metrics dict; keys as in :func:`metric_keys`."""
        values = [
            self.f1,
            self.precision,
            self.recall,
            self.f1_ci_low,
            self.f1_ci_high,
            self.f1_optimistic,
            self.f1_chance,
            self.ari,
            float(self.n_positive),
            float(self.n_negative),
            self.threshold_f1,
            self.threshold_precision,
            self.threshold_recall,
            float(self.n_units),
        ]
        return dict(zip(metric_keys(prefix), (float(v) for v in values), strict=True))

    def contrast(self, n_nearest: int = 3) -> dict[str, Any]:
        """JSON-able description of the two clusters (NaN written as None).

        ``clusters.positive`` / ``clusters.negative``: size, class make-up, the ids of the
        ``n_nearest`` samples nearest the centroid (nearest first) and the per-feature means.
        ``feature_ranking``: features by decreasing ``|std_diff|``, each with its declared
        direction and whether the observed difference agrees with it.
        """
        clusters: dict[str, Any] | None = None
        ranking: list[dict[str, Any]] | None = None
        if (
            self.in_positive_cluster is not None
            and self.distance is not None
            and self.centroids is not None
            and self.std_diff is not None
        ):
            clusters = {}
            for row, (name, member) in enumerate(
                (("positive", self.in_positive_cluster), ("negative", ~self.in_positive_cluster))
            ):
                idx = np.flatnonzero(member)
                nearest = idx[np.argsort(self.distance[idx], kind="stable")[:n_nearest]]
                clusters[name] = {
                    "size": int(idx.size),
                    "n_positive_class": int(self.is_positive[idx].sum()),
                    "n_negative_class": int((~self.is_positive[idx]).sum()),
                    "nearest_ids": [jsonable_id(self.sample_ids[i]) for i in nearest],
                    "feature_means": {
                        f: _none_if_nan(self.centroids[row, j])
                        for j, f in enumerate(self.feature_names)
                    },
                }
            order = np.argsort(-np.abs(self.std_diff), kind="stable")
            ranking = [
                {
                    "feature": self.feature_names[j],
                    "std_diff": float(self.std_diff[j]),
                    "declared_direction": self.directions[j],
                    "agrees_with_direction": bool(self.std_diff[j] * self.directions[j] > 0),
                }
                for j in order
            ]
        return {
            "positive_class": self.positive_class,
            "n_positive": self.n_positive,
            "n_negative": self.n_negative,
            "features": list(self.feature_names),
            "directions": dict(zip(self.feature_names, self.directions, strict=True)),
            "degenerate": self.degenerate,
            "clusters": clusters,
            "feature_ranking": ranking,
            "threshold_rule": {
                "feature": self.primary,
                "direction": self.directions[self.feature_names.index(self.primary)],
                "threshold": _none_if_nan(self.threshold),
            },
            "bootstrap": {
                "n_boot": self.n_boot,
                "n_valid": self.n_boot_valid,
                "confidence": self.confidence,
                "unit": self.unit,
                "n_units": self.n_units,
                "n_collapsed": self.n_collapsed,
            },
            "metrics": {k: _none_if_nan(v) for k, v in self.metrics().items()},
        }


def cluster_f1(
    features: ArrayLike,
    labels: Sequence[Hashable],
    positive_class: Hashable,
    directions: Sequence[int],
    *,
    feature_names: Sequence[str] | None = None,
    primary: str | None = None,
    sample_ids: Sequence[Any] | None = None,
    units: Sequence[Hashable] | None = None,
    unit_name: str = "unit",
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> ClusterF1Result:
    """Contrastive cluster F1 of ``features`` against ``labels`` (see the module docstring).

    Args:
        features: n x d finite values (a length-n vector is one feature).
        labels: n class labels; ``== positive_class`` is positive, anything else negative.
        positive_class: the suspicious class.
        directions: d declared directions, each +1 or -1.
        feature_names: d names (default ``f0, f1, ...``).
        primary: feature for the threshold baseline (default: the first feature).
        sample_ids: n ids reported in the contrast (default ``0 .. n-1``).
        units: n labels of the independent unit of each sample (problem pair, scenario); the
            interval resamples units and duplicates within a unit are collapsed. None: every
            sample is its own unit.
        unit_name: what a unit is, for the contrast (e.g. ``"pair_id"``).
        n_boot: bootstrap resamples for the F1 interval (0: no interval, NaN bounds).
        confidence: interval coverage.
        seed: seeds both KMeans and the bootstrap.

    Raises:
        ValueError: for inconsistent shapes, a direction other than +1/-1, an unknown
            ``primary``, non-finite features, ``n_boot < 0`` or ``confidence`` outside (0, 1).
            Degenerate data (too few samples, constant features) does not raise.
    """
    X = np.asarray(features, dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2:
        raise ValueError(f"features must be n x d, got shape {X.shape}")
    n, d = X.shape
    if d == 0:
        raise ValueError("features must have at least one column")
    if len(labels) != n:
        raise ValueError(f"{len(labels)} labels for {n} samples")
    dirs = np.asarray(directions, dtype=float)
    if dirs.shape != (d,) or not np.all(np.isin(dirs, (-1.0, 1.0))):
        raise ValueError(f"directions must be {d} values of +1 or -1, got {list(directions)}")
    names = tuple(feature_names) if feature_names is not None else tuple(f"f{j}" for j in range(d))
    if len(names) != d:
        raise ValueError(f"{len(names)} feature names for {d} features")
    primary = names[0] if primary is None else primary
    if primary not in names:
        raise ValueError(f"primary feature {primary!r} not among {list(names)}")
    ids = tuple(sample_ids) if sample_ids is not None else tuple(range(n))
    if len(ids) != n:
        raise ValueError(f"{len(ids)} sample ids for {n} samples")
    if not np.all(np.isfinite(X)):
        raise ValueError("features must be finite")
    if n_boot < 0:
        raise ValueError(f"n_boot must be >= 0, got {n_boot}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")

    y = np.fromiter((lab == positive_class for lab in labels), dtype=bool, count=n)
    if units is None:
        unit_of: list[Hashable] = list(range(n))
        unit_name = "sample"
    else:
        if len(units) != n:
            raise ValueError(f"{len(units)} units for {n} samples")
        unit_of = list(units)
    keep = distinct_rows(unit_of, X, y)
    n_collapsed = int(n - keep.sum())
    if n_collapsed:
        X, y = X[keep], y[keep]
        ids = tuple(i for i, k in zip(ids, keep, strict=True) if k)
        unit_of = [u for u, k in zip(unit_of, keep, strict=True) if k]
        n = len(unit_of)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    p = names.index(primary)
    nan = math.nan
    common: dict[str, Any] = dict(
        n_positive=n_pos,
        n_negative=n_neg,
        n_boot=n_boot,
        n_units=len(set(unit_of)),
        n_collapsed=n_collapsed,
        unit=unit_name,
        confidence=confidence,
        positive_class=str(positive_class),
        feature_names=names,
        directions=tuple(int(v) for v in dirs),
        primary=primary,
        sample_ids=ids,
        is_positive=y,
    )

    degenerate = None
    if min(n_pos, n_neg) < 2:
        degenerate = f"need >= 2 samples per class, got {n_pos} positive and {n_neg} negative"
    else:
        Z, varying = _standardise(X)
        if not varying.any():
            degenerate = "every feature is constant over the pooled samples"
    if degenerate is not None:
        nan_fields: dict[str, Any] = dict.fromkeys(
            _CLUSTER_RATES + tuple(f"threshold_{k}" for k in _THRESHOLD_KEYS) + ("threshold",),
            nan,
        )
        return ClusterF1Result(
            **common,
            **nan_fields,
            n_boot_valid=0,
            in_positive_cluster=None,
            distance=None,
            centroids=None,
            std_diff=None,
            degenerate=degenerate,
        )

    # threshold baseline on the primary feature
    oriented = dirs[p] * X[:, p]
    threshold = float(oriented[~y].mean())
    t_prec, t_rec, t_f1 = _prf(oriented > threshold, y)

    # One thread: the data are small, and OpenMP threads oversubscribe a busy machine badly.
    with threadpool_limits(limits=1):
        labels_k, centers = _two_means(Z, seed)
        boot = _bootstrap_f1(X, y, unit_of, dirs, n_boot, seed)

    # positive cluster by declared direction
    ari = float(adjusted_rand_score(y, labels_k))
    f1_optimistic = max(_prf(labels_k == c, y)[2] for c in (0, 1))
    pos_c = _positive_cluster(centers, dirs)
    if pos_c is None:
        prec = rec = f1 = f1_chance = nan
        in_pos = distance = centroids = std_diff = None
    else:
        in_pos = labels_k == pos_c
        prec, rec, f1 = _prf(in_pos, y)
        pi, q = n_pos / n, float(in_pos.mean())
        f1_chance = 2 * pi * q / (pi + q)
        distance = np.linalg.norm(Z - centers[labels_k], axis=1)
        centroids = np.stack([X[in_pos].mean(axis=0), X[~in_pos].mean(axis=0)])
        std_diff = centers[pos_c] - centers[1 - pos_c]

    ci_low, ci_high, n_valid = percentile_interval(boot, confidence)
    if math.isnan(f1):
        ci_low = ci_high = nan

    return ClusterF1Result(
        **common,
        precision=prec,
        recall=rec,
        f1=f1,
        f1_ci_low=ci_low,
        f1_ci_high=ci_high,
        f1_optimistic=f1_optimistic,
        f1_chance=f1_chance,
        ari=ari,
        threshold_precision=t_prec,
        threshold_recall=t_rec,
        threshold_f1=t_f1,
        threshold=threshold,
        n_boot_valid=n_valid,
        in_positive_cluster=in_pos,
        distance=distance,
        centroids=centroids,
        std_diff=std_diff,
        degenerate=None,
    )


def _standardise(X: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Pooled z-scores and a mask of non-constant features (constant ones become 0)."""
    mean = X.mean(axis=0)
    std = X.std(axis=0)
    varying = std > 1e-12 * np.maximum(1.0, np.abs(mean))
    Z = np.where(varying, (X - mean) / np.where(varying, std, 1.0), 0.0)
    return Z, varying


def _two_means(Z: NDArray[np.float64], seed: int) -> tuple[NDArray[np.int_], NDArray[np.float64]]:
    """Cluster labels (0/1) and the two centroids of deterministic 2-means."""
    km = KMeans(n_clusters=2, init="k-means++", n_init=N_INIT, random_state=seed).fit(Z)
    return km.labels_, km.cluster_centers_


def _positive_cluster(centers: NDArray[np.float64], dirs: NDArray[np.float64]) -> int | None:
    """Index of the centroid with the larger ``sum_j dir_j c_j``; None on a tie."""
    s0, s1 = centers @ dirs
    if math.isclose(s0, s1, rel_tol=1e-9, abs_tol=1e-12):
        return None
    return int(s1 > s0)


def _prf(pred: NDArray[np.bool_], truth: NDArray[np.bool_]) -> tuple[float, float, float]:
    """Precision, recall and F1 = 2TP / (2TP + FP + FN), NaN where a denominator is 0."""
    tp = int(np.sum(pred & truth))
    fp = int(np.sum(pred & ~truth))
    fn = int(np.sum(~pred & truth))
    prec = tp / (tp + fp) if tp + fp else math.nan
    rec = tp / (tp + fn) if tp + fn else math.nan
    f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else math.nan
    return prec, rec, f1


def _bootstrap_f1(
    X: NDArray[np.float64],
    y: NDArray[np.bool_],
    units: Sequence[Hashable],
    dirs: NDArray[np.float64],
    n_boot: int,
    seed: int,
) -> NDArray[np.float64]:
    """F1 of each unit-level resample, units stratified by class make-up."""
    sampler = UnitSampler(units, _class_makeup(units, y))
    return sampler.replicates(_f1_of_rows(X, y, dirs, seed), n_boot, seed)


def _f1_of_rows(
    X: NDArray[np.float64], y: NDArray[np.bool_], dirs: NDArray[np.float64], seed: int
) -> Callable[[NDArray[np.intp]], float]:
    """F1 (steps 2-5) of the samples ``rows`` (repeats allowed): NaN when a class has fewer
    than 2 samples, every feature is constant, or the clusters tie on the direction."""

    def f1(rows: NDArray[np.intp]) -> float:
        n_pos = int(y[rows].sum())
        if min(n_pos, rows.size - n_pos) < 2:
            return math.nan
        Z, varying = _standardise(X[rows])
        if not varying.any():
            return math.nan
        labels_k, centers = _two_means(Z, seed)
        pos_c = _positive_cluster(centers, dirs)
        return math.nan if pos_c is None else _prf(labels_k == pos_c, y[rows])[2]

    return f1


def f1_statistic(
    features: ArrayLike,
    labels: Sequence[Hashable],
    positive_class: Hashable,
    directions: Sequence[int],
    units: Sequence[Hashable],
    seed: int = 0,
) -> tuple[Callable[[NDArray[np.intp]], float], list[Hashable]]:
    """The cluster F1 as a statistic of sample rows, for :mod:`cotaudit.bootstrap`.

    Collapses duplicates within a unit exactly as :func:`cluster_f1` does and returns
    ``(statistic, units of the kept rows)``; ``statistic(all kept rows)`` is ``cluster_f1``'s
    ``f1``. Call it inside ``threadpoolctl.threadpool_limits(1)``: one thread suits such small
    data, and entering the limit costs about as much as one clustering.
    """
    X = np.asarray(features, dtype=float)
    X = X[:, None] if X.ndim == 1 else X
    y = np.fromiter((lab == positive_class for lab in labels), dtype=bool, count=len(labels))
    keep = distinct_rows(units, X, y)
    X, y = X[keep], y[keep]
    f1 = _f1_of_rows(X, y, np.asarray(directions, dtype=float), seed)
    return f1, [u for u, k in zip(units, keep, strict=True) if k]


def _class_makeup(units: Sequence[Hashable], y: NDArray[np.bool_]) -> list[int]:
    """Per sample, its unit's stratum: 0 positive samples only, 1 negative only, 2 both."""
    has: dict[Hashable, set[bool]] = {}
    for u, pos in zip(units, y.tolist(), strict=True):
        has.setdefault(u, set()).add(pos)
    code = {frozenset({True}): 0, frozenset({False}): 1, frozenset({True, False}): 2}
    return [code[frozenset(has[u])] for u in units]


def _none_if_nan(v: float) -> float | None:
    """``v`` as a float, or None for NaN (strict JSON has no NaN)."""
    v = float(v)
    return None if math.isnan(v) else v


def jsonable_id(v: Any) -> Any:
    """A sample id as a JSON scalar (numpy scalars unwrapped, anything else as text)."""
    if isinstance(v, (np.integer, np.floating)):
        return v.item()
    return v if isinstance(v, (str, int, float)) or v is None else str(v)
