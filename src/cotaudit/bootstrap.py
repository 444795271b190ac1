"""Unit-level (cluster) bootstrap: resample the independent units, never the rows.

Rows that share a unit (the two conditions of one problem, the versions of one scenario, the
epochs of one sample) are correlated; a row-level bootstrap treats them as independent and gives
intervals that are too narrow. Here every resample draws *units* with replacement and takes all
rows of each drawn unit.

Definitions
-----------
Rows ``i = 1..n`` carry a unit label ``u_i``; the ``k`` distinct units are numbered in order of
first appearance. Optionally each unit belongs to a stratum (a label constant within the unit).

- **One resample** (:meth:`UnitSampler.draw`): for each stratum ``s`` in sorted order, draw
  ``k_s`` units uniformly with replacement from the ``k_s`` units of ``s`` (numpy
  ``rng.integers(0, k_s, k_s)``; units within a stratum in first-appearance order). Without
  strata there is one stratum of all ``k`` units. Stratifying keeps the number of units per
  stratum fixed (e.g. units holding only positive rows vs only negative rows).
- **Rows of a resample** (:meth:`UnitSampler.rows`): the rows of each drawn unit, in draw
  order, a unit drawn twice contributing its rows twice.
- **Statistic**: any function ``T(rows) -> float`` of a (multi)set of row indices; the
  estimate is ``T(0..n-1)``. Replicates ``T*_b`` that are NaN (undefined on that resample) are
  left out and counted (``n_valid``).
- **Percentile interval** (:func:`percentile_interval`): the ``(1 - c)/2`` and ``(1 + c)/2``
  quantiles (numpy's default linear interpolation) of the valid replicates, ``c`` the
  confidence (default 0.95).
- **Paired difference** (:func:`paired_difference`): two runs ``a`` and ``b`` measured on
  units with the same labels (e.g. two models on the same problems). On the ``m`` units present
  in both, ``D = T_a(shared rows of a) - T_b(shared rows of b)``; each resample draws ``m``
  shared units once and applies the *same* draw to both runs, so what the units have in common
  cancels in ``D*_b``. Each run's own interval resamples all of its own units.

Vectorised forms of the same resampling, for statistics computed on whole arrays at once:

- :func:`resample_indices`: the unit indices of ``n_boot`` resamples of one stratum, one row per
  resample, drawn exactly as :meth:`UnitSampler.draw` draws them (same random stream).
- :func:`multinomial_counts`: how often each unit is drawn in each resample, from
  ``rng.multinomial(k, [1/k]*k)``: the same distribution from another random stream, kept
  because the report_ll logs' intervals were drawn this way
  (:func:`cotaudit.studies.report_ll.stats.summarize`), and ``cotaudit report`` recomputes them.
- :func:`resampled_means`: the mean over all rows of the drawn units,
  ``sum_j w_bj S_j / sum_j w_bj n_j`` (``S_j``, ``n_j`` the sum and row count of unit ``j``,
  ``w_bj`` its count in resample ``b``).
- :func:`percentile_bounds`: the percentile interval of each column of replicates.

Random draws come from ``numpy.random.default_rng(seed)``: deterministic for fixed inputs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

Statistic = Callable[[NDArray[np.intp]], float]
"""A statistic of a resample, given as the row indices it holds (repeats allowed)."""


class UnitSampler:
    """Resamples units of rows with replacement (see the module docstring).

    Args:
        units: per row, the label of its independent unit (any hashable).
        strata: per row, the label of its unit's stratum (sortable, constant within a unit);
            None: one stratum.

    Raises:
        ValueError: no rows, ``strata`` of another length, or a unit spanning two strata.
    """

    def __init__(self, units: Sequence[Hashable], strata: Sequence[Hashable] | None = None) -> None:
        if len(units) == 0:
            raise ValueError("a bootstrap needs at least one row")
        index: dict[Hashable, int] = {}
        row_unit = np.fromiter(
            (index.setdefault(u, len(index)) for u in units), dtype=np.intp, count=len(units)
        )
        self.labels: tuple[Hashable, ...] = tuple(index)
        """The unit labels, in first-appearance order (unit j has label ``labels[j]``)."""
        order = np.argsort(row_unit, kind="stable")
        bounds = np.searchsorted(row_unit[order], np.arange(len(index) + 1))
        self._unit_rows = [order[bounds[j] : bounds[j + 1]] for j in range(len(index))]
        if strata is None:
            self._strata = [np.arange(len(index), dtype=np.intp)]
        else:
            if len(strata) != len(units):
                raise ValueError(f"{len(strata)} strata for {len(units)} rows")
            of_unit: dict[int, Hashable] = {}
            for row, (j, s) in enumerate(zip(row_unit.tolist(), strata, strict=True)):
                if of_unit.setdefault(j, s) != s:
                    raise ValueError(
                        f"unit {self.labels[j]!r} spans strata {of_unit[j]!r} and {s!r} (row {row})"
                    )
            self._strata = [
                np.array([j for j in range(len(index)) if of_unit[j] == s], dtype=np.intp)
                for s in sorted(set(of_unit.values()))  # type: ignore[type-var]
            ]

    @property
    def n_units(self) -> int:
        return len(self.labels)

    @property
    def n_rows(self) -> int:
        return sum(r.size for r in self._unit_rows)

    def draw(self, rng: np.random.Generator) -> NDArray[np.intp]:
        """One resample: the drawn unit indices, stratum by stratum."""
        return np.concatenate([s[rng.integers(0, s.size, s.size)] for s in self._strata])

    def rows(self, units: ArrayLike) -> NDArray[np.intp]:
        """Row indices of ``units`` (unit indices, repeats allowed), in that order."""
        return np.concatenate([self._unit_rows[j] for j in np.asarray(units, dtype=np.intp)])

    def replicates(self, statistic: Statistic, n_boot: int, seed: int = 0) -> NDArray[np.float64]:
        """``T*_b`` for ``b = 1..n_boot`` (NaN where ``statistic`` is NaN)."""
        rng = np.random.default_rng(seed)
        return np.array(
            [float(statistic(self.rows(self.draw(rng)))) for _ in range(n_boot)], dtype=float
        )


@dataclass(frozen=True)
class Interval:
    """A statistic's estimate and its percentile bootstrap interval over ``n_units`` units.

    ``low``/``high`` are NaN when no resample was drawn or none was valid, or when the
    estimate itself is NaN.
    """

    estimate: float
    low: float
    high: float
    n_units: int
    n_boot: int
    n_valid: int
    confidence: float


def percentile_interval(
    replicates: ArrayLike, confidence: float = 0.95
) -> tuple[float, float, int]:
    """``(low, high, n_valid)``: the percentile interval of the non-NaN ``replicates``."""
    _check_confidence(confidence)
    values = np.asarray(replicates, dtype=float)
    valid = values[~np.isnan(values)]
    if valid.size == 0:
        return math.nan, math.nan, 0
    low, high = percentile_bounds(valid, confidence)
    return float(low), float(high), int(valid.size)


def percentile_bounds(
    replicates: ArrayLike, confidence: float = 0.95, axis: int = 0
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The ``(1 - c)/2`` and ``(1 + c)/2`` quantiles of ``replicates`` along ``axis`` (numpy's
    linear interpolation); a NaN replicate makes its column's bounds NaN (drop NaN first, as
    :func:`percentile_interval` does, where a NaN means "undefined on that resample")."""
    _check_confidence(confidence)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(np.asarray(replicates, dtype=float), [alpha, 1 - alpha], axis=axis)
    return low, high


RESAMPLE_CHUNK_CELLS = 1 << 22
""":func:`resample_indices` yields about this many indices at a time (bounds memory; the draws
are sequential, so chunking does not change them)."""


def resample_indices(
    n_units: int, n_boot: int, rng: np.random.Generator
) -> Iterator[NDArray[np.intp]]:
    """Unit indices of ``n_boot`` resamples of ``n_units`` units, one row per resample, in
    chunks of rows: row ``b`` is ``rng.integers(0, n_units, n_units)``, the draw of
    :meth:`UnitSampler.draw` for one stratum."""
    rows_per_chunk = max(1, RESAMPLE_CHUNK_CELLS // max(1, n_units))
    for start in range(0, n_boot, rows_per_chunk):
        rows = min(rows_per_chunk, n_boot - start)
        yield rng.integers(0, n_units, size=(rows, n_units))


def multinomial_counts(n_units: int, n_boot: int, rng: np.random.Generator) -> NDArray[np.int_]:
    """``(n_boot, n_units)`` counts: how often each unit is drawn in each resample of
    ``n_units`` draws with replacement, from ``rng.multinomial`` (see the module docstring)."""
    return rng.multinomial(n_units, np.full(n_units, 1.0 / n_units), size=n_boot)


def resampled_means(sums: ArrayLike, sizes: ArrayLike, counts: ArrayLike) -> NDArray[np.float64]:
    """Per resample, the mean over all rows of the drawn units:
    ``(counts @ sums) / (counts @ sizes)``, for ``sums`` of shape ``(k,)`` or ``(k, q)`` (one
    column per quantity), ``sizes`` the ``k`` units' row counts, ``counts`` ``(n_boot, k)``."""
    counts = np.asarray(counts)
    sums = np.asarray(sums, dtype=float)
    total = counts @ np.asarray(sizes, dtype=float)
    return (counts @ sums) / (total[:, None] if sums.ndim == 2 else total)


def bootstrap_ci(
    statistic: Statistic,
    units: Sequence[Hashable],
    *,
    strata: Sequence[Hashable] | None = None,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Interval:
    """Estimate ``T(all rows)`` and its unit-level percentile bootstrap interval.

    ``units`` (and ``strata``) label the rows ``0..n-1`` that ``statistic`` indexes.
    """
    if n_boot < 0:
        raise ValueError(f"n_boot must be >= 0, got {n_boot}")
    _check_confidence(confidence)
    sampler = UnitSampler(units, strata)
    estimate = float(statistic(np.arange(sampler.n_rows, dtype=np.intp)))
    return _interval(
        estimate, sampler.replicates(statistic, n_boot, seed), sampler.n_units, n_boot, confidence
    )


def paired_difference(
    statistic_a: Statistic,
    units_a: Sequence[Hashable],
    statistic_b: Statistic,
    units_b: Sequence[Hashable],
    *,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Interval:
    """``D = T_a(shared rows of a) - T_b(shared rows of b)`` and its paired interval.

    ``statistic_a`` indexes the rows labelled by ``units_a``, ``statistic_b`` those of
    ``units_b``; units are matched by label, and each resample applies one draw of the shared
    units to both runs. ``n_units`` is the number of shared units; with none, all is NaN.
    """
    if n_boot < 0:
        raise ValueError(f"n_boot must be >= 0, got {n_boot}")
    _check_confidence(confidence)
    in_b = set(units_b)
    shared = [u for u in dict.fromkeys(units_a) if u in in_b]
    if not shared:
        nan = math.nan
        return Interval(nan, nan, nan, 0, n_boot, 0, confidence)
    sample_a, rows_a = _restricted(units_a, shared)
    sample_b, rows_b = _restricted(units_b, shared)
    in_sample_b = {u: j for j, u in enumerate(sample_b.labels)}
    to_b = np.array([in_sample_b[u] for u in sample_a.labels], dtype=np.intp)

    def diff(units: NDArray[np.intp]) -> float:
        return statistic_a(rows_a[sample_a.rows(units)]) - statistic_b(
            rows_b[sample_b.rows(to_b[units])]
        )

    rng = np.random.default_rng(seed)
    estimate = statistic_a(rows_a) - statistic_b(rows_b)
    boot = np.array([diff(sample_a.draw(rng)) for _ in range(n_boot)], dtype=float)
    return _interval(float(estimate), boot, len(shared), n_boot, confidence)


def distinct_rows(units: Sequence[Hashable], *columns: ArrayLike) -> NDArray[np.bool_]:
    """Mask keeping the first of each group of rows that are byte-identical *within a unit*.

    Two rows are duplicates when they have the same unit and equal bytes in every column (e.g.
    the feature vector and the class label): the same measurement counted twice. Equal rows of
    different units are kept: they are separate measurements that happen to agree.
    """
    arrays = [np.asarray(c) for c in columns]
    for c in arrays:
        if len(c) != len(units):
            raise ValueError(f"a column of {len(c)} rows for {len(units)} units")
    seen: set[tuple[Hashable, ...]] = set()
    keep = np.zeros(len(units), dtype=bool)
    for i, u in enumerate(units):
        key = (u, *(np.ascontiguousarray(c[i]).tobytes() for c in arrays))
        if key not in seen:
            seen.add(key)
            keep[i] = True
    return keep


def _restricted(
    units: Sequence[Hashable], shared: Sequence[Hashable]
) -> tuple[UnitSampler, NDArray[np.intp]]:
    """A sampler over the rows of the ``shared`` units (kept in their original order) and
    those rows' indices among ``units``."""
    keep = set(shared)
    rows = np.array([i for i, u in enumerate(units) if u in keep], dtype=np.intp)
    return UnitSampler([units[i] for i in rows]), rows


def _interval(
    estimate: float, boot: NDArray[np.float64], n_units: int, n_boot: int, confidence: float
) -> Interval:
    low, high, n_valid = percentile_interval(boot, confidence)
    if math.isnan(estimate):
        low = high = math.nan
    return Interval(estimate, low, high, n_units, n_boot, n_valid, confidence)


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
