"""Display helpers: exact ratios, numbers, sparklines, aligned blocks (hand-computed cases)."""

import math
from fractions import Fraction
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cotaudit.display.text import MISSING, SPARK_LEVELS, aligned_block, bar, fmt_number, sparkline
from cotaudit.stats import mean_ratio, ratio


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
    for (a, la), (b, lb) in pairwise(zip(values, levels, strict=True)):
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
    from cotaudit.probing.curves import Curve, lowcommit, range_c, summarize, uncommitted

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
    from cotaudit.studies.selfcommit.display import CurveView, selfcommit_curve_text

    text = selfcommit_curve_text(
        CurveView([20, 40, 60], 60, [1, 2, 2], 2, imputed=[False, True, False], c0=0.5)
    )
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
    from cotaudit.studies.trace_tutor.display import SampledCurves, trace_curve_text

    probes = {
        "visible": {"matches": [0, 1, 1], "parsed": [[17], [18], [18]]},
        "masked": {"matches": [0, 0, 1], "parsed": [[None], [16], [18]]},
    }
    text = trace_curve_text(SampledCurves([0.1, 1.0], [0, 5, 50], probes, 1, 0.5))
    block, vis, mask = text.split("\n\n")
    assert block.splitlines()[1:-1] == [
        "   f   t  p(visible)  answers (visible)  p(masked)  answers (masked)",
        "  0%   0           0  ✗ 17                       0  ✗ —",
        " 10%   5           1  ✓ 18                       0  ✗ 16",
        "100%  50           1  ✓ 18                       1  ✓ 18",
    ]
    assert vis == "p(f) visible ██ over f = 10…100%"
    assert mask == "p(f) masked ▁█ over f = 10…100%"
    one = trace_curve_text(
        SampledCurves(
            [0.1, 1.0],
            [0, 5, 50],
            {"visible": {"matches": [1, 3, 2], "parsed": [[18, 18, 18]] * 2 + [[18, 17, 18]]}},
            3,
            0.5,
        )
    )
    assert "  p  answers" in one and "0.667  ✓ 18×2 17×1" in one


def test_cell_sparkline_caps_the_characters_by_bin_means():
    from cotaudit.display.text import CELL_SPARK_CHARS, cell_sparkline

    assert cell_sparkline([0.0, 1.0]) == sparkline([0.0, 1.0])  # short curves: one per point
    # 11 values in 4 characters: bins [0:2], [2:5], [5:8], [8:11] (i*11//4) with means
    # 0.05, 0.3, 0.6, 0.9 -> levels round(0.35)=0, round(2.1)=2, round(4.2)=4, round(6.3)=6
    assert cell_sparkline([i / 10 for i in range(11)], 4) == "▁▃▅▇"
    assert cell_sparkline([None, None, 1.0, math.nan], 2) == MISSING + "█"
    assert len(cell_sparkline([0.5] * 40)) == CELL_SPARK_CHARS


NASTY = "**18** ![x](http://e.example/i.png) [link](javascript:1) `code` $x^2$ #h\n1. _a_ ~b~ |c|"


def test_md_text_escapes_every_markdown_syntax_character():
    from cotaudit.display.text import md_text

    assert md_text("18") == "18"
    assert md_text("a*b_c") == r"a\*b\_c"
    assert md_text("line one\n\n# two") == r"line one \# two"  # one line: no heading, no list
    assert md_text("x < y & z") == "x < y & z"  # the viewer escapes HTML itself


def test_md_text_renders_as_the_literal_text():
    """Rendered as CommonMark (markdown-it, the parser Inspect's viewer uses), the escaped text
    is one paragraph of plain text equal to the input with its whitespace runs made single
    spaces: no emphasis, link, image, code, heading or list."""
    import html
    import re

    from markdown_it import MarkdownIt

    from cotaudit.display.text import md_text

    out = MarkdownIt("commonmark").render(md_text(NASTY))
    assert out.startswith("<p>") and out.endswith("</p>\n") and out.count("<") == 2, out
    assert html.unescape(out[3:-5]) == re.sub(r"\s+", " ", NASTY)


def test_aligned_block_fence_outlasts_backticks_in_cells():
    block = aligned_block(["a"], [["x```y"]])
    lines = block.splitlines()
    assert lines[0] == "````text" and lines[-1] == "````"  # 3 backticks in a cell: fence of 4
    assert aligned_block(["a"], [["x"]]).startswith("```text\n")


def test_probe_curve_text_by_hand():
    from cotaudit.probing.display import probe_curve_text

    text = probe_curve_text(
        [4, 40], [0.1, 1.0], {"own": [0.0, 0.5, 1.0], "replay": [0, 1, 1]}, "p(t)", zero_probe=True
    )
    block, zero, own, replay = text.split("\n\n")
    assert block.splitlines()[1:-1] == [
        " t  t/T  p(t) own  p(t) replay",
        " 0    0         0            0",
        " 4  0.1       0.5            1",
        "40    1         1            1",
    ]
    assert zero.startswith("t = 0: the zero probe")
    assert own == "p(t) own ▅█" and replay == "p(t) replay ██"  # the curve after the zero probe
    no_zero = probe_curve_text([10], [1.0], {"own": [0.8]}, "c(t)", zero_probe=False)
    assert no_zero.split("\n\n")[0].splitlines()[2] == "10    1       0.8"


# --- charts -------------------------------------------------------------------------------------


def _decode_png(png: bytes) -> tuple[int, int, list[tuple[int, int, int]], list[list[int]]]:
    """(width, height, palette, rows of palette indices) of a 4-bit palette PNG, each chunk's
    CRC checked."""
    import struct
    import zlib

    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(png):
        (n,) = struct.unpack(">I", png[pos : pos + 4])
        kind, data = png[pos + 4 : pos + 8], png[pos + 8 : pos + 8 + n]
        (crc,) = struct.unpack(">I", png[pos + 8 + n : pos + 12 + n])
        assert crc == zlib.crc32(kind + data) & 0xFFFFFFFF, kind
        chunks[kind] = chunks.get(kind, b"") + data
        pos += 12 + n
    w, h, depth, ctype, *_ = struct.unpack(">IIBBBBB", chunks[b"IHDR"])
    assert (depth, ctype) == (4, 3)
    plte = chunks[b"PLTE"]
    palette = [tuple(plte[i : i + 3]) for i in range(0, len(plte), 3)]
    raw = zlib.decompress(chunks[b"IDAT"])
    stride = 1 + (w + 1) // 2
    rows = []
    for y in range(h):
        line = raw[y * stride : (y + 1) * stride]
        assert line[0] == 0  # no filter
        rows.append([v for b in line[1:] for v in (b >> 4, b & 15)][:w])
    return w, h, palette, rows


def _png_of(markdown: str) -> bytes:
    import base64

    return base64.b64decode(markdown.split("data:image/png;base64,", 1)[1].split(")", 1)[0])


def test_selfcommit_chart_pixels_by_hand():
    from cotaudit.display import chart
    from cotaudit.studies.selfcommit.display import CurveView, selfcommit_chart

    md = selfcommit_chart(
        CurveView([20, 40, 60], 60, [1, 0, 2], 2, imputed=[False, True, False], c0=0.5, theta=0.8)
    )
    image, caption = md.split("\n\n")
    assert image.startswith("![c(t) chart](data:image/png;base64,")
    assert caption.startswith("c(t) = m/k of the forced answers (k = 2) against t")
    assert "θ = 0.8" in caption and "imputed" in caption and "c0 = 0.5" in caption
    png = _png_of(md)
    assert len(png) < 2000  # a few hundred bytes of line art, not a photo
    w, h, palette, px = _decode_png(png)
    assert (w, h) == (chart.WIDTH, chart.HEIGHT) == (360, 140)
    assert palette[chart.BLUE] == (31, 119, 180)
    # plot area x 30..346 (t = 0..60), y 120 (c = 0) .. 14 (c = 1):
    # x(t) = 30 + round(t / 60 * 316), y(c) = 120 - round(c * 106)
    assert px[67][135] == chart.BLUE  # t = 20: x 30 + 105.3 -> 135; c = 1/2: y 120 - 53 = 67
    assert px[14][346] == chart.BLUE  # t = 60, c = 1
    # t = 40 (c = 0, imputed): a ring (7 x 7) around x 30 + 210.7 -> 241, y 120: its top
    # row is 3 px above, its corner stays background
    assert px[117][241] == chart.BLUE and px[117][238] == chart.BACKGROUND
    assert px[67][30] == chart.GREY  # c0 = 0.5 at t = 0, a point of its own
    # theta = 0.8 at y 120 - round(84.8) = 35: dashes of 4 pixels on, 3 off from x = 30
    assert [px[35][x] for x in range(31, 37)] == [chart.GUIDE] * 3 + [chart.BACKGROUND] * 3
    assert px[0][w - 1] == chart.BACKGROUND


def test_trace_chart_two_contexts_and_the_0_percent_probe():
    from cotaudit.display import chart
    from cotaudit.studies.trace_tutor.display import SampledCurves, trace_chart

    probes = {"visible": {"matches": [1, 0, 1]}, "masked": {"matches": [0, 0, 1]}}
    md = trace_chart(SampledCurves([0.5, 1.0], [0, 20, 40], probes, 1, 0.5))
    assert "blue: visible" in md and "orange rings, dashed: masked" in md
    _, _, _, px = _decode_png(_png_of(md))
    # f = 50%: x 30 + 158 = 188, both p = 0 (y 120): the blue disc and, around it, the orange
    # ring (its top row 3 px above, x 187..189)
    assert px[120][188] == chart.BLUE and px[117][188] == chart.ORANGE
    # f = 100% (x 346), both p = 1 (y 14)
    assert px[14][346] == chart.BLUE and px[11][346] == chart.ORANGE
    # the 0% probes at f = 0: visible p = 1 (x 30, y 14), masked p = 0 (x 30, y 120) ring
    assert px[14][31] == chart.BLUE and px[117][30] == chart.ORANGE
    # the line joins f = 50% to 100% and never the 0% probe: the blue line at x = 109 (half
    # way from 30 to 188) would be at y = 67 if it were joined
    assert px[67][109] != chart.BLUE


def test_curve_markdown_puts_the_chart_before_the_text():
    from cotaudit.studies.selfcommit.display import (
        CurveView,
        selfcommit_curve_markdown,
        selfcommit_curve_text,
    )

    md = selfcommit_curve_markdown(CurveView([20, 40], 40, [1, 2], 2, theta=0.8))
    text = selfcommit_curve_text(CurveView([20, 40], 40, [1, 2], 2))
    assert md.startswith("![c(t) chart](data:image/png;base64,") and md.endswith(text)


def test_token_medians_print_as_token_counts():
    from cotaudit.report.tables import tokens_cell

    assert tokens_cell(241.0).text == "241"
    assert tokens_cell(240.5).text == "240.5"
    assert tokens_cell(float("nan")).text == tokens_cell(None).text != "nan"
