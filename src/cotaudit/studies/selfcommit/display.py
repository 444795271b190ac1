"""How a selfcommit sample shows in the log viewer: its fields and its c(t) curve."""

from __future__ import annotations

from collections.abc import Sequence

from cotaudit.display.chart import BLUE, ORANGE, Point, Series, line_chart, markdown_image
from cotaudit.display.sample_table import SampleTable
from cotaudit.display.text import aligned_block, bar, chart_caption, fmt_number, sparkline
from cotaudit.stats import ratio

SELFCOMMIT_VIEWER_FIELDS = ("condition", "pair", "a_final", "gold", "correct", "c_t")
"""Keys the selfcommit scorer adds to its value for the viewer's sample table (after the
primary summary): condition, pair, a_final and gold as text, correctness, the c(t) sparkline.
No statistic reads them."""


IMPUTED_NOTE = "`*` imputed by the adaptive schedule (not probed)"
"""The text block's note under a curve with a value imputed by the adaptive schedule."""


def _curve_block(
    positions: Sequence[int],
    cot_length: int,
    header: Sequence[str],
    cells: Sequence[Sequence[str]],
    bars: Sequence[float],
    imputed: Sequence[bool] | None,
) -> list[str]:
    """A curve as an aligned block, a row per probed position: t, t/T (1 when T is 0), the
    ``header`` columns (``cells[i]`` at the i-th position), a bar of ``bars[i]`` (then ``*``
    where the adaptive schedule imputed the value); then :data:`IMPUTED_NOTE` when any is."""
    marks = list(imputed) if imputed else [False] * len(positions)
    rows = [
        [
            str(t),
            fmt_number(ratio(t, cot_length) if cot_length else 1.0, 2),
            *row,
            bar(v) + (" *" if imp else ""),
        ]
        for t, row, v, imp in zip(positions, cells, bars, marks, strict=True)
    ]
    right = [True] * (len(header) + 2) + [False]
    lines = [aligned_block(["t", "t/T", *header, ""], rows, right=right)]
    if any(marks):
        lines.append(IMPUTED_NOTE)
    return lines


def _sparkline_line(
    label: str, values: Sequence[float], positions: Sequence[int], cot_length: int
) -> str:
    """``label``, the sparkline of ``values`` and the span of probed positions out of T."""
    return (
        f"{label} {sparkline(list(values))} over t = {positions[0]}…{positions[-1]} of "
        f"T = {cot_length} tokens"
    )


def _curve_chart(
    positions: Sequence[int],
    cot_length: int,
    curves: Sequence[tuple[Sequence[float], int, bool]],
    imputed: Sequence[bool] | None,
    theta: float | None,
    zero: float | None,
    zero_name: str,
    legend: Sequence[str],
    alt: str,
) -> str:
    """Curves against t (tokens, 0..T) as a Markdown PNG chart and a caption line: a line per
    ``curves`` entry (values at ``positions``, colour, dashed), a ring where the adaptive
    schedule imputed the value, a dashed guide at ``theta`` and the t = 0 probe ``zero`` (named
    ``zero_name``, no point of the curve) as a grey point at t = 0. The caption is
    ``legend``, then the guide, rings and grey point said when drawn."""
    x_max = cot_length or max(positions, default=0) or 1
    rings = frozenset(i for i, imp in enumerate(imputed or ()) if imp)
    ticks = [(0, "0"), *((t, "") for t in positions), (x_max, str(x_max))]
    png = line_chart(
        [
            Series(list(zip(positions, values, strict=True)), color, dashed=dashed, rings=rings)
            for values, color, dashed in curves
        ],
        x_max,
        ticks,
        "c(t)",
        "t",
        guides=[theta] if theta is not None else [],
        points=[Point(0, zero)] if zero is not None else [],
    )
    caption = chart_caption(
        [
            *legend,
            f"dashed: θ = {theta:g}" if theta is not None else "",
            "rings: imputed by the adaptive schedule, not probed" if rings else "",
            f"grey: {zero_name} = {fmt_number(zero)} at t = 0, not part of the curve"
            if zero is not None
            else "",
        ]
    )
    return f"{markdown_image(png, alt)}\n\n{caption}"


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
    c = [ratio(m, k) for m in matches]
    lines = _curve_block(positions, cot_length, ["c(t)"], [[fmt_number(v)] for v in c], c, imputed)
    lines.append(f"{_sparkline_line('c(t)', c, positions, cot_length)}, k = {k}")
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
    legend = (
        f"c(t) = m/k of the forced answers (k = {k}) against t, tokens of the T = {cot_length} "
        "token CoT"
    )
    return _curve_chart(
        positions,
        cot_length,
        [(c, BLUE, False)],
        imputed,
        theta,
        c0,
        "c0",
        [legend],
        "c(t) chart",
    )


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


def selfcommit_exact_text(
    positions: Sequence[int],
    cot_length: int,
    c_exact: Sequence[float],
    covered: Sequence[float],
    sampled: Sequence[float] | None = None,
    k: int | None = None,
    imputed: Sequence[bool] | None = None,
    c0_exact: float | None = None,
    c0: float | None = None,
) -> str:
    """The exact curve as an aligned block (t, t/T, c_exact(t) to 3 decimals, the covered mass,
    a bar; ``*`` imputed by the adaptive schedule) and a sparkline line; with the sampled curve
    (``sampled``, a run of both) its c(t) and c_exact - c beside each row; c0_exact (and c0)
    on a line of their own."""
    header = ["c_exact(t)", "covered"]
    cells = [[fmt_number(v), fmt_number(cov)] for v, cov in zip(c_exact, covered, strict=True)]
    if sampled is not None:
        header += ["c(t)", "exact − c"]
        for row, v, s in zip(cells, c_exact, sampled, strict=True):
            row += [fmt_number(s), f"{v - s:+.3f}"]
    lines = _curve_block(positions, cot_length, header, cells, c_exact, imputed)
    lines.append(_sparkline_line("c_exact(t)", c_exact, positions, cot_length))
    if sampled is not None:
        lines.append(f"c(t)       {sparkline(list(sampled))} sampled, k = {k}")
    if c0_exact is not None:
        zero = f"c0_exact (t = 0, not part of the curve) = {fmt_number(c0_exact)}"
        lines.append(zero + (f"; sampled c0 = {fmt_number(c0)}" if c0 is not None else ""))
    return "\n\n".join(lines)


def selfcommit_exact_chart(
    positions: Sequence[int],
    cot_length: int,
    c_exact: Sequence[float],
    temperature: float,
    sampled: Sequence[float] | None = None,
    k: int | None = None,
    imputed: Sequence[bool] | None = None,
    c0_exact: float | None = None,
    theta: float | None = None,
) -> str:
    """c_exact(t) against t as a Markdown PNG chart and a caption: the exact curve (blue, a
    ring where the adaptive schedule imputed it), with the sampled c(t) = m/k beside it
    (``sampled``, orange, dashed) in a run of both, a dashed guide at ``theta`` and c0_exact as
    a grey point at t = 0."""
    curves = [(c_exact, BLUE, False)]
    legend = [
        "blue: c_exact(t), the probability that the forced answer parses to a_final "
        f"(teacher forcing at temperature {temperature:g}), against t, tokens of the "
        f"T = {cot_length} token CoT"
    ]
    if sampled is not None:
        curves.append((sampled, ORANGE, True))
        legend.append(f"orange, dashed: the sampled c(t) = m/k (k = {k})")
    return _curve_chart(
        positions,
        cot_length,
        curves,
        imputed,
        theta,
        c0_exact,
        "c0_exact",
        legend,
        "c_exact(t) chart",
    )


def selfcommit_exact_markdown(
    positions: Sequence[int],
    cot_length: int,
    c_exact: Sequence[float],
    covered: Sequence[float],
    temperature: float,
    sampled: Sequence[float] | None = None,
    k: int | None = None,
    imputed: Sequence[bool] | None = None,
    c0_exact: float | None = None,
    c0: float | None = None,
    theta: float | None = None,
) -> str:
    """The exact curve's chart (:func:`selfcommit_exact_chart`), then its text
    (:func:`selfcommit_exact_text`)."""
    return (
        selfcommit_exact_chart(
            positions, cot_length, c_exact, temperature, sampled, k, imputed, c0_exact, theta
        )
        + "\n\n"
        + selfcommit_exact_text(
            positions, cot_length, c_exact, covered, sampled, k, imputed, c0_exact, c0
        )
    )


SELFCOMMIT_LABELS = {"c_t": "c(t) plot", "uncommitted": "uncommit.", "lowcommit": "low c(t)"}
"""Column labels of the selfcommit keys longer than :data:`MAX_LABEL_CHARS` or named for the
reader (the c(t) sparkline; 9 characters give its column room for 8 block characters)."""
GAP_LABELS = {"exact_gap": "exact gap", "exact_gap_abs": "|gap|"}
"""Column labels of a run of both estimators: the mean exact - sampled difference and its
absolute value."""


EXACT_LABELS = {
    "range_c": "ex range_c",
    "uncommitted": "ex uncomm.",
    "lowcommit": "ex low c",
    "rho_back": "ex rho_bk",
}
"""Column labels of the exact curve's summaries (``tau_0.8_exact`` is ``ex tau_0.8``)."""


def exact_label(summary: str) -> str:
    """The column label of a summary of the exact curve, ``<summary>_exact``."""
    base = summary.removesuffix("_exact")
    return EXACT_LABELS.get(base, f"ex {base}")


def sample_table(primary: str, summaries: Sequence[str], estimator: str = "sampled") -> SampleTable:
    """Columns: pair, condition, the primary summary, the c(t) sparkline (of the exact curve
    in an exact-only run, labelled so), a_final, gold, correct, then the other summaries and,
    in a run of both estimators, the exact - sampled differences (exact_gap, |gap|); sorted by
    sample id (pair, then condition)."""
    visible = ["pair", "condition", primary, "c_t", "a_final", "gold", "correct"]
    hidden = [s for s in summaries if s != primary]
    labels = dict(SELFCOMMIT_LABELS)
    if estimator == "both":
        visible.append("exact_gap")
        hidden.append("exact_gap_abs")
        labels |= GAP_LABELS
    labels |= {s: exact_label(s) for s in (primary, *summaries) if s.endswith("_exact")}
    if estimator == "exact":
        labels["c_t"] = "c_exact"
    return SampleTable("selfcommit", "selfcommit_scorer", tuple(visible), tuple(hidden), labels)
