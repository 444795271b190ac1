"""Uncertainty in `cotaudit report`'s comparisons of runs: problem-level bootstrap intervals.

For a statistic ``T`` (an AUROC, a median TRACE AUC, a cluster F1) of each run:

- **Per run**: ``T`` on all of the run's rows with its 95% percentile bootstrap interval over
  the run's *units* (problems, i.e. ``pair_id``; in report_ll the run's ``-T unit``: bugs by
  default, or projects or scenarios, :meth:`cotaudit.studies.report_ll.stats.ScoredFixture.unit`):
  every resample draws the units with replacement and takes all their rows
  (:func:`cotaudit.bootstrap.bootstrap_ci`).
- **Paired difference** of run ``r`` against the first run (the reference) on the units both
  share: ``T_r(shared) - T_ref(shared)``, each resample drawing the shared units once for both
  runs (:func:`cotaudit.bootstrap.paired_difference`). Absent (a dash) when the runs share
  fewer than 2 units. An interval that excludes 0 is a difference the units support.

Resamples: :data:`N_BOOT` (:data:`CLUSTER_N_BOOT` for a cluster F1, which re-clusters on every
resample), seed :data:`SEED`, confidence :data:`CONFIDENCE`.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from cotaudit.bootstrap import Interval, Statistic, bootstrap_ci, paired_difference
from cotaudit.display.headline import too_few
from cotaudit.report.tables import DASH, Cell, Table, fmt_ci

N_BOOT = 1000
CLUSTER_N_BOOT = 200
"""Resamples for cluster F1 rows: each resample re-runs KMeans, once per run."""
SEED = 0
CONFIDENCE = 0.95
MIN_SHARED = 2
"""Fewest shared units for a paired difference."""


@dataclass(frozen=True)
class UnitRows:
    """One run's rows for a statistic: each row's unit and ``statistic(row indices)``."""

    units: Sequence[Hashable]
    statistic: Statistic


@dataclass(frozen=True)
class Compared:
    """A statistic across runs: each run's interval and its paired difference against the
    first run (None for the first run, a run without rows, or too few shared units)."""

    runs: list[Interval | None]
    diffs: list[Interval | None]


def compare_runs(
    rows: Sequence[UnitRows | None],
    *,
    n_boot: int = N_BOOT,
    seed: int = SEED,
    confidence: float = CONFIDENCE,
) -> Compared:
    """Intervals of each run's statistic and paired differences against ``rows[0]``."""
    with threadpool_limits(limits=1):  # cluster F1 statistics run KMeans per resample
        return _compare_runs(rows, n_boot, seed, confidence)


def interval(
    rows: UnitRows | None,
    *,
    n_boot: int = N_BOOT,
    seed: int = SEED,
    confidence: float = CONFIDENCE,
) -> Interval | None:
    """One run's statistic with its percentile bootstrap interval over units (None: no rows)."""
    if rows is None or not rows.units:
        return None
    return bootstrap_ci(rows.statistic, rows.units, n_boot=n_boot, seed=seed, confidence=confidence)


def _compare_runs(
    rows: Sequence[UnitRows | None], n_boot: int, seed: int, confidence: float
) -> Compared:
    options: dict[str, Any] = dict(n_boot=n_boot, seed=seed, confidence=confidence)
    runs = [interval(r, **options) for r in rows]
    ref = rows[0] if rows else None
    diffs: list[Interval | None] = [None]
    for r in rows[1:]:
        d = None
        if ref is not None and r is not None and ref.units and r.units:
            shared = set(ref.units) & set(r.units)
            if len(shared) >= MIN_SHARED:
                d = paired_difference(r.statistic, r.units, ref.statistic, ref.units, **options)
        diffs.append(d)
    return Compared(runs, diffs)


def add_compared(table: Table, label: str, compared: Compared, reference: str) -> None:
    """Two rows: ``label`` (each run's estimate [CI]) and ``Δ label vs reference`` (paired
    difference [CI] and the number of shared units)."""
    table.add(label, *(interval_cell(i) for i in compared.runs))
    table.add(
        f"Δ {label} vs {reference}",
        Cell(math.nan, "(reference)"),
        *(_diff_cell(d) for d in compared.diffs[1:]),
    )


def note(unit: str, cluster: bool = False) -> str:
    """The table note stating what the brackets and Δ rows are."""
    resamples = f"{N_BOOT} resamples" + (
        f"; {CLUSTER_N_BOOT} for cluster F1, which re-clusters every resample" if cluster else ""
    )
    return (
        f"Rows followed by a Δ row: […] is the {CONFIDENCE:.0%} percentile bootstrap interval "
        f"over {unit}s ({resamples}; "
        f"seed {SEED}): each resample draws whole {unit}s with replacement. Δ rows: run minus "
        f"the first run, paired over the {unit}s both runs share (one draw of shared {unit}s "
        f"for both runs; n = shared {unit}s; a dash when fewer than {MIN_SHARED})."
    )


def interval_text(i: Interval) -> str:
    """``estimate [low, high]`` over ``i.n_units`` units (:func:`~cotaudit.report.tables.fmt_ci`:
    no interval over one unit, "too few" below ten)."""
    return fmt_ci(i.estimate, i.low, i.high, n=i.n_units)


def interval_cell(i: Interval | None) -> Cell:
    """:func:`interval_text` of an interval (a dash for none)."""
    if i is None:
        return Cell(math.nan, DASH)
    return Cell(i.estimate, interval_text(i))


def _diff_cell(d: Interval | None) -> Cell:
    if d is None or math.isnan(d.estimate):
        return Cell(math.nan, DASH)
    sign = "+" if d.estimate > 0 else ""
    text = interval_text(d)
    return Cell(d.estimate, sign + (text if too_few(d.n_units) else f"{text} (n={d.n_units})"))


# --- statistics of the studies' rows --------------------------------------------------------


def auroc_rows(
    rows: Sequence[tuple[Hashable, str, float]], positive: str, negative: str
) -> UnitRows:
    """AUROC = P(x_pos > x_neg) + P(=)/2 (:func:`cotaudit.stats.auroc`) of rows ``(unit,
    class, value)``; rows of other classes are dropped."""
    from cotaudit.stats import auroc

    kept = [r for r in rows if r[1] in (positive, negative)]
    values = np.array([v for _, _, v in kept], dtype=float)
    is_pos = np.array([c == positive for _, c, _ in kept], dtype=bool)

    def statistic(idx: NDArray[np.intp]) -> float:
        return auroc(values[idx][is_pos[idx]], values[idx][~is_pos[idx]])

    return UnitRows([u for u, _, _ in kept], statistic)


def mean_rows(units: Sequence[Hashable], values: Sequence[float]) -> UnitRows:
    """Mean of ``values`` (one per row, its unit in ``units``), NaN values left out (NaN if
    none)."""
    arr = np.asarray(values, dtype=float)

    def statistic(idx: NDArray[np.intp]) -> float:
        v = arr[idx]
        v = v[~np.isnan(v)]
        return float(v.mean()) if v.size else math.nan

    return UnitRows(list(units), statistic)


def median_rows(rows: Sequence[tuple[Hashable, float]]) -> UnitRows:
    """Median of the values of rows ``(unit, value)`` (NaN values left out; NaN if none)."""
    values = np.array([v for _, v in rows], dtype=float)

    def statistic(idx: NDArray[np.intp]) -> float:
        v = values[idx]
        v = v[~np.isnan(v)]
        return float(np.median(v)) if v.size else math.nan

    return UnitRows([u for u, _ in rows], statistic)


def cluster_rows(samples: Sequence[Any], options: Mapping[str, Any], unit_key: str) -> UnitRows:
    """Cluster F1 of the cluster metric (:mod:`cotaudit.cluster.metrics`) with the logged
    ``options`` over ``samples``, units from
    ``sample_metadata[unit_key]`` (whatever unit the logged metric used)."""
    from cotaudit.cluster.scores import ClusterHypothesis, cluster_f1_inputs

    h = ClusterHypothesis.of(options).with_unit(unit_key)
    X, labels, _, units = cluster_f1_inputs(samples, h)
    directions = [h.directions[f] for f in h.features]
    return f1_rows(X, labels, str(h.positive_class), directions, units or [], options)


def f1_rows(
    X: Any,
    labels: Sequence[str],
    positive: str,
    directions: Sequence[int],
    units: Sequence[Hashable],
    options: Mapping[str, Any],
) -> UnitRows:
    """Cluster F1 rows ``X`` (one per point, classes ``labels``) as bootstrap units: the
    statistic recomputes the F1 of the kept units' rows (see :func:`cluster.f1.f1_statistic`)."""
    from cotaudit.cluster.f1 import f1_statistic

    if not units:
        return UnitRows([], _nan_statistic)
    X = np.asarray(X, dtype=float).reshape(len(labels), -1)
    statistic, kept = f1_statistic(
        X, labels, positive, directions, units, seed=int(options.get("seed", 0))
    )
    return UnitRows(kept, statistic)


def _nan_statistic(idx: NDArray[np.intp]) -> float:
    return math.nan


__all__ = [
    "CLUSTER_N_BOOT",
    "CONFIDENCE",
    "Compared",
    "N_BOOT",
    "UnitRows",
    "add_compared",
    "auroc_rows",
    "cluster_rows",
    "compare_runs",
    "f1_rows",
    "interval",
    "interval_cell",
    "mean_rows",
    "median_rows",
    "note",
]
