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
