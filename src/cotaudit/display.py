"""Text shapes the log viewer and the terminal show: exact ratios, aligned blocks, sparklines,
and the curves' charts.

Pure helpers, no Inspect imports. The log viewer renders a score explanation as Markdown, but a
Markdown table there runs its columns together, so tables are fenced monospace blocks
(:func:`aligned_block`), which read the same in a terminal. A curve is a chart, a PNG data-URI
image (:mod:`cotaudit.chart`: the viewer shows raster data URIs only; inline SVG and SVG data URIs
show as text), then its block and a one-line sparkline (:func:`sparkline`); a sample-table cell
holds a sparkline of at most :data:`CELL_SPARK_CHARS` characters (:func:`cell_sparkline`).
Text a model or a fixture wrote goes into Markdown through :func:`md_text`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from fractions import Fraction

from cotaudit.chart import BLUE, GREY, SERIES_COLORS, Point, Series, line_chart, markdown_image

SELFCOMMIT_VIEWER_FIELDS = ("condition", "pair", "a_final", "gold", "correct", "c_t")
"""Keys the selfcommit scorer adds to its value for the viewer's sample table (after the
primary summary): condition, pair, a_final and gold as text, correctness, the c(t) sparkline.
No statistic reads them."""
TRACE_PRIMARY = "delta_context"
"""trace_tutor's primary per-sample score: AUC key visible - AUC key masked (None for
question-only)."""
TRACE_VIEWER_FIELDS = ("condition", "pair", "final_answer", "gold", "p_visible",
                       "p_masked", "correct")
"""Keys the trace_tutor scorer adds to its value for the viewer (``correct`` was already there)."""
REPORT_LL_PRIMARY = "did"
REPORT_LL_VIEWER_FIELDS = ("scenario", "register", "rendering", "richness", "family")
"""Keys the report_ll scorer adds to its value for the viewer."""

SPARK_LEVELS = "▁▂▃▄▅▆▇█"
"""Eight block heights, lowest first: ``▁`` is the bottom of the range, ``█`` its top."""

MISSING = "·"
"""Sparkline character (and table cell) of a missing value (None or NaN)."""

CELL_SPARK_CHARS = 8
"""Most characters of a sample-table sparkline: the viewer sizes a column by its label (at most
120 px) and cuts what does not fit; 8 block characters fit the c(t) and p(f) columns."""

MD_SYNTAX = frozenset("\\`*_{}[]()#+-.!|~$")
"""Characters :func:`md_text` escapes: Markdown syntax, and ``$`` (the viewer renders TeX)."""


def ratio(numerator: int | Fraction, denominator: int) -> float:
    """numerator / denominator as the double nearest the exact rational (so 1/5 is ``0.2``).

    Summaries of fractions of k are computed in integers and divided once here, instead of
    subtracting or averaging floats (``1.0 - 0.8`` is ``0.19999999999999996``).
    """
    if denominator == 0:
        raise ZeroDivisionError("ratio: denominator is 0")
    return float(Fraction(numerator) / denominator)


def mean_ratio(numerators: Sequence[int], denominator: int) -> float:
    """mean_i (numerators[i] / denominator), exactly: sum(numerators) / (n * denominator)."""
    if not numerators:
        return math.nan
    return ratio(sum(numerators), denominator * len(numerators))


def _missing(v: float | None) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def sparkline(values: Sequence[float | None], lo: float = 0.0, hi: float = 1.0) -> str:
    """One character per value: level = round((v - lo) / (hi - lo) * 7) of ``▁▂▃▄▅▆▇█``
    (values outside [lo, hi] are clipped; None or NaN is ``·``)."""
    if not hi > lo:
        raise ValueError(f"sparkline: need hi > lo, got lo={lo}, hi={hi}")
    top = len(SPARK_LEVELS) - 1
    out = []
    for v in values:
        if _missing(v):
            out.append(MISSING)
            continue
        level = round((min(max(float(v), lo), hi) - lo) / (hi - lo) * top)  # type: ignore[arg-type]
        out.append(SPARK_LEVELS[level])
    return "".join(out)


def cell_sparkline(values: Sequence[float | None], width: int = CELL_SPARK_CHARS) -> str:
    """:func:`sparkline` of ``values`` in at most ``width`` characters: with n > width values,
    character i shows the mean of the values i*n//width .. (i+1)*n//width - 1 that are not
    missing (``·`` when all are)."""
    n = len(values)
    if n <= width:
        return sparkline(values)
    means: list[float | None] = []
    for i in range(width):
        part = values[i * n // width:(i + 1) * n // width]
        got = [float(v) for v in part if not _missing(v)]  # type: ignore[arg-type]
        means.append(math.fsum(got) / len(got) if got else None)
    return sparkline(means)


def fmt_number(v: float | int | None, digits: int = 3) -> str:
    """A short, exact-looking number: integers as such, floats to ``digits`` decimals with
    trailing zeros dropped (``0.2``, ``0.125``, ``1``), None/NaN as ``·``."""
    if _missing(v):
        return MISSING
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return str(v)
    text = f"{float(v):.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def md_text(text: str) -> str:
    """``text`` as literal Markdown on one line: each run of whitespace (newlines too) becomes
    one space and each character of :data:`MD_SYNTAX` is backslash-escaped, so a model's answer
    or a fixture's report shows as written and starts no link, image, emphasis, heading, list,
    code or TeX. ``<``, ``>`` and ``&`` stay: the viewer escapes HTML before it renders."""
    flat = re.sub(r"\s+", " ", text).strip()
    return "".join("\\" + ch if ch in MD_SYNTAX else ch for ch in flat)


def bar(v: float | None, width: int = 10) -> str:
    """A horizontal bar of ``width`` cells: round(v * width) full (``█``), the rest light
    (``░``); v is clipped to [0, 1]; None/NaN is blank."""
    if _missing(v):
        return " " * width
    full = round(min(max(float(v), 0.0), 1.0) * width)  # type: ignore[arg-type]
    return "█" * full + "░" * (width - full)


def aligned_block(
    header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool] | None = None
) -> str:
    """A fenced ``text`` code block: one line per row, each column padded to its widest cell
    (right-aligned where ``right[i]``, else left), columns separated by two spaces. The fence
    is one backtick longer than the longest run of backticks in a cell (3 at least), so no
    cell can close it.

    Monospace and pre-formatted, so it stays aligned in the viewer's Scoring tab and in a
    terminal (a Markdown table there runs its cells together).
    """
    n = len(header)
    if any(len(r) != n for r in rows):
        raise ValueError(f"aligned_block: every row needs {n} cells")
    right = [False] * n if right is None else list(right)
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]

    def line(cells: Sequence[str]) -> str:
        padded = [
            str(c).rjust(w) if r else str(c).ljust(w) for c, w, r in zip(cells, widths, right)
        ]
        return "  ".join(padded).rstrip()

    body = [line(header)] + [line(r) for r in rows]
    cells = [*header, *(c for r in rows for c in r)]
    runs = [len(m) for c in cells for m in re.findall("`+", str(c))]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return f"{fence}text\n" + "\n".join(body) + f"\n{fence}"


def _answers_text(parsed: Sequence[int | None]) -> str:
    """Forced answers of one prefix: ``18`` (one), ``18×3 17×2`` (most common first, 3 at
    most), ``—`` for an unparsed answer."""
    counts: dict[str, int] = {}
    for p in parsed:
        key = "—" if p is None else str(p)
        counts[key] = counts.get(key, 0) + 1
    if len(parsed) == 1:
        return next(iter(counts))
    top = sorted(counts.items(), key=lambda kv: -kv[1])[:3]
    return " ".join(f"{a}×{n}" for a, n in top)


def selfcommit_curve_text(
    positions: Sequence[int],
    cot_length: int,
    matches: Sequence[int],
    k: int,
    imputed: Sequence[bool] | None = None,
    c0: float | None = None,
) -> str:
    """The c(t) curve as an aligned block (t, t/T, c(t) = m/k exactly, a bar; ``*`` marks a
    value imputed by the adaptive schedule) and a sparkline line; the t = 0 probe c0, when
    made, on a line of its own (it is no point of the curve)."""
    imputed = list(imputed) if imputed else [False] * len(positions)
    c = [ratio(m, k) for m in matches]
    rows = [
        [str(t), fmt_number(ratio(t, cot_length) if cot_length else 1.0, 2), fmt_number(v),
         bar(v) + (" *" if imp else "")]
        for t, v, imp in zip(positions, c, imputed)
    ]
    lines = [aligned_block(["t", "t/T", "c(t)", ""], rows, right=[True, True, True, False])]
    if any(imputed):
        lines.append("`*` imputed by the adaptive schedule (not probed)")
    lines.append(f"c(t) {sparkline(c)} over t = {positions[0]}…{positions[-1]} of "
                 f"T = {cot_length} tokens, k = {k}")
    if c0 is not None:
        lines.append(f"c0 (t = 0, not part of the curve) = {fmt_number(c0)}")
    return "\n\n".join(lines)


def trace_curve_text(
    fractions: Sequence[float],
    positions: Sequence[int],
    probes: dict[str, dict[str, Sequence]],
    k: int,
    pass_threshold: float,
) -> str:
    """The p(f) curves as one aligned block: a row per checkpoint (the 0% probe, then each
    fraction f), per probe context p(f) = matches/k exactly and its forced answers (``✓`` when
    p(f) >= the pass threshold); then one sparkline line per context over the fractions f
    (the 0% probe is not part of the curve). ``probes[name]`` holds ``matches`` and ``parsed``
    per checkpoint; ``positions`` has the 0% probe first."""
    names = list(probes)
    header = ["f", "t"]
    for n in names:
        header += [f"p({n})", f"answers ({n})"] if len(names) > 1 else ["p", "answers"]
    rows = []
    for i, (f, t) in enumerate(zip([0.0, *fractions], positions)):
        row = [f"{fmt_number(f * 100, 4)}%", str(t)]
        for n in names:
            p = ratio(probes[n]["matches"][i], k)
            mark = "✓" if p >= pass_threshold else "✗"
            row += [fmt_number(p), f"{mark} {_answers_text(probes[n]['parsed'][i])}"]
        rows.append(row)
    right = [True, True] + [True, False] * len(names)
    lines = [aligned_block(header, rows, right=right)]
    for n in names:
        curve = [ratio(m, k) for m in probes[n]["matches"][1:]]
        label = f"p(f) {n}" if len(names) > 1 else "p(f)"
        lines.append(f"{label} {sparkline(curve)} over f = "
                     f"{fmt_number(fractions[0] * 100, 4)}…{fmt_number(fractions[-1] * 100, 4)}%")
    return "\n\n".join(lines)


def _caption(parts: Sequence[str]) -> str:
    return "; ".join(p for p in parts if p) + "."


def selfcommit_chart(
    positions: Sequence[int],
    cot_length: int,
    matches: Sequence[int],
    k: int,
    imputed: Sequence[bool] | None = None,
    c0: float | None = None,
    theta: float | None = None,
) -> str:
    """c(t) = m/k against t (tokens, 0..T) as a Markdown PNG chart and a caption line: one
    line through the probed positions (a ring marks a value imputed by the adaptive
    schedule), a dashed guide at ``theta``, and c0 (the t = 0 probe, no point of the curve) as
    a grey point at t = 0."""
    c = [ratio(m, k) for m in matches]
    x_max = cot_length or max(positions, default=0) or 1
    rings = frozenset(i for i, imp in enumerate(imputed or ()) if imp)
    ticks = [(0, "0"), *((t, "") for t in positions), (x_max, str(x_max))]
    png = line_chart(
        [Series(list(zip(positions, c)), BLUE, rings=rings)], x_max, ticks, "c(t)", "t",
        guides=[theta] if theta is not None else [],
        points=[Point(0, c0)] if c0 is not None else [],
    )
    caption = _caption([
        f"c(t) = m/k of the forced answers (k = {k}) against t, tokens of the T = {cot_length} "
        "token CoT",
        f"dashed: θ = {theta:g}" if theta is not None else "",
        "rings: imputed by the adaptive schedule, not probed" if rings else "",
        f"grey: c0 = {fmt_number(c0)} at t = 0, not part of the curve" if c0 is not None else "",
    ])
    return f"{markdown_image(png, 'c(t) chart')}\n\n{caption}"


def selfcommit_curve_markdown(
    positions: Sequence[int],
    cot_length: int,
    matches: Sequence[int],
    k: int,
    imputed: Sequence[bool] | None = None,
    c0: float | None = None,
    theta: float | None = None,
) -> str:
    """The c(t) chart (:func:`selfcommit_chart`), then its text (:func:`selfcommit_curve_text`)."""
    return (selfcommit_chart(positions, cot_length, matches, k, imputed, c0, theta) + "\n\n"
            + selfcommit_curve_text(positions, cot_length, matches, k, imputed, c0))


def _context_series(
    x: Sequence[float], curves: Mapping[str, Sequence[float]], zero_probe: bool
) -> tuple[list[Series], list[Point], list[str]]:
    """A series per probe context (the first blue with discs, the second orange, dashed, with
    rings) over ``x``, the zero probe of each (its first value) as a point of its colour at
    x = 0, and each context's legend (``blue: own``)."""
    series, points, legend = [], [], []
    for i, (name, values) in enumerate(curves.items()):
        color, ring = SERIES_COLORS[i % len(SERIES_COLORS)], i % 2 == 1
        curve = list(values[1:] if zero_probe else values)
        series.append(Series(list(zip(x, curve)), color, dashed=ring,
                             rings=frozenset(range(len(curve))) if ring else frozenset()))
        if zero_probe:
            points.append(Point(0, values[0], color, ring=ring))
        legend.append(f"{'orange rings, dashed' if ring else 'blue'}: {name}")
    return series, points, legend


def trace_chart(
    fractions: Sequence[float], probes: Mapping[str, Mapping[str, Sequence]], k: int,
    pass_threshold: float,
) -> str:
    """p(f) = matches/k against f (% of the explanation's tokens) as a Markdown PNG chart and a
    caption line: a line per probe context over the fractions, each context's 0% probe as a
    point at f = 0 joined to nothing (it is no point of the curve), a dashed guide at the pass
    threshold. ``probes[name]["matches"]`` has the 0% probe first."""
    curves = {n: [ratio(m, k) for m in p["matches"]] for n, p in probes.items()}
    x = [f * 100 for f in fractions]
    series, points, legend = _context_series(x, curves, zero_probe=True)
    ticks = [(0.0, "0"), *((f, fmt_number(f, 4)) for f in x)]
    png = line_chart(series, max(x), ticks, "p(f)", "f (%)", guides=[pass_threshold],
                     points=points)
    caption = _caption([
        f"p(f) = matches/k (k = {k}) against f, % of the explanation's tokens",
        *legend,
        "the point at 0% is the 0% probe, not part of the curve",
        f"dashed: pass threshold {pass_threshold:g}",
    ])
    return f"{markdown_image(png, 'p(f) chart')}\n\n{caption}"


def trace_curve_markdown(
    fractions: Sequence[float],
    positions: Sequence[int],
    probes: dict[str, dict[str, Sequence]],
    k: int,
    pass_threshold: float,
) -> str:
    """The p(f) chart (:func:`trace_chart`), then its text (:func:`trace_curve_text`)."""
    return (trace_chart(fractions, probes, k, pass_threshold) + "\n\n"
            + trace_curve_text(fractions, positions, probes, k, pass_threshold))


def probe_curve_text(
    positions: Sequence[int],
    fractions: Sequence[float],
    curves: Mapping[str, Sequence[float]],
    label: str,
    zero_probe: bool,
) -> str:
    """The generic probe's curves as one aligned block: a row per cut (the zero probe, t = 0,
    first when made), t, t/T and each context's value (``label`` = ``p(t)`` or ``c(t)``, at
    most 3 decimals); a line saying the t = 0 row is the zero probe; then one sparkline line
    per context over the cuts after the zero probe. ``curves[name]`` has the zero probe's
    value first when it was made."""
    header = ["t", "t/T", *(f"{label} {n}" for n in curves)]
    cuts = ([(0, 0.0)] if zero_probe else []) + list(zip(positions, fractions))
    rows = [[str(t), fmt_number(f, 2), *(fmt_number(c[i]) for c in curves.values())]
            for i, (t, f) in enumerate(cuts)]
    lines = [aligned_block(header, rows, right=[True] * len(header))]
    if zero_probe:
        lines.append("t = 0: the zero probe (an answer forced before the trace), not part of "
                     "the curve")
    skip = 1 if zero_probe else 0
    lines += [f"{label} {n} {sparkline(list(c)[skip:])}" for n, c in curves.items()]
    return "\n\n".join(lines)


def probe_chart(
    positions: Sequence[int],
    trace_tokens: int,
    curves: Mapping[str, Sequence[float]],
    label: str,
    zero_probe: bool,
    theta: float | None = None,
) -> str:
    """The generic probe's curves against t (tokens, 0..T) as a Markdown PNG chart and a
    caption line: a line per context through the cuts, each context's zero probe as a point at
    t = 0 joined to nothing, a dashed guide at ``theta`` when given."""
    x_max = trace_tokens or max(positions, default=0) or 1
    series, points, legend = _context_series(positions, curves, zero_probe)
    ticks = [(0, "0"), *((t, "") for t in positions), (x_max, str(x_max))]
    png = line_chart(series, x_max, ticks, label, "t",
                     guides=[theta] if theta is not None else [], points=points)
    caption = _caption([
        f"{label} against t, tokens of the T = {trace_tokens} token trace",
        *legend,
        "the point at t = 0 is the zero probe, not part of the curve" if zero_probe else "",
        f"dashed: θ = {theta:g}" if theta is not None else "",
    ])
    return f"{markdown_image(png, f'{label} chart')}\n\n{caption}"
