"""Display helpers: exact ratios, numbers, sparklines, aligned blocks (hand-computed cases)."""

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cotaudit.display import (
    MISSING,
    SPARK_LEVELS,
    aligned_block,
    bar,
    fmt_number,
    mean_ratio,
    ratio,
    sparkline,
)


def test_ratio_is_the_nearest_double_of_the_fraction():
    # the float way gives 1.0 - 0.8 = 0.19999999999999996; the integer way gives 0.2
    assert 1.0 - 0.8 != 0.2
    assert ratio(5 - 4, 5) == 0.2
    assert repr(ratio(1, 5)) == "0.2"
    assert ratio(4, 35) == float(Fraction(4, 35))
    assert ratio(Fraction(1, 3), 2) == float(Fraction(1, 6))
    with pytest.raises(ZeroDivisionError):
        ratio(1, 0)


def test_mean_ratio_by_hand():
    # uncommitted of matches 0,1,3,5,5 out of k=5: mean(1 - m/5) = (5+4+2+0+0)/25 = 0.44
    assert mean_ratio([5 - m for m in (0, 1, 3, 5, 5)], 5) == 0.44
    assert math.isnan(mean_ratio([], 5))


@given(st.lists(st.integers(0, 7), min_size=1, max_size=40), st.integers(1, 7))
def test_mean_ratio_equals_the_exact_fraction(ms, k):
    ms = [min(m, k) for m in ms]
    assert mean_ratio(ms, k) == float(Fraction(sum(ms), k * len(ms)))


def test_sparkline_levels_by_hand():
    assert sparkline([0.0, 0.2, 0.6, 1.0, 1.0]) == "▁▂▅██"  # round(.2*7)=1, round(.6*7)=4
    assert sparkline([0.5]) == "▅"  # round(3.5) = 4 (banker's rounding to even)
    assert sparkline([None, math.nan, 0.0]) == MISSING * 2 + "▁"
    assert sparkline([-1.0, 2.0]) == "▁█"  # clipped
    assert sparkline([0.0, 0.5, 1.0], lo=-1.0, hi=1.0) == "▅▆█"  # 3.5->4 (▅); .75*7=5.25->5 (▆)
    assert sparkline([]) == ""
    with pytest.raises(ValueError):
        sparkline([0.5], lo=1.0, hi=1.0)


@given(st.lists(st.floats(0, 1), max_size=30))
def test_sparkline_is_monotone_and_one_char_per_value(values):
    line = sparkline(values)
    assert len(line) == len(values)
    levels = [SPARK_LEVELS.index(ch) for ch in line]
    for (a, la), (b, lb) in zip(zip(values, levels), zip(values[1:], levels[1:])):
        if a <= b:
            assert la <= lb


def test_fmt_number():
    assert fmt_number(0.19999999999999996) == "0.2"
    assert fmt_number(0.125) == "0.125"
    assert fmt_number(1.0) == "1"
    assert fmt_number(4 / 35) == "0.114"
    assert fmt_number(-0.0001) == "0"
    assert fmt_number(7) == "7"
    assert fmt_number(True) == "yes"
    assert fmt_number(None) == MISSING
    assert fmt_number(math.nan) == MISSING
    assert fmt_number(2 / 3, digits=2) == "0.67"


def test_bar():
    assert bar(0.6) == "██████░░░░"
    assert bar(0.0, width=4) == "░░░░"
    assert bar(1.5, width=3) == "███"
    assert bar(None, width=3) == "   "


def test_aligned_block_pads_each_column():
    block = aligned_block(
        ["t", "t/T", "c(t)"],
        [["0", "0", "0.2"], ["30", "0.18", "0.8"], ["165", "1", "1"]],
        right=[True, True, True],
    )
    assert block.splitlines() == [
        "```text",
        "  t   t/T  c(t)",
        "  0     0   0.2",
        " 30  0.18   0.8",
        "165     1     1",
        "```",
    ]
    # the "300.180.80": adjacent cells never touch
    assert "300.18" not in block


def test_aligned_block_left_alignment_and_errors():
    block = aligned_block(["a", "bb"], [["xyz", "1"]])
    assert block.splitlines()[1:3] == ["a    bb", "xyz  1"]
    with pytest.raises(ValueError):
        aligned_block(["a", "b"], [["only one"]])


def test_curve_summaries_are_exact_fractions():
    from cotaudit.curves import Curve, lowcommit, range_c, summarize, uncommitted

    # c = 0.6, 0.8, 0.8, 0.8 (k = 5): the float way gives range 0.20000000000000007
    curve = Curve(positions=[0, 30, 60, 90], cot_length=90, matches=[3, 4, 4, 4], k=5)
    out = summarize(curve, thetas=(0.8,))
    assert out["range_c"] == 0.2 and repr(out["range_c"]) == "0.2"
    assert out["uncommitted"] == 0.25  # (2 + 1 + 1 + 1) / (4 * 5)
    assert out["lowcommit"] == 0.0
    assert out["tau_0.8"] == float(Fraction(30, 90))
    # the same numbers as the float definitions, to rounding
    assert out["range_c"] == pytest.approx(range_c(curve.c))
    assert out["uncommitted"] == pytest.approx(uncommitted(curve.c))
    assert out["lowcommit"] == lowcommit(curve.c)
    half = summarize(Curve([0, 10, 20], 20, [2, 1, 3], 4), thetas=())
    assert half["lowcommit"] == ratio(1, 3)  # only m = 1 has c < 0.5 (m = 2 is c = 0.5)


def test_selfcommit_curve_text_by_hand():
    from cotaudit.display import selfcommit_curve_text

    text = selfcommit_curve_text([20, 40, 60], 60, [1, 2, 2], 2, imputed=[False, True, False],
                                 c0=0.5)
    block, note, spark, c0 = text.split("\n\n")
    assert block.splitlines() == [
        "```text",
        " t   t/T  c(t)",
        "20  0.33   0.5  █████░░░░░",
        "40  0.67     1  ██████████ *",
        "60     1     1  ██████████",
        "```",
    ]
    assert note.startswith("`*` imputed")
    assert spark == "c(t) ▅██ over t = 20…60 of T = 60 tokens, k = 2"
    assert c0 == "c0 (t = 0, not part of the curve) = 0.5"


def test_trace_curve_text_by_hand():
    from cotaudit.display import trace_curve_text

    probes = {
        "visible": {"matches": [0, 1, 1], "parsed": [[17], [18], [18]]},
        "masked": {"matches": [0, 0, 1], "parsed": [[None], [16], [18]]},
    }
    text = trace_curve_text([0.1, 1.0], [0, 5, 50], probes, 1, 0.5)
    block, vis, mask = text.split("\n\n")
    assert block.splitlines()[1:-1] == [
        "   f   t  p(visible)  answers (visible)  p(masked)  answers (masked)",
        "  0%   0           0  ✗ 17                       0  ✗ —",
        " 10%   5           1  ✓ 18                       0  ✗ 16",
        "100%  50           1  ✓ 18                       1  ✓ 18",
    ]
    assert vis == "p(f) visible ██ over f = 10…100%"
    assert mask == "p(f) masked ▁█ over f = 10…100%"
    one = trace_curve_text([0.1, 1.0], [0, 5, 50], {"visible": {
        "matches": [1, 3, 2], "parsed": [[18, 18, 18]] * 2 + [[18, 17, 18]]}}, 3, 0.5)
    assert "  p  answers" in one and "0.667  ✓ 18×2 17×1" in one
