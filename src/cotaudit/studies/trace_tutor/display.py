"""How a trace_tutor sample shows in the log viewer: its fields and its p(f) curves."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from cotaudit.display.chart import line_chart, markdown_image
from cotaudit.display.sample_table import SampleTable
from cotaudit.display.text import aligned_block, answers_text, chart_caption, fmt_number, sparkline
from cotaudit.probing.display import context_series
from cotaudit.probing.exact import reads_exact, samples
from cotaudit.stats import ratio

TRACE_PRIMARY = "delta_context"
"""trace_tutor's primary per-sample score: AUC key visible - AUC key masked (None for
question-only)."""


TRACE_VIEWER_FIELDS = (
    "condition",
    "pair",
    "final_answer",
    "gold",
    "p_visible",
    "p_masked",
    "correct",
)
"""Keys of the trace_tutor scorer's value that the viewer's sample table shows (all but
``correct``, which the statistics read too, are there for the viewer alone)."""


def _checkpoint_cells(fractions: Sequence[float], positions: Sequence[int]) -> list[list[str]]:
    """The first two cells of each checkpoint's row: f in % (the 0% probe first, then each
    fraction) and its token position t."""
    return [
        [f"{fmt_number(f * 100, 4)}%", str(t)]
        for f, t in zip([0.0, *fractions], positions, strict=True)
    ]


def _fraction_span(fractions: Sequence[float]) -> str:
    """The fractions a sparkline spans: ``over f = <first>…<last>%``."""
    return f"over f = {fmt_number(fractions[0] * 100, 4)}…{fmt_number(fractions[-1] * 100, 4)}%"


def _pf_chart(
    fractions: Sequence[float],
    curves: Mapping[str, Sequence[float]],
    pass_threshold: float,
    head: str,
    alt: str,
) -> str:
    """p(f) against f (% of the explanation's tokens) as a Markdown PNG chart and a caption
    line: ``curves[name]`` per position (the 0% probe first), a line per curve over the
    fractions (:func:`~cotaudit.probing.display.context_series`: the first blue with discs, the
    second orange, dashed, with rings), each 0% probe a point at f = 0 joined to nothing (it is
    no point of the curve), a dashed guide at the pass threshold. The caption opens with
    ``head``."""
    x = [f * 100 for f in fractions]
    series, points, legend = context_series(x, curves, zero_probe=True)
    ticks = [(0.0, "0"), *((f, fmt_number(f, 4)) for f in x)]
    png = line_chart(series, max(x), ticks, "p(f)", "f (%)", guides=[pass_threshold], points=points)
    caption = chart_caption(
        [
            head,
            *legend,
            "the point at 0% is the 0% probe, not part of the curve",
            f"dashed: pass threshold {pass_threshold:g}",
        ]
    )
    return f"{markdown_image(png, alt)}\n\n{caption}"


@dataclass(frozen=True)
class SampledCurves:
    """One explanation's sampled p(f) curves as its explanation draws them: the checkpoint
    ``fractions`` f of the explanation's tokens; the token ``positions`` t of the checkpoints,
    the 0% probe first; ``probes[name]`` per probe context, its ``matches`` (out of ``k``
    forced answers) and ``parsed`` answers per checkpoint, the 0% probe first; and the
    ``pass_threshold`` p(f) passes at."""

    fractions: Sequence[float]
    positions: Sequence[int]
    probes: Mapping[str, Mapping[str, Sequence]]
    k: int
    pass_threshold: float


def trace_curve_text(curves: SampledCurves) -> str:
    """The p(f) curves as one aligned block: a row per checkpoint (the 0% probe, then each
    fraction f), per probe context p(f) = matches/k exactly and its forced answers (``✓`` when
    p(f) >= the pass threshold); then one sparkline line per context over the fractions f
    (the 0% probe is not part of the curve)."""
    probes, k = curves.probes, curves.k
    names = list(probes)
    header = ["f", "t"]
    for n in names:
        header += [f"p({n})", f"answers ({n})"] if len(names) > 1 else ["p", "answers"]
    rows = _checkpoint_cells(curves.fractions, curves.positions)
    for i, row in enumerate(rows):
        for n in names:
            p = ratio(probes[n]["matches"][i], k)
            mark = "✓" if p >= curves.pass_threshold else "✗"
            row += [fmt_number(p), f"{mark} {answers_text(probes[n]['parsed'][i])}"]
    right = [True, True] + [True, False] * len(names)
    lines = [aligned_block(header, rows, right=right)]
    for n in names:
        curve = [ratio(m, k) for m in probes[n]["matches"][1:]]
        label = f"p(f) {n}" if len(names) > 1 else "p(f)"
        lines.append(f"{label} {sparkline(curve)} {_fraction_span(curves.fractions)}")
    return "\n\n".join(lines)


def trace_chart(curves: SampledCurves) -> str:
    """p(f) = matches/k against f (% of the explanation's tokens) as a Markdown PNG chart and a
    caption line (:func:`_pf_chart`): a line per probe context over the fractions, each
    context's 0% probe as a point at f = 0, a dashed guide at the pass threshold."""
    k = curves.k
    values = {n: [ratio(m, k) for m in p["matches"]] for n, p in curves.probes.items()}
    head = f"p(f) = matches/k (k = {k}) against f, % of the explanation's tokens"
    return _pf_chart(curves.fractions, values, curves.pass_threshold, head, "p(f) chart")


def trace_curve_markdown(curves: SampledCurves) -> str:
    """The p(f) chart (:func:`trace_chart`), then its text (:func:`trace_curve_text`)."""
    return trace_chart(curves) + "\n\n" + trace_curve_text(curves)


def exact_chart(
    fractions: Sequence[float],
    curves: Mapping[str, Sequence[float]],
    pass_threshold: float,
    temperature: float,
    title: str,
) -> str:
    """p(f) of the exact estimator against f as a Markdown PNG chart and a caption line
    (:func:`_pf_chart`): ``curves[name]`` per position (the 0% probe first), a line per curve,
    each 0% probe a point at f = 0, a dashed guide at the pass threshold; the caption opens
    with ``title``."""
    head = (
        f"{title}: p(f) = P(forced answer = gold) read exactly at T = {temperature:g}, "
        "against f, % of the explanation's tokens"
    )
    return _pf_chart(fractions, curves, pass_threshold, head, "p(f) exact chart")


def trace_exact_markdown(
    fractions: Sequence[float],
    positions: Sequence[int],
    exact: Mapping[str, Sequence[float]],
    covered: Mapping[str, Sequence[float]],
    sampled: Mapping[str, Sequence[float]] | None,
    pass_threshold: float,
    temperature: float,
) -> str:
    """The exact estimator's p(f) curves of one explanation (each mapping keyed by probe
    context, values per position with the 0% probe first): a chart with a line per context
    (:func:`exact_chart`), or, with ``sampled`` (both estimators), one chart per context with
    the exact curve (blue) and the sampled one (orange) beside it; then an aligned block, a row
    per checkpoint: per context p exactly to 4 decimals (``✓`` when >= the pass threshold), the
    ``covered``
    mass (answers beginning in an integer form at all) and, with ``sampled``, the sampled p and
    the difference exact - sampled; then a sparkline line per exact curve over the fractions."""
    if sampled is None:
        charts = [
            exact_chart(
                fractions,
                {f"{n} exact": c for n, c in exact.items()},
                pass_threshold,
                temperature,
                "exact",
            )
        ]
    else:
        charts = [
            exact_chart(
                fractions,
                {f"{n} exact": c, f"{n} sampled": sampled[n]},
                pass_threshold,
                temperature,
                f"key {n}",
            )
            for n, c in exact.items()
        ]
    header = ["f", "t"]
    for n in exact:
        header += [f"p exact ({n})", f"covered ({n})"]
        if sampled is not None:
            header += [f"p sampled ({n})", f"exact − sampled ({n})"]
    rows = _checkpoint_cells(fractions, positions)
    for i, row in enumerate(rows):
        for n, c in exact.items():
            mark = "✓" if c[i] >= pass_threshold else "✗"
            row += [f"{mark} {fmt_number(c[i], 4)}", fmt_number(covered[n][i], 4)]
            if sampled is not None:
                row += [fmt_number(sampled[n][i]), fmt_number(c[i] - sampled[n][i], 4)]
    lines = [*charts, aligned_block(header, rows, right=[True] * len(header))]
    for n, c in exact.items():
        lines.append(f"p(f) exact {n} {sparkline(list(c[1:]))} {_fraction_span(fractions)}")
    return "\n\n".join(lines)


TRACE_STATS = {
    "auc": "AUC",
    "pass_at_10": "p@10",
    "first_pass": "1st",
    "first_pass_censored": "cens",
    "all_pass": "all",
    "pass_10_fail_100": "nm10",
    "pass_early_fail_100": "nm",
    "zero_probe": "0%",
}
"""trace_tutor's per-curve statistics (a ``<stat>_visible`` and a ``<stat>_masked`` key each)
and their short names in the column labels (``nm10``: passes at 10% and fails at 100%, the
study's non-monotone; ``nm``: passes at some f < 100% and fails at 100%; ``cens``: no pass,
first pass censored at 1.0)."""
EXACT_GAP_KEYS = ("exact_gap", "exact_gap_abs")
"""Per-sample differences of the two estimators (``-T estimator=both``): the mean over the
probed cuts of p_exact - p, and of |p_exact - p|."""

TRACE_LABELS = {
    TRACE_PRIMARY: "Δcontext",
    f"{TRACE_PRIMARY}_exact": "Δctx ex",
    "final_answer": "final ans",
    "length_tokens": "tokens",
    "p_visible": "p(f) vis.",
    "p_masked": "p(f) mask",
    "p_visible_exact": "p(f) v ex",
    "p_masked_exact": "p(f) m ex",
    "exact_gap": "gap",
    "exact_gap_abs": "|gap|",
    **{
        f"{stat}_{ctx}": f"{short} {'vis.' if ctx == 'visible' else 'mask'}"
        for stat, short in TRACE_STATS.items()
        for ctx in ("visible", "masked")
    },
    **{
        f"{stat}_{ctx}_exact": f"{short} {ctx[0]} ex"
        for stat, short in TRACE_STATS.items()
        for ctx in ("visible", "masked")
    },
}
"""Column labels of the trace_tutor keys: ``vis.`` the curve with the key visible, ``mask``
with it masked; ``v ex`` / ``m ex`` the same read by the exact estimator."""


def sample_table(estimator: str = "sampled") -> SampleTable:
    """Columns: pair, condition, Delta_context, AUC visible and masked, the p(f) sparklines,
    final answer, gold, correct, then the other per-curve statistics and the length; sorted by
    sample id (pair, then condition). With the exact estimator (``estimator`` ``exact``: in
    place of the sampled ones; ``both``: after them, with the per-sample differences) the same
    columns of the exact curves (``*_exact``)."""
    curves = [c for c, reads in (("sampled", samples), ("exact", reads_exact)) if reads(estimator)]

    def named(key: str, curve: str) -> str:
        return key if curve == "sampled" else f"{key}_exact"

    visible = ["pair", "condition"]
    for curve in curves:
        visible += [named(k, curve) for k in (TRACE_PRIMARY, "auc_visible", "auc_masked")]
    if len(curves) == 2:
        visible += list(EXACT_GAP_KEYS)
    for curve in curves:
        visible += [named(k, curve) for k in ("p_visible", "p_masked")]
    visible += ["final_answer", "gold", "correct"]
    hidden = [
        named(f"{stat}_{ctx}", curve)
        for curve in curves
        for stat in TRACE_STATS
        if stat != "auc"
        for ctx in ("visible", "masked")
    ] + ["length_tokens"]
    return SampleTable(
        "trace_tutor", "trace_tutor_scorer", tuple(visible), tuple(hidden), TRACE_LABELS
    )
