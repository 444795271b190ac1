"""How a selfcommit sample shows in the log viewer: its fields and its c(t) curve."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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


@dataclass(frozen=True)
class ExactCurve:
    """A selfcommit sample's exact curve: c_exact(t), the probability that the forced answer
    parses to a_final (teacher forcing at ``temperature``), at each probed position; the
    ``covered`` mass there (answers beginning in an integer form at all); and the t = 0 probe
    ``c0`` (no point of the curve; None when not made)."""

    c: Sequence[float]
    covered: Sequence[float]
    temperature: float
    c0: float | None = None


@dataclass(frozen=True)
class CurveView:
    """One selfcommit sample's curves as its explanation draws them: at the probed
    ``positions`` t (tokens of the T = ``cot_length`` token CoT), the sampled c(t) =
    ``matches``/``k`` (None in an exact-only run) and the ``exact`` curve (None in a sampled
    run); ``imputed`` marks the values the adaptive schedule imputed (None: none), ``c0`` is
    the sampled t = 0 probe (no point of the curve; None when not made) and ``theta`` the
    threshold drawn as a dashed guide (None: none)."""

    positions: Sequence[int]
    cot_length: int
    matches: Sequence[int] | None = None
    k: int | None = None
    exact: ExactCurve | None = None
    imputed: Sequence[bool] | None = None
    c0: float | None = None
    theta: float | None = None

    def sampled(self) -> list[float] | None:
        """The sampled c(t) = m/k at each probed position; None without a sampled curve."""
        if self.matches is None or self.k is None:
            return None
        k = self.k
        return [ratio(m, k) for m in self.matches]


def _curve_block(
    view: CurveView,
    header: Sequence[str],
    cells: Sequence[Sequence[str]],
    bars: Sequence[float],
) -> list[str]:
    """A curve of ``view`` as an aligned block, a row per probed position: t, t/T (1 when T is
    0), the ``header`` columns (``cells[i]`` at the i-th position), a bar of ``bars[i]`` (then
    ``*`` where the adaptive schedule imputed the value); then :data:`IMPUTED_NOTE` when any
    is."""
    positions, cot_length = view.positions, view.cot_length
    marks = list(view.imputed) if view.imputed else [False] * len(positions)
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


def _sparkline_line(label: str, values: Sequence[float], view: CurveView) -> str:
    """``label``, the sparkline of ``values`` and the span of the view's probed positions out
    of T."""
    positions = view.positions
    return (
        f"{label} {sparkline(list(values))} over t = {positions[0]}…{positions[-1]} of "
        f"T = {view.cot_length} tokens"
    )


def _curve_chart(
    view: CurveView,
    curves: Sequence[tuple[Sequence[float], int, bool]],
    zero: float | None,
    zero_name: str,
    legend: Sequence[str],
    alt: str,
) -> str:
    """Curves against t (tokens, 0..T) as a Markdown PNG chart and a caption line: a line per
    ``curves`` entry (values at the view's positions, colour, dashed), a ring where the
    adaptive schedule imputed the value, a dashed guide at the view's theta and the t = 0
    probe ``zero`` (named ``zero_name``, no point of the curve) as a grey point at t = 0. The
    caption is ``legend``, then the guide, rings and grey point said when drawn."""
    positions, theta = view.positions, view.theta
    x_max = view.cot_length or max(positions, default=0) or 1
    rings = frozenset(i for i, imp in enumerate(view.imputed or ()) if imp)
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


def _sampled_of(view: CurveView) -> tuple[list[float], int]:
    """The sampled c(t) of ``view`` and its k (a view of a sampled curve holds both)."""
    c = view.sampled()
    if c is None or view.k is None:
        raise ValueError("the view holds no sampled curve (matches and k)")
    return c, view.k


def _exact_of(view: CurveView) -> ExactCurve:
    """The exact curve of ``view`` (a view of an exact curve holds it)."""
    if view.exact is None:
        raise ValueError("the view holds no exact curve")
    return view.exact


def selfcommit_curve_text(view: CurveView) -> str:
    """The sampled c(t) curve as an aligned block (t, t/T, c(t) = m/k exactly, a bar; ``*``
    marks a value imputed by the adaptive schedule) and a sparkline line; the t = 0 probe c0,
    when made, on a line of its own (it is no point of the curve)."""
    c, k = _sampled_of(view)
    lines = _curve_block(view, ["c(t)"], [[fmt_number(v)] for v in c], c)
    lines.append(f"{_sparkline_line('c(t)', c, view)}, k = {k}")
    if view.c0 is not None:
        lines.append(f"c0 (t = 0, not part of the curve) = {fmt_number(view.c0)}")
    return "\n\n".join(lines)


def selfcommit_chart(view: CurveView) -> str:
    """The sampled c(t) = m/k against t (tokens, 0..T) as a Markdown PNG chart and a caption
    line: one line through the probed positions (a ring marks a value imputed by the adaptive
    schedule), a dashed guide at theta, and c0 (the t = 0 probe, no point of the curve) as a
    grey point at t = 0."""
    c, k = _sampled_of(view)
    legend = (
        f"c(t) = m/k of the forced answers (k = {k}) against t, tokens of the "
        f"T = {view.cot_length} token CoT"
    )
    return _curve_chart(view, [(c, BLUE, False)], view.c0, "c0", [legend], "c(t) chart")


def selfcommit_exact_text(view: CurveView) -> str:
    """The exact curve as an aligned block (t, t/T, c_exact(t) to 3 decimals, the covered mass,
    a bar; ``*`` imputed by the adaptive schedule) and a sparkline line; with a sampled curve
    too (a run of both) its c(t) and c_exact - c beside each row; c0_exact (and c0) on a line
    of their own."""
    exact = _exact_of(view)
    sampled = view.sampled()
    header = ["c_exact(t)", "covered"]
    cells = [
        [fmt_number(v), fmt_number(cov)] for v, cov in zip(exact.c, exact.covered, strict=True)
    ]
    if sampled is not None:
        header += ["c(t)", "exact − c"]
        for row, v, s in zip(cells, exact.c, sampled, strict=True):
            row += [fmt_number(s), f"{v - s:+.3f}"]
    lines = _curve_block(view, header, cells, exact.c)
    lines.append(_sparkline_line("c_exact(t)", exact.c, view))
    if sampled is not None:
        lines.append(f"c(t)       {sparkline(sampled)} sampled, k = {view.k}")
    if exact.c0 is not None:
        zero = f"c0_exact (t = 0, not part of the curve) = {fmt_number(exact.c0)}"
        lines.append(
            zero + (f"; sampled c0 = {fmt_number(view.c0)}" if view.c0 is not None else "")
        )
    return "\n\n".join(lines)


def selfcommit_exact_chart(view: CurveView) -> str:
    """c_exact(t) against t as a Markdown PNG chart and a caption: the exact curve (blue, a
    ring where the adaptive schedule imputed it), with the sampled c(t) = m/k beside it
    (orange, dashed) in a run of both, a dashed guide at theta and c0_exact as a grey point at
    t = 0."""
    exact = _exact_of(view)
    sampled = view.sampled()
    curves: list[tuple[Sequence[float], int, bool]] = [(exact.c, BLUE, False)]
    legend = [
        "blue: c_exact(t), the probability that the forced answer parses to a_final "
        f"(teacher forcing at temperature {exact.temperature:g}), against t, tokens of the "
        f"T = {view.cot_length} token CoT"
    ]
    if sampled is not None:
        curves.append((sampled, ORANGE, True))
        legend.append(f"orange, dashed: the sampled c(t) = m/k (k = {view.k})")
    return _curve_chart(view, curves, exact.c0, "c0_exact", legend, "c_exact(t) chart")


def selfcommit_curve_markdown(view: CurveView) -> str:
    """The chart, then the text, of the exact curve when ``view`` holds one
    (:func:`selfcommit_exact_chart`, :func:`selfcommit_exact_text`), else of the sampled c(t)
    (:func:`selfcommit_chart`, :func:`selfcommit_curve_text`). Markdown tables run their cells
    together in the log viewer, so the text is an aligned pre-formatted block."""
    if view.exact is not None:
        return selfcommit_exact_chart(view) + "\n\n" + selfcommit_exact_text(view)
    return selfcommit_chart(view) + "\n\n" + selfcommit_curve_text(view)


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
