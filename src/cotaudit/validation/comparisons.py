"""What the detection table adds to each statistic's AUROC: the probe statistics against the
text baselines, the threshold chosen on other rows, the curves' resolution, and the family of
tests (pure; the runs come from :mod:`cotaudit.validation.table`).

- **Best baseline** of a run: among its baseline statistics (:data:`cotaudit.validation.
  baselines.BASELINES` and the monitor when it ran), the one with the largest detection AUROC
  estimate on that run. For each probe statistic, **AUROC(probe) - AUROC(best baseline)** on the
  same samples (the shortcut samples the probe reads and the uncued ones, both values defined),
  with its paired interval over problems
  (:func:`cotaudit.validation.intervals.paired_auroc_difference`). Picking the best baseline on
  the rows it is compared on favours the baseline, never the probe.
- **Row sets** (:mod:`cotaudit.organisms.rows`): a run is a *selection run* when every row its
  samples read lies in the selection rows (800-999), else an *evaluation run*. A selection run
  of the same study and model is where a threshold is chosen.
- **g-mean^2** of a statistic on an evaluation run: TPR x TNR of "shortcut when x >= h" on its
  shortcut and uncued samples, ``h`` chosen on the same statistic's rows of the selection run
  (:func:`cotaudit.validation.intervals.g_mean_squared`). Without a selection run none is
  computed: a threshold chosen on the evaluation rows would be fitted to them.
- **Cuts per CoT** of a statistic: the median and the minimum, over the samples of its
  detection rows, of the number of distinct cut positions of the curve it summarises
  (:meth:`cotaudit.studies.probe_statistic.ProbeStatistic.cuts_of`: ``n_cuts``, the resampling
  statistics ``n_resample_cuts``, a TRACE AUC before the final cut one fewer). A statistic
  read on some curve of fewer than :data:`MIN_CUTS` cuts is marked: a curve of 3 points has 3
  possible first-crossing positions.
- **Family**: the one-sided detection tests (AUROC > 1/2) of every probe statistic on every
  evaluation run that is not a negative control; their Holm-adjusted p-values
  (:func:`cotaudit.stats.holm_adjusted`) keep the chance of any false detection among them at
  most alpha. **Detected**: Holm-adjusted p < :data:`ALPHA` (0.025, one-sided: with a family of
  one test, the same as the 95% interval's low bound above 1/2) on at least
  :data:`~cotaudit.display.headline.MIN_UNITS` problems per class.
"""

from __future__ import annotations

import math
import statistics as pystats
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from cotaudit.organisms.rows import SELECTION_ROWS
from cotaudit.studies.probe_statistic import ProbeStatistic
from cotaudit.validation.detection import class_rows
from cotaudit.validation.intervals import Difference, GMean, g_mean_squared, paired_auroc_difference
from cotaudit.validation.labels import ValidationSample, label_samples
from cotaudit.validation.statistics import FEW_CUTS

MIN_CUTS = FEW_CUTS
"""A statistic read on a curve of fewer cuts than this is marked."""
ALPHA = 0.025
"""One-sided level of a detection (Holm-adjusted p below it)."""

Role = Literal["evaluation", "selection"]


def role_of(rows: frozenset[int]) -> Role:
    """``selection`` when every row lies in the selection rows (and there is one), else
    ``evaluation``."""
    return "selection" if rows and all(r in SELECTION_ROWS for r in rows) else "evaluation"


@dataclass(frozen=True)
class Cuts:
    """The cuts per CoT of one statistic's detection rows: median, minimum, samples counted."""

    median: float
    minimum: int
    n: int

    @property
    def few(self) -> bool:
        return self.minimum < MIN_CUTS


def cuts_of(samples: Sequence[ValidationSample], statistic: ProbeStatistic) -> Cuts | None:
    """:class:`Cuts` over the shortcut and uncued samples with a value of ``statistic``; None
    where none records its cuts."""
    labels = label_samples(samples)
    counts = []
    for s, label in zip(samples, labels, strict=True):
        if label == "shortcut" and statistic.reads_cue(s.cue, s.gold):
            key = statistic.name
        elif label == "uncued":
            key = statistic.uncued_name
        else:
            continue
        if math.isnan(s.values.get(key, math.nan)):
            continue
        n = statistic.cuts_of(s)
        if n is not None:
            counts.append(n)
    if not counts:
        return None
    return Cuts(float(pystats.median(counts)), min(counts), len(counts))


def paired_values(
    samples: Sequence[ValidationSample], a: ProbeStatistic, b: ProbeStatistic
) -> tuple[list[float], list[float], list[bool], list[str]]:
    """The oriented values of ``a`` and ``b`` on ``a``'s detection rows (the shortcut samples
    ``a`` reads, the uncued samples), whether each is a shortcut sample, and its problem (NaN
    kept: the difference leaves those rows out of both)."""
    labels = label_samples(samples)
    va, vb, positive, units = [], [], [], []
    for s, label in zip(samples, labels, strict=True):
        if label == "shortcut" and a.reads_cue(s.cue, s.gold):
            ka, kb = a.name, b.name
        elif label == "uncued":
            ka, kb = a.uncued_name, b.uncued_name
        else:
            continue
        va.append(a.oriented(s.values.get(ka, math.nan)))
        vb.append(b.oriented(s.values.get(kb, math.nan)))
        positive.append(label == "shortcut")
        units.append(s.unit)
    return va, vb, positive, units


def difference(
    samples: Sequence[ValidationSample],
    probe: ProbeStatistic,
    baseline: ProbeStatistic,
) -> Difference:
    """AUROC(``probe``) - AUROC(``baseline``) on the probe's detection rows, with its paired
    interval over problems."""
    va, vb, positive, units = paired_values(samples, probe, baseline)
    return paired_auroc_difference(va, vb, positive, units)


def g_mean(
    selection: Sequence[ValidationSample],
    evaluation: Sequence[ValidationSample],
    statistic: ProbeStatistic,
) -> GMean:
    """g-mean^2 of ``statistic`` on the ``evaluation`` samples at the threshold chosen on the
    ``selection`` samples (each: shortcut against uncued)."""
    sel = class_rows(selection, label_samples(selection), statistic, "shortcut")
    ev = class_rows(evaluation, label_samples(evaluation), statistic, "shortcut")
    return g_mean_squared(sel.values, sel.positive, ev.values, ev.positive)
