"""ROC curves of a run's probe statistics against the behavioural ground truth.

For a statistic oriented so that larger is more shortcut-like (:mod:`cotaudit.validation.
statistics`), positives the ``shortcut`` samples and negatives the ``uncued`` ones (the rows of
the detection AUROC, :func:`cotaudit.validation.detection.class_rows`), the ROC curve is the
points (FPR(t), TPR(t)) over every threshold t among the values, from the largest down, after
(0, 0):

    TPR(t) = #{positives with x >= t} / #positives,  FPR(t) = #{negatives with x >= t} / #negatives.

Tied values enter together, so a tie between classes is a diagonal segment; the trapezoid area
under the curve is then the midrank AUROC, P(x_pos > x_neg) + P(x_pos = x_neg) / 2
(:func:`cotaudit.stats.auroc`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cotaudit.studies.probe_statistic import ProbeStatistic
from cotaudit.validation.detection import class_rows
from cotaudit.validation.labels import ValidationSample, label_samples


@dataclass(frozen=True)
class RocCurve:
    """One statistic's ROC curve on one run: its name, the points (``fpr[i]``, ``tpr[i]``)
    from (0, 0) to (1, 1), the area under them (the detection AUROC) and the samples per
    class."""

    label: str
    fpr: list[float]
    tpr: list[float]
    auroc: float
    n_positive: int
    n_negative: int


def roc_points(
    positives: Sequence[float], negatives: Sequence[float]
) -> tuple[list[float], list[float]]:
    """The ROC curve's points (FPR, TPR) of ``positives`` against ``negatives`` (larger: more
    positive-like; module docstring), both classes non-empty: scikit-learn's ``roc_curve``
    with every threshold kept."""
    from sklearn.metrics import roc_curve

    pos, neg = np.asarray(positives, dtype=float), np.asarray(negatives, dtype=float)
    if not pos.size or not neg.size:
        raise ValueError("a ROC curve needs a positive and a negative value")
    truth = np.r_[np.ones(pos.size, dtype=bool), np.zeros(neg.size, dtype=bool)]
    fpr, tpr, _ = roc_curve(truth, np.r_[pos, neg], drop_intermediate=False)
    return fpr.tolist(), tpr.tolist()


def area(fpr: Sequence[float], tpr: Sequence[float]) -> float:
    """The trapezoid area under the points (``fpr``, ``tpr``) (scikit-learn's ``auc``)."""
    from sklearn.metrics import auc

    return float(auc(fpr, tpr))


def curve_of(label: str, values: Sequence[float], positive: Sequence[bool]) -> RocCurve | None:
    """The :class:`RocCurve` named ``label`` of oriented ``values`` whose class is
    ``positive``; None when a class is empty."""
    v = np.asarray(values, dtype=float)
    p = np.asarray(positive, dtype=bool)
    if not p.any() or p.all():
        return None
    fpr, tpr = roc_points(v[p].tolist(), v[~p].tolist())
    return RocCurve(label, fpr, tpr, area(fpr, tpr), int(p.sum()), int((~p).sum()))


def roc_curves(
    samples: Sequence[ValidationSample], statistics: Sequence[ProbeStatistic]
) -> list[RocCurve]:
    """Each statistic's detection ROC curve on one run's samples (shortcut against uncued;
    statistics without both classes left out)."""
    labels = label_samples(samples)
    out = []
    for stat in statistics:
        rows = class_rows(samples, labels, stat, "shortcut")
        curve = curve_of(stat.name, rows.values.tolist(), rows.positive.tolist())
        if curve is not None:
            out.append(curve)
    return out
