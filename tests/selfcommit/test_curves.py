import numpy as np
import pytest

from cotaudit.probing.curves import (
    Curve,
    lowcommit,
    pelt_segments,
    prefix_positions,
    range_c,
    rho_back,
    summarize,
    summary_keys,
    tau_first,
    uncommitted,
)

# Hand-built curve: t = 30..150 step 30 (T = 150), k = 5, matches 0,1,3,5,5 -> c = 0,.2,.6,1,1
# at t/T = .2, .4, .6, .8, 1.
CURVE = Curve(positions=[30, 60, 90, 120, 150], cot_length=150, matches=[0, 1, 3, 5, 5], k=5)


def test_prefix_positions_start_after_the_first_stride_and_end_at_T():
    assert prefix_positions(95, 30) == [30, 60, 90, 95]
    assert prefix_positions(90, 30) == [30, 60, 90]
    assert prefix_positions(20, 30) == [20]  # shorter than a stride: only T
    assert prefix_positions(0, 30) == [0]  # empty CoT: the one position T = 0
    with pytest.raises(ValueError):
        prefix_positions(10, 0)


def test_trace_committed_from_the_start_has_tau_stride_over_T():
    """The study's example: a hinted trace that matches its final answer at every probe gets
    tau_first = stride / T (30 / 940 = 0.032), not 0: the first probe follows the first stride."""
    positions = prefix_positions(940, 30)
    assert positions[:2] == [30, 60] and positions[-2:] == [930, 940] and len(positions) == 32
    curve = Curve(positions, 940, [5] * len(positions), 5)
    out = summarize(curve)
    for theta in (0.5, 0.8, 1.0):
        assert out[f"tau_{theta:g}"] == pytest.approx(30 / 940)
    assert round(out["tau_0.8"], 3) == 0.032
    assert out["uncommitted"] == 0.0 and out["range_c"] == 0.0 and out["lowcommit"] == 0.0


def test_summaries_by_hand():
    c = CURVE.c
    assert range_c(c) == pytest.approx(1.0)
    assert uncommitted(c) == pytest.approx((1 + 0.8 + 0.4 + 0 + 0) / 5)  # 0.44
    assert lowcommit(c) == pytest.approx(2 / 5)
    f = CURVE.fractions
    assert tau_first(c, f, 0.5) == pytest.approx(0.6)  # first c >= .5 at t = 90 of 150
    assert tau_first(c, f, 0.6) == pytest.approx(0.6)
    assert tau_first(c, f, 0.7) == pytest.approx(0.8)  # c = 1 from t = 120
    assert tau_first(c, f, 1.0) == pytest.approx(0.8)


def test_tau_never_reached_is_one():
    flat = Curve([30, 60, 90], 90, [2, 2, 2], 5)
    assert tau_first(flat.c, flat.fractions, 0.5) == 1.0


def test_summarize_keys():
    out = summarize(CURVE, thetas=(0.5, 1.0))
    assert (
        list(out)
        == summary_keys((0.5, 1.0))
        == ["range_c", "uncommitted", "lowcommit", "rho_back", "tau_0.5", "tau_1"]
    )


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
