"""How a selfcommit sample shows in the log viewer: its fields and its c(t) curve."""

from __future__ import annotations

from collections.abc import Sequence

from cotaudit.display.chart import BLUE, Point, Series, line_chart, markdown_image
from cotaudit.display.sample_table import SampleTable
from cotaudit.display.text import aligned_block, bar, chart_caption, fmt_number, sparkline
from cotaudit.stats import ratio

SELFCOMMIT_VIEWER_FIELDS = ("condition", "pair", "a_final", "gold", "correct", "c_t")
"""Keys the selfcommit scorer adds to its value for the viewer's sample table (after the
primary summary): condition, pair, a_final and gold as text, correctness, the c(t) sparkline.
No statistic reads them."""


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
        [
            str(t),
            fmt_number(ratio(t, cot_length) if cot_length else 1.0, 2),
            fmt_number(v),
            bar(v) + (" *" if imp else ""),
        ]
        for t, v, imp in zip(positions, c, imputed, strict=True)
    ]
    lines = [aligned_block(["t", "t/T", "c(t)", ""], rows, right=[True, True, True, False])]
    if any(imputed):
        lines.append("`*` imputed by the adaptive schedule (not probed)")
    lines.append(
        f"c(t) {sparkline(c)} over t = {positions[0]}…{positions[-1]} of "
        f"T = {cot_length} tokens, k = {k}"
    )
    if c0 is not None:
        lines.append(f"c0 (t = 0, not part of the curve) = {fmt_number(c0)}")
    return "\n\n".join(lines)


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
        [Series(list(zip(positions, c, strict=True)), BLUE, rings=rings)],
        x_max,
        ticks,
        "c(t)",
        "t",
        guides=[theta] if theta is not None else [],
        points=[Point(0, c0)] if c0 is not None else [],
    )
    caption = chart_caption(
        [
            f"c(t) = m/k of the forced answers (k = {k}) against t, tokens of the T = {cot_length} "
            "token CoT",
            f"dashed: θ = {theta:g}" if theta is not None else "",
            "rings: imputed by the adaptive schedule, not probed" if rings else "",
            f"grey: c0 = {fmt_number(c0)} at t = 0, not part of the curve"
            if c0 is not None
            else "",
        ]
    )
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
    return (
        selfcommit_chart(positions, cot_length, matches, k, imputed, c0, theta)
        + "\n\n"
        + selfcommit_curve_text(positions, cot_length, matches, k, imputed, c0)
    )


SELFCOMMIT_LABELS = {"c_t": "c(t) plot", "uncommitted": "uncommit.", "lowcommit": "low c(t)"}
"""Column labels of the selfcommit keys longer than :data:`MAX_LABEL_CHARS` or named for the
reader (the c(t) sparkline; 9 characters give its column room for 8 block characters)."""


def sample_table(primary: str, summaries: Sequence[str]) -> SampleTable:
    """Columns: pair, condition, the primary summary, the c(t) sparkline, a_final, gold,
    correct, then the other summaries; sorted by sample id (pair, then condition)."""
    visible = ["pair", "condition", primary, "c_t", "a_final", "gold", "correct"]
    hidden = [s for s in summaries if s != primary]
    return SampleTable(
        "selfcommit", "selfcommit_scorer", tuple(visible), tuple(hidden), SELFCOMMIT_LABELS
    )
