"""Text shapes the log viewer and the terminal show: exact ratios, aligned blocks, sparklines.

Pure helpers, no Inspect imports. The log viewer renders a score explanation as Markdown, but a
Markdown table there runs its columns together and images (data URIs) show as text, so a curve
is drawn as a fenced monospace block (:func:`aligned_block`) and a one-line sparkline
(:func:`sparkline`), which also fits a sample-table cell.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

SELFCOMMIT_VIEWER_FIELDS = ("c_t", "condition", "pair", "a_final", "gold", "correct")
"""Keys the selfcommit scorer adds to its value for the viewer's sample table (after the
primary summary): the c(t) sparkline, condition, pair, a_final and gold as text, correctness.
No statistic reads them."""
TRACE_PRIMARY = "delta_context"
"""trace_tutor's primary per-sample score: AUC key visible - AUC key masked (None for
question-only)."""
TRACE_VIEWER_FIELDS = ("p_visible", "p_masked", "condition", "pair", "final_answer", "gold",
                       "correct")
"""Keys the trace_tutor scorer adds to its value for the viewer (``correct`` was already there)."""
REPORT_LL_PRIMARY = "did"
REPORT_LL_VIEWER_FIELDS = ("scenario", "register", "rendering", "richness", "family")
"""Keys the report_ll scorer adds to its value for the viewer."""

SPARK_LEVELS = "▁▂▃▄▅▆▇█"
"""Eight block heights, lowest first: ``▁`` is the bottom of the range, ``█`` its top."""

MISSING = "·"
"""Sparkline character (and table cell) of a missing value (None or NaN)."""


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
    (right-aligned where ``right[i]``, else left), columns separated by two spaces.

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
    return "```text\n" + "\n".join(body) + "\n```"


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
