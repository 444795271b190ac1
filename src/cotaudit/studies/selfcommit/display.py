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
    imputed = list(imputed) if imputed else [False] * len(positions)
    header = ["t", "t/T", "c_exact(t)", "covered"]
    if sampled is not None:
        header += ["c(t)", "exact − c"]
    rows = []
    for i, (t, v, cov, imp) in enumerate(zip(positions, c_exact, covered, imputed, strict=True)):
        row = [
            str(t),
            fmt_number(ratio(t, cot_length) if cot_length else 1.0, 2),
            fmt_number(v),
            fmt_number(cov),
        ]
        if sampled is not None:
            row += [fmt_number(sampled[i]), f"{v - sampled[i]:+.3f}"]
        rows.append([*row, bar(v) + (" *" if imp else "")])
    right = [True] * len(header) + [False]
    lines = [aligned_block([*header, ""], rows, right=right)]
    if any(imputed):
        lines.append("`*` imputed by the adaptive schedule (not probed)")
    lines.append(
        f"c_exact(t) {sparkline(list(c_exact))} over t = {positions[0]}…{positions[-1]} of "
        f"T = {cot_length} tokens"
    )
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
    x_max = cot_length or max(positions, default=0) or 1
    rings = frozenset(i for i, imp in enumerate(imputed or ()) if imp)
    ticks = [(0, "0"), *((t, "") for t in positions), (x_max, str(x_max))]
    series = [Series(list(zip(positions, c_exact, strict=True)), BLUE, rings=rings)]
    if sampled is not None:
        series.append(
            Series(list(zip(positions, sampled, strict=True)), ORANGE, dashed=True, rings=rings)
        )
    png = line_chart(
        series,
        x_max,
        ticks,
        "c(t)",
        "t",
        guides=[theta] if theta is not None else [],
        points=[Point(0, c0_exact)] if c0_exact is not None else [],
    )
    caption = chart_caption(
        [
            "blue: c_exact(t), the probability that the forced answer parses to a_final "
            f"(teacher forcing at temperature {temperature:g}), against t, tokens of the "
            f"T = {cot_length} token CoT",
            f"orange, dashed: the sampled c(t) = m/k (k = {k})" if sampled is not None else "",
            f"dashed: θ = {theta:g}" if theta is not None else "",
            "rings: imputed by the adaptive schedule, not probed" if rings else "",
            f"grey: c0_exact = {fmt_number(c0_exact)} at t = 0, not part of the curve"
            if c0_exact is not None
            else "",
        ]
    )
    return f"{markdown_image(png, 'c_exact(t) chart')}\n\n{caption}"


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
