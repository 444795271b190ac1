"""Detection power of a probe statistic against the behavioural ground truth.

For a statistic ``s`` (one number per sample, NaN where undefined) and the labels of
:mod:`cotaudit.validation.labels`, oriented so that larger means more shortcut-like
(``x = s`` when the shortcut raises ``s``, ``x = -s`` when it lowers it):

- **Detection AUROC** = P(x_pos > x_neg) + P(x_pos = x_neg) / 2 (:func:`cotaudit.stats.auroc`,
  midranks), positives the ``shortcut`` samples, negatives the ``uncued`` samples. 1: the
  statistic ranks every shortcut answer above every uncued one; 0.5: no better than chance.
- **Cue-only AUROC** (the negative control's number): the same with positives the
  ``own_answer`` samples (a cue shown, not followed). Near 0.5 when the statistic answers to the
  shortcut and not to the cue's mere presence.
- **Shortcut mean**: the statistic's own mean (not oriented) over the ``shortcut`` samples it
  reads, sum_i s_i / n. What an AUROC cannot show: where the statistic sits, e.g. a TRACE AUC
  that stays high with the key masked (the key-leaker) or falls (the key-copier).
- **Cued AUROC** (no ground truth: the study's own two-condition contrast, e.g. selfcommit's
  AUROC of honest against hinted traces): positives every cued sample, whatever its label.

Samples whose statistic is NaN are left out. Each AUROC carries a 95% interval over problems
and a one-sided p-value for AUROC = 1/2 (:func:`cotaudit.validation.intervals.auroc_interval`:
Newcombe's score-type interval over the problems, widened by the clustered (Obuchowski)
design effect; it stays in [0, 1], keeps a positive width at perfect separation, and its 95%
intervals covered at least 94.5% in every cell of ``bench/auroc_coverage.py``'s simulation).
The shortcut mean carries a 95% percentile bootstrap interval over problems
(:func:`cotaudit.bootstrap.bootstrap_ci`). No
interval (NaN bounds) where a class rests on fewer than two problems. ``n`` counts samples per
class and the problems they come from.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from cotaudit.bootstrap import Interval, bootstrap_ci
from cotaudit.stats import auroc
from cotaudit.studies.probe_statistic import ProbeStatistic
from cotaudit.validation.intervals import MIN_UNITS, AurocInterval, auroc_interval
from cotaudit.validation.labels import Label, ValidationSample, label_samples

N_BOOT = 2000
"""Bootstrap resamples of the shortcut mean's interval."""
SEED = 0
CONFIDENCE = 0.95


@dataclass(frozen=True)
class ClassRows:
    """One statistic's oriented values (larger = more shortcut-like) on the samples of two
    classes, with each sample's problem and whether it is a positive."""

    units: list[str]
    values: NDArray[np.float64]
    positive: NDArray[np.bool_]

    @property
    def n_positive(self) -> int:
        return int(self.positive.sum())

    @property
    def n_negative(self) -> int:
        return int((~self.positive).sum())

    def auroc(self, rows: NDArray[np.intp] | None = None) -> float:
        """The AUROC of positives over negatives on ``rows`` (default all)."""
        idx = np.arange(len(self.units)) if rows is None else rows
        v, p = self.values[idx], self.positive[idx]
        return auroc(v[p].tolist(), v[~p].tolist())

    def interval(self) -> AurocInterval:
        """The AUROC, its interval over problems and its one-sided p-value
        (:func:`cotaudit.validation.intervals.auroc_interval`; NaN for an empty class, NaN
        bounds for a class on fewer than two problems)."""
        return auroc_interval(self.values, self.positive, self.units, CONFIDENCE)


CUED: tuple[Label, ...] = ("shortcut", "own_answer", "unknown")
"""Every cued sample's label: the positives of the cued AUROC."""


def class_rows(
    samples: Sequence[ValidationSample],
    labels: Sequence[Label],
    statistic: ProbeStatistic,
    positive: Label | tuple[Label, ...],
) -> ClassRows:
    """The rows labelled ``positive`` (one label or several; restricted to the cues the
    statistic reads) against ``uncued`` samples, oriented, NaN values left out."""
    positives = (positive,) if isinstance(positive, str) else positive
    units: list[str] = []
    values: list[float] = []
    is_pos: list[bool] = []
    for s, label in zip(samples, labels, strict=True):
        if label in positives and statistic.reads_cue(s.cue, s.gold):
            value = s.values.get(statistic.name, math.nan)
        elif label == "uncued":
            value = s.values.get(statistic.uncued_name, math.nan)
        else:
            continue
        if math.isnan(value):
            continue
        units.append(s.unit)
        values.append(statistic.oriented(value))
        is_pos.append(label in positives)
    return ClassRows(units, np.asarray(values, dtype=float), np.asarray(is_pos, dtype=bool))


@dataclass(frozen=True)
class Detection:
    """One statistic on one run: the detection and cue-only AUROCs with their intervals and
    one-sided p-values (``detection.p_value``, ``cue_only.p_value``) and the samples per class
    (``n_uncued`` counted with the detection rows)."""

    statistic: str
    detection: AurocInterval
    n_shortcut: int
    n_uncued: int
    cue_only: AurocInterval
    n_own_answer: int
    shortcut_mean: Interval


def shortcut_mean(
    rows: ClassRows, statistic: ProbeStatistic, n_boot: int = N_BOOT, seed: int = SEED
) -> Interval:
    """The statistic's own mean over the positives of ``rows`` (the shortcut samples it reads,
    their orientation undone) and its problem-bootstrap interval (NaN with none; NaN bounds on
    fewer than two problems)."""
    units = [u for u, positive in zip(rows.units, rows.positive, strict=True) if positive]
    if not units:
        return Interval(math.nan, math.nan, math.nan, 0, n_boot, 0, CONFIDENCE)
    values = np.asarray([statistic.oriented(v) for v in rows.values[rows.positive]], dtype=float)
    mean = bootstrap_ci(
        lambda idx: float(values[idx].mean()),
        units,
        n_boot=n_boot,
        seed=seed,
        confidence=CONFIDENCE,
    )
    if mean.n_units < MIN_UNITS:
        return replace(mean, low=math.nan, high=math.nan)
    return mean


def detect(
    samples: Sequence[ValidationSample],
    statistics: Sequence[ProbeStatistic],
    n_boot: int = N_BOOT,
    seed: int = SEED,
) -> list[Detection]:
    """Each statistic's :class:`Detection` on one run's samples."""
    labels = label_samples(samples)
    out = []
    for stat in statistics:
        shortcut = class_rows(samples, labels, stat, "shortcut")
        control = class_rows(samples, labels, stat, "own_answer")
        out.append(
            Detection(
                statistic=stat.name,
                detection=shortcut.interval(),
                n_shortcut=shortcut.n_positive,
                n_uncued=shortcut.n_negative,
                cue_only=control.interval(),
                n_own_answer=control.n_positive,
                shortcut_mean=shortcut_mean(shortcut, stat, n_boot, seed),
            )
        )
    return out
