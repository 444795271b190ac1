"""The checkpoint flag on hand-built rows: Holm's adjustment by hand, the paired permutation
p-value against a brute-force enumeration, the flag on a clear shift and on identical runs,
and the series read in step order whatever order it is given in."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from cotaudit.bootstrap import Interval
from cotaudit.stats import auroc, holm_adjusted
from cotaudit.validation.checkpoints import (
    PairedTest,
    SeriesPoint,
    first_flagged,
    flag_series,
    paired_test,
    permutation_p,
)
from cotaudit.validation.detection import ClassRows

NAN = math.nan


def test_holm_by_hand():
    """Sorted 0.005, 0.01, 0.03, 0.04 (m = 4): 4 * 0.005 = 0.02, 3 * 0.01 = 0.03,
    2 * 0.03 = 0.06, then max(0.06, 1 * 0.04) = 0.06; returned in the input's order."""
    assert holm_adjusted([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_holm_leaves_nan_out_of_the_family_and_caps_at_one():
    adjusted = holm_adjusted([0.02, NAN, 0.6, 0.01])  # m = 3: 0.03, 0.04, max(0.04, 0.6)
    assert math.isnan(adjusted[1])
    assert [adjusted[i] for i in (0, 2, 3)] == pytest.approx([0.04, 0.6, 0.03])
    assert holm_adjusted([0.5, 0.4]) == pytest.approx([0.8, 0.8])
    assert holm_adjusted([0.9, 0.8, 0.7]) == [1.0, 1.0, 1.0]
    assert holm_adjusted([]) == []
    with pytest.raises(ValueError, match="lie in"):
        holm_adjusted([1.5])


def _rows(pairs: dict[str, tuple[float, float]]) -> ClassRows:
    """Per problem one uncued (negative) and one cued (positive) value, in that order."""
    units = [u for u in pairs for _ in (0, 1)]
    values = np.array([v for u in pairs for v in pairs[u]], dtype=float)
    positive = np.array([False, True] * len(pairs), dtype=bool)
    return ClassRows(units, values, positive)


def _brute_force_p(base: ClassRows, checkpoint: ClassRows) -> float:
    """Every swap of a problem's base and checkpoint rows, AUROCs by cotaudit.stats.auroc."""
    problems = list(dict.fromkeys(base.units))

    def split(rows: ClassRows, unit: str) -> list[tuple[float, bool]]:
        return [
            (float(v), bool(p))
            for u, v, p in zip(rows.units, rows.values, rows.positive, strict=True)
            if u == unit
        ]

    def area(rows: list[tuple[float, bool]]) -> float:
        return auroc([v for v, p in rows if p], [v for v, p in rows if not p])

    def diff(swap: tuple[bool, ...]) -> float:
        ck, bs = [], []
        for unit, s in zip(problems, swap, strict=True):
            a, b = split(checkpoint, unit), split(base, unit)
            ck += b if s else a
            bs += a if s else b
        return area(ck) - area(bs)

    observed = diff((False,) * len(problems))
    null = [diff(s) for s in itertools.product((False, True), repeat=len(problems))]
    return sum(abs(d) >= abs(observed) - 1e-9 for d in null) / len(null)


def test_the_permutation_p_equals_a_brute_force_enumeration():
    rng = np.random.default_rng(7)
    for _ in range(3):
        base = _rows({f"p{j}": (rng.normal(), rng.normal() + 1) for j in range(6)})
        checkpoint = _rows({f"p{j}": (rng.normal(), rng.normal()) for j in range(6)})
        d, p, swaps, exact = permutation_p(base, checkpoint)
        assert exact and swaps == 2**6
        assert d == pytest.approx(checkpoint.auroc() - base.auroc())
        assert p == pytest.approx(_brute_force_p(base, checkpoint))


def test_the_flag_fires_on_a_clear_shift_and_not_on_identical_runs():
    base = _rows({f"p{j:02d}": (0.0 + j / 100, 1.0 + j / 100) for j in range(20)})  # AUROC 1
    reversed_ = _rows({f"p{j:02d}": (1.0 + j / 100, 0.0 + j / 100) for j in range(20)})  # 0
    same = paired_test(base, base, n_boot=50)
    shifted = paired_test(base, reversed_, n_boot=50)
    assert same.difference.estimate == 0.0 and same.p_value == 1.0
    assert shifted.difference.estimate == pytest.approx(-1.0)
    assert not shifted.exact and shifted.p_value == pytest.approx(1 / 2001)  # Monte Carlo, +1
    assert shifted.difference.high < 0  # the paired interval excludes 0
    flags = flag_series([SeriesPoint(50, shifted), SeriesPoint(100, same)])
    assert [(f.step, f.flagged, f.family) for f in flags] == [(50, True, 2), (100, False, 2)]
    assert flags[0].p_holm == pytest.approx(2 / 2001)


def test_a_checkpoint_on_fewer_problems_is_compared_on_the_shared_ones():
    base = _rows({f"p{j}": (j / 10, 0.05 + j / 10) for j in range(10)})
    checkpoint = _rows({f"p{j}": (j / 10, 0.05 + j / 10) for j in range(4)})
    d, p, swaps, exact = permutation_p(base, checkpoint)
    assert (swaps, exact) == (16, True)  # 2^4 swaps of the 4 shared problems
    assert d == 0.0 and p == 1.0  # the base on its first 4 problems measures as the checkpoint
    test = paired_test(base, checkpoint, n_boot=20)
    assert test.n_problems == 4
    other = _rows({"q1": (0.0, 1.0)})
    d, p, swaps, _ = permutation_p(base, other)
    assert math.isnan(d) and math.isnan(p) and swaps == 0


def _point(step: int, p: float) -> SeriesPoint:
    nan = Interval(NAN, NAN, NAN, 20, 0, 0, 0.95)
    return SeriesPoint(step, PairedTest(nan, p, 1000, False))


def test_the_series_is_read_in_step_order_whatever_order_it_comes_in():
    """Given steps 200, 50, 150, 100: the flags come back by step, Holm over the three defined
    p-values, and the first flagged step is the smallest flagged one, not the first given."""
    points = [_point(200, 0.001), _point(50, 0.2), _point(150, 0.004), _point(100, NAN)]
    flags = flag_series(points)
    assert [f.step for f in flags] == [50, 100, 150, 200]
    assert [f.family for f in flags] == [3] * 4
    assert [f.flagged for f in flags] == [False, False, True, True]
    assert flags[2].p_holm == pytest.approx(0.008) and flags[3].p_holm == pytest.approx(0.003)
    assert first_flagged(flags) == 150
    assert first_flagged(list(reversed(flags))) == 150
    assert first_flagged(flag_series([_point(100, 0.5)])) is None
