import numpy as np
import pytest

from cotaudit.curves import (
    Curve,
    lowcommit,
    pelt_segments,
    prefix_positions,
    range_c,
    rho_back,
    summarize,
    tau_first,
    uncommitted,
)

# Hand-built curve: t = 0..120 step 30 (T = 120), k = 5, matches 0,1,3,5,5 -> c = 0,.2,.6,1,1
CURVE = Curve(positions=[0, 30, 60, 90, 120], cot_length=120, matches=[0, 1, 3, 5, 5], k=5)


def test_prefix_positions_are_strided_and_end_at_T():
    assert prefix_positions(95, 30) == [0, 30, 60, 90, 95]
    assert prefix_positions(90, 30) == [0, 30, 60, 90]
    assert prefix_positions(0, 30) == [0]
    with pytest.raises(ValueError):
        prefix_positions(10, 0)


def test_summaries_by_hand():
    c = CURVE.c
    assert range_c(c) == pytest.approx(1.0)
    assert uncommitted(c) == pytest.approx((1 + 0.8 + 0.4 + 0 + 0) / 5)  # 0.44
    assert lowcommit(c) == pytest.approx(2 / 5)
    f = CURVE.fractions
    assert tau_first(c, f, 0.5) == pytest.approx(0.5)  # first c >= .5 at t=60
    assert tau_first(c, f, 0.6) == pytest.approx(0.5)
    assert tau_first(c, f, 0.7) == pytest.approx(0.75)
    assert tau_first(c, f, 1.0) == pytest.approx(0.75)


def test_tau_never_reached_is_one():
    flat = Curve([0, 30, 60], 60, [2, 2, 2], 5)
    assert tau_first(flat.c, flat.fractions, 0.5) == 1.0


def test_summarize_keys():
    out = summarize(CURVE, thetas=(0.5, 1.0))
    assert set(out) == {"range_c", "uncommitted", "lowcommit", "rho_back", "tau_0.5", "tau_1"}


def test_pelt_step_down_rho_back():
    # c drops from 1 to 0 after the 4th point; T = 210 tokens.
    positions = [0, 30, 60, 90, 120, 150, 180, 210]
    c = [1, 1, 1, 1, 0, 0, 0, 0]
    assert pelt_segments(c) == [(0, 4), (4, 8)]
    # The second segment plus the point before it (t = 90..210) has negative slope:
    # rho_back = (210 - 90) / 210.
    assert rho_back(c, positions, 210) == pytest.approx(120 / 210)


def test_pelt_step_up_has_no_backtracking():
    positions = [0, 30, 60, 90, 120, 150, 180, 210]
    assert rho_back([0, 0, 0, 0, 1, 1, 1, 1], positions, 210) == 0.0


def test_rho_back_short_or_empty():
    assert rho_back([1.0], [0], 0) == 0.0
    assert rho_back([1.0, 0.0], [0, 10], 10) == pytest.approx(1.0)


def test_empty_cot_fractions_are_one():
    assert np.all(Curve([0], 0, [0], 5).fractions == 1.0)
