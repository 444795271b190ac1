"""Tables: raw values (for tests and comparisons) and their Markdown rendering."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from cotaudit.display.headline import has_interval, too_few
from cotaudit.display.text import report_text

DASH = "—"


def fmt(v: Any, digits: int = 3) -> str:
    """A cell: NaN/None as a dash, integers plainly, floats to ``digits`` decimals, anything
    else as literal text (:func:`~cotaudit.display.text.report_text`: a sample id or condition
    from a log is never markup)."""
    if v is None:
        return DASH
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return DASH
        if math.isinf(v):
            return "∞" if v > 0 else "-∞"
        if v.is_integer() and abs(v) < 1e6 and digits == 0:
            return str(int(v))
        if v != 0 and abs(v) < 0.5 * 10**-digits:  # would print as 0.000: keep 3 figures
            return f"{v:.3g}"
        return f"{v:.{digits}f}"
    return report_text(v)


def fmt_count(v: Any) -> str:
    """A count stored as a float."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return DASH
    return str(int(round(float(v))))


def fmt_ci(mean: float, low: float, high: float, digits: int = 3, n: int | None = None) -> str:
    """``mean [low, high]``; given the number of units ``n``, the interval is left out below
    :data:`~cotaudit.display.headline.MIN_INTERVAL_UNITS` and the headline lines' verdict
    follows below :data:`~cotaudit.display.headline.MIN_UNITS`: ``1.000 (n = 1: too few)``."""
    if any(isinstance(x, float) and math.isnan(x) for x in (low, high)) or not has_interval(n):
        text = fmt(mean, digits)
    else:
        text = f"{fmt(mean, digits)} [{fmt(low, digits)}, {fmt(high, digits)}]"
    if n is not None and too_few(n) and not (isinstance(mean, float) and math.isnan(mean)):
        text += f" (n = {n}: too few)"
    return text


@dataclass
class Cell:
    """A cell: its raw value (what tests compare) and its text."""

    value: Any
    text: str


@dataclass
class Table:
    """A titled table. ``rows`` hold :class:`Cell` s; ``values(row_label)`` gives raw values.
    The title and the column names are text (they may carry a run's label or a condition's
    name): :meth:`to_markdown` writes them literally; a cell's text is written as it is."""

    title: str
    columns: list[str]
    rows: list[list[Cell]] = field(default_factory=list)
    note: str = ""
    align: list[str] | None = None

    def add(self, *cells: Any) -> None:
        """Add a row; each item is a Cell, or a raw value formatted with :func:`fmt`."""
        row = [c if isinstance(c, Cell) else Cell(c, fmt(c)) for c in cells]
        if len(row) != len(self.columns):
            raise ValueError(f"{len(row)} cells for {len(self.columns)} columns in {self.title!r}")
        self.rows.append(row)

    def column(self, name: str) -> list[Any]:
        j = self.columns.index(name)
        return [r[j].value for r in self.rows]

    def row(self, label: Any) -> dict[str, Any]:
        """The row whose first cell's value is ``label``, as {column: raw value}."""
        for r in self.rows:
            if r[0].value == label:
                return {c: cell.value for c, cell in zip(self.columns, r, strict=True)}
        raise KeyError(label)

    def to_markdown(self) -> str:
        align = self.align or ["---"] + ["---:"] * (len(self.columns) - 1)
        lines = [f"**{report_text(self.title)}**", ""] if self.title else []
        if not self.rows:
            lines.append("_(no rows)_")
        else:
            lines.append("| " + " | ".join(report_text(c) for c in self.columns) + " |")
            lines.append("|" + "|".join(align) + "|")
            lines.extend("| " + " | ".join(c.text for c in r) + " |" for r in self.rows)
        if self.note:
            lines += ["", self.note]
        return "\n".join(lines)


def ci_cell(mean: float, low: float, high: float, digits: int = 3, n: int | None = None) -> Cell:
    """A :func:`fmt_ci` cell (``n``: its number of units)."""
    return Cell(float(mean), fmt_ci(mean, low, high, digits, n))


def empty_stratum_cells(n: int) -> list[Cell]:
    """The ``n`` statistic cells of a row whose stratum is empty: ``n = 0`` in the first, the
    rest blank (raw values NaN)."""
    return [Cell(math.nan, "n = 0" if i == 0 else "") for i in range(n)]


def count_cell(v: Any) -> Cell:
    return Cell(v, fmt_count(v))


def tokens_cell(v: Any) -> Cell:
    """A median of token counts: a whole number as an integer ("241"), a half as "240.5"."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return Cell(v, DASH)
    value = float(v)
    return Cell(v, str(int(value)) if value.is_integer() else f"{value:.1f}")
