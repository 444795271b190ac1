"""Text shapes the log viewer and the terminal show: exact ratios, aligned blocks, sparklines,
and the curves' charts.

Pure helpers, no Inspect imports. The log viewer renders a score explanation as Markdown, but a
Markdown table there runs its columns together, so tables are fenced monospace blocks
(:func:`aligned_block`), which read the same in a terminal. A curve is a chart, a PNG data-URI
image (:mod:`cotaudit.display.chart`: the viewer shows raster data URIs only; inline SVG and SVG
data URIs show as text), then its block and a one-line sparkline (:func:`sparkline`); a
sample-table cell holds a sparkline of at most :data:`CELL_SPARK_CHARS` characters
(:func:`cell_sparkline`).

Text a log, a model, a dataset or a fixture wrote is hostile input, escaped for the medium it
goes to, here and nowhere else: a terminal line through :func:`visible` (control characters
shown, not obeyed), the viewer's Markdown through :func:`md_text` (the viewer escapes HTML
itself), ``report.md``, which any Markdown renderer may read with HTML allowed, through
:func:`report_text` (Markdown and HTML) and :func:`md_code` (a code span).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence

SPARK_LEVELS = "▁▂▃▄▅▆▇█"
"""Eight block heights, lowest first: ``▁`` is the bottom of the range, ``█`` its top."""

MISSING = "·"
"""Sparkline character (and table cell) of a missing value (None or NaN)."""

CELL_SPARK_CHARS = 8
"""Most characters of a sample-table sparkline: the viewer sizes a column by its label (at most
120 px) and cuts what does not fit; 8 block characters fit the c(t) and p(f) columns."""

MD_SYNTAX = frozenset("\\`*_{}[]()#+-.!|~$")
"""Characters :func:`md_text` escapes: Markdown syntax, and ``$`` (the viewer renders TeX)."""

HTML_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
"""Characters :func:`report_text` writes as HTML character references: a renderer that allows
HTML (CommonMark does) would otherwise read ``<script>``, ``<iframe>`` or ``&...;`` as markup."""

REPORT_SYNTAX = frozenset("\\`*[]#|$~")
"""Characters :func:`report_text` escapes wherever they stand: they open code, emphasis,
links, images, headings' closing sequences, table cells, TeX or strikethrough inside a line."""

BIDI_CONTROLS = frozenset(
    chr(c) for c in (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
)
"""Bidirectional formatting characters (marks, embeddings, overrides, isolates): they reorder
the text around them, so a line can read otherwise than it is written."""


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
        part = values[i * n // width : (i + 1) * n // width]
        got = [float(v) for v in part if v is not None and not _missing(v)]
        means.append(math.fsum(got) / len(got) if got else None)
    return sparkline(means)


def fmt_number(v: float | int | None, digits: int = 3) -> str:
    """A short, exact-looking number: integers as such, floats to ``digits`` decimals with
    trailing zeros dropped (``0.2``, ``0.125``, ``1``), None/NaN as ``·``."""
    if v is None or _missing(v):
        return MISSING
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return str(v)
    text = f"{float(v):.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def is_control(ch: str) -> bool:
    """Whether ``ch`` is a character a terminal or a page obeys instead of showing: a C0 or C1
    control or DEL (Unicode category Cc: ESC starts colour, cursor, window-title and clipboard
    sequences), a line or paragraph separator (Zl, Zp) or a :data:`BIDI_CONTROLS` character."""
    return unicodedata.category(ch) in ("Cc", "Zl", "Zp") or ch in BIDI_CONTROLS


def visible(text: str) -> str:
    """``text`` with each :func:`is_control` character written as its Python escape (ESC as
    ``\\x1b``, a newline as ``\\n``, U+202E as ``\\u202e``), everything else as it is: what
    a terminal line, or an error message naming a sample id, file or value, shows."""
    return "".join(
        ch.encode("unicode_escape").decode("ascii") if is_control(ch) else ch for ch in text
    )


def _one_line(text: str) -> str:
    """Each run of whitespace (newlines too) as one space, then :func:`visible`."""
    return visible(re.sub(r"\s+", " ", text).strip())


def md_text(text: str) -> str:
    """``text`` as literal Markdown for the log viewer, on one line: each run of whitespace
    (newlines too) becomes one space, control characters show as escapes (:func:`visible`) and
    each character of :data:`MD_SYNTAX` is backslash-escaped, so a model's answer or a
    fixture's report shows as written and starts no link, image, emphasis, heading, list, code
    or TeX. ``<``, ``>`` and ``&`` stay: the viewer escapes HTML before it renders (a character
    reference would show as written). Text bound for ``report.md`` goes through
    :func:`report_text`."""
    return "".join("\\" + ch if ch in MD_SYNTAX else ch for ch in _one_line(text))


def report_text(text: object) -> str:
    """``text`` (its ``str``) as literal text inside a line of a Markdown document read by any
    renderer, HTML allowed (``report.md``): on one line, control characters :func:`visible`,
    ``&``, ``<``, ``>`` as the character references of :data:`HTML_ENTITIES` (``<script>`` or
    ``<a href="javascript:...">`` is never markup), each character of :data:`REPORT_SYNTAX`
    backslash-escaped, ``_`` too unless it stands between two letters or digits (there it
    opens no emphasis: ``hf_probe`` stays as it is), and a leading ``-``, ``+``, ``=`` or
    ``1.`` / ``1)`` escaped (no list or heading at the start of a line). Safe in a table cell
    (``|`` is escaped); what needs no escape stays readable (``hf-probe/tiny``,
    ``Table I.``)."""
    flat = _one_line(str(text))
    out = []
    for i, ch in enumerate(flat):
        if ch in HTML_ENTITIES:
            out.append(HTML_ENTITIES[ch])
        elif ch in REPORT_SYNTAX or (
            ch == "_"
            and not (0 < i < len(flat) - 1 and flat[i - 1].isalnum() and flat[i + 1].isalnum())
        ):
            out.append("\\" + ch)
        else:
            out.append(ch)
    escaped = "".join(out)
    lead = re.match(r"[-+=]|\d+[.)]", escaped)
    if lead:
        cut = lead.end() - 1
        escaped = escaped[:cut] + "\\" + escaped[cut:]
    return escaped


def md_code(text: object) -> str:
    """``text`` (its ``str``, on one line, control characters :func:`visible`) as a Markdown
    code span: fenced by one backtick more than its longest run of backticks, with a space
    inside each fence when it starts or ends with a backtick, so nothing in it closes the span
    (a renderer reads no HTML, link or emphasis inside one). Not for a table cell, where a
    ``|`` ends the cell even inside a span: there, :func:`report_text`."""
    flat = _one_line(str(text))
    fence = "`" * (max((len(m) for m in re.findall("`+", flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat.strip() else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


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
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        padded = [
            str(c).rjust(w) if r else str(c).ljust(w)
            for c, w, r in zip(cells, widths, right, strict=True)
        ]
        return "  ".join(padded).rstrip()

    body = [line(header)] + [line(r) for r in rows]
    cells = [*header, *(c for r in rows for c in r)]
    runs = [len(m) for c in cells for m in re.findall("`+", str(c))]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return f"{fence}text\n" + "\n".join(body) + f"\n{fence}"


def answers_text(parsed: Sequence[int | None]) -> str:
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


def chart_caption(parts: Sequence[str]) -> str:
    return "; ".join(p for p in parts if p) + "."
