"""How a probed sample's curve shows in the log viewer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cotaudit.display.chart import SERIES_COLORS, Point, Series, line_chart, markdown_image
from cotaudit.display.sample_table import MAX_LABEL_CHARS, SampleTable
from cotaudit.display.text import aligned_block, chart_caption, fmt_number, sparkline


def probe_curve_text(
    positions: Sequence[int],
    fractions: Sequence[float],
    curves: Mapping[str, Sequence[float]],
    label: str,
    zero_probe: bool,
    extra: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """The generic probe's curves as one aligned block: a row per cut (the zero probe, t = 0,
    first when made), t, t/T and each context's value (``label`` = ``p(t)`` or ``c(t)``, at
    most 3 decimals), then the ``extra`` columns (header -> one text per cut); a line saying
    the t = 0 row is the zero probe; then one sparkline line per context over the cuts after
    the zero probe. ``curves[name]`` has the zero probe's value first when it was made."""
    extra = extra or {}
    header = ["t", "t/T", *(f"{label} {n}" for n in curves), *extra]
    cuts = ([(0, 0.0)] if zero_probe else []) + list(zip(positions, fractions, strict=True))
    rows = [
        [
            str(t),
            fmt_number(f, 2),
            *(fmt_number(c[i]) for c in curves.values()),
            *(column[i] for column in extra.values()),
        ]
        for i, (t, f) in enumerate(cuts)
    ]
    lines = [aligned_block(header, rows, right=[True] * len(header))]
    if zero_probe:
        lines.append(
            "t = 0: the zero probe (an answer forced before the trace), not part of the curve"
        )
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
    series, points, legend = context_series(positions, curves, zero_probe)
    ticks = [(0, "0"), *((t, "") for t in positions), (x_max, str(x_max))]
    png = line_chart(
        series, x_max, ticks, label, "t", guides=[theta] if theta is not None else [], points=points
    )
    caption = chart_caption(
        [
            f"{label} against t, tokens of the T = {trace_tokens} token trace",
            *legend,
            "the point at t = 0 is the zero probe, not part of the curve" if zero_probe else "",
            f"dashed: θ = {theta:g}" if theta is not None else "",
        ]
    )
    return f"{markdown_image(png, f'{label} chart')}\n\n{caption}"


def top_letter(distribution: Mapping[str, float] | None) -> str:
    """The most likely letter of an exact letter distribution and its probability (``B 0.62``;
    ``·`` for none)."""
    if not distribution:
        return "·"
    letter = max(distribution, key=lambda x: distribution[x])
    return f"{letter} {fmt_number(distribution[letter])}"


def exact_markdown(
    positions: Sequence[int],
    fractions: Sequence[float],
    trace_tokens: int,
    label: str,
    zero_probe: bool,
    exact: Mapping[str, Sequence[float] | None],
    covered: Mapping[str, Sequence[float] | None],
    letters: Mapping[str, Sequence[Mapping[str, float]] | None],
    sampled: Mapping[str, Sequence[float]] | None = None,
    theta: float | None = None,
) -> str:
    """The exact estimator's curves of one sample (every mapping keyed by context name, values
    per probed position, the zero probe first when made): charts (:func:`probe_chart`) of the
    exact curves, one with a line per context, or with ``sampled`` (both estimators) one per
    context with the exact curve (blue) and the sampled one (orange) beside it; then the cuts
    as text (:func:`probe_curve_text`) with each context's ``covered`` mass and, for letters,
    its most likely letter (:func:`top_letter`). A context without an exact curve (no single
    reference) is named in a line, its covered mass and letters still listed."""
    curves = {n: list(c) for n, c in exact.items() if c is not None}
    charts: list[str] = []
    if sampled is None:
        if curves:
            charts.append(
                probe_chart(
                    positions,
                    trace_tokens,
                    {f"{n} exact": c for n, c in curves.items()},
                    label,
                    zero_probe,
                    theta,
                )
            )
    else:
        for n, c in curves.items():
            pair = {f"{n} exact": c} | ({f"{n} sampled": sampled[n]} if n in sampled else {})
            charts.append(probe_chart(positions, trace_tokens, pair, label, zero_probe, theta))
    text_curves: dict[str, Sequence[float]] = {}
    for n, c in curves.items():
        text_curves[f"{n} exact"] = c
        if sampled is not None and n in sampled:
            text_curves[f"{n} sampled"] = sampled[n]
    extra: dict[str, list[str]] = {}
    for n, cov in covered.items():
        if cov is not None:
            extra[f"covered {n}"] = [fmt_number(x) for x in cov]
        dist = letters.get(n)
        if dist is not None:
            extra[f"top {n}"] = [top_letter(d) for d in dist]
    missing = [n for n, c in exact.items() if c is None]
    lines = [
        *charts,
        probe_curve_text(positions, fractions, text_curves, label, zero_probe, extra)
        if text_curves or extra
        else "",
        *(f"{n}: no single reference answer, so no exact curve" for n in missing),
    ]
    return "\n\n".join(line for line in lines if line)


def context_series(
    x: Sequence[float], curves: Mapping[str, Sequence[float]], zero_probe: bool
) -> tuple[list[Series], list[Point], list[str]]:
    """A series per probe context (the first blue with discs, the second orange, dashed, with
    rings) over ``x``, the zero probe of each (its first value) as a point of its colour at
    x = 0, and each context's legend (``blue: own``)."""
    series, points, legend = [], [], []
    for i, (name, values) in enumerate(curves.items()):
        color, ring = SERIES_COLORS[i % len(SERIES_COLORS)], i % 2 == 1
        curve = list(values[1:] if zero_probe else values)
        series.append(
            Series(
                list(zip(x, curve, strict=True)),
                color,
                dashed=ring,
                rings=frozenset(range(len(curve))) if ring else frozenset(),
            )
        )
        if zero_probe:
            points.append(Point(0, values[0], color, ring=ring))
        legend.append(f"{'orange rings, dashed' if ring else 'blue'}: {name}")
    return series, points, legend


PROBE_LABELS = {
    "task_score": "task score",
    "auc": "AUC",
    "has_final": "has final",
    "pass_at_first": "p first",
    "first_pass": "1st pass",
    "first_pass_censored": "1st cens.",
    "p0": "p(0%)",
    "c0": "c(0)",
    "uncommitted": "uncommit.",
    "lowcommit": "low c(t)",
    "rho_back": "rho back",
}
"""Column labels of the probe's value keys longer than :data:`MAX_LABEL_CHARS` or named for
the reader; a replayed context's key (``<key>_replay``) gets the same label with a ``↺``."""
EXACT_LABELS = {
    "auc": "AUC",
    "has_final": "final",
    "pass_at_first": "p1st",
    "first_pass": "1st",
    "first_pass_censored": "cens",
    "p0": "p(0%)",
    "c0": "c(0)",
    "range_c": "range",
    "uncommitted": "uncom",
    "lowcommit": "low",
    "rho_back": "rho",
}
"""Short names of the summaries whose exact twin (``<key>_exact``) is labelled
``<short> ex`` (tau_first(theta) is ``τ<theta> ex``), so the label fits with a ``↺``."""
EXACT_MARK = " ex"
GAP_LABELS = {"exact_gap": "ex−smp", "exact_gap_abs": "|ex−smp|"}
"""Labels of the per-sample exact - sampled differences."""
REPLAY_MARK = "↺"


def probe_label(key: str) -> str:
    """The column label of a probe value key: :data:`PROBE_LABELS` (else the key), an exact
    summary's ``<short> ex`` (:data:`EXACT_LABELS`), the differences' :data:`GAP_LABELS`, a
    replayed context's key marked ``↺`` (cut to :data:`MAX_LABEL_CHARS` characters)."""
    base, replay = (key[: -len("_replay")], True) if key.endswith("_replay") else (key, False)
    if base in GAP_LABELS:
        label = GAP_LABELS[base]
    elif base.endswith("_exact"):
        summary = base.removesuffix("_exact")
        short = (
            f"τ{summary.removeprefix('tau_')}"
            if summary.startswith("tau_")
            else EXACT_LABELS.get(summary, summary)
        )
        label = f"{short}{EXACT_MARK}"
    else:
        label = PROBE_LABELS.get(base, base)
    if replay:
        label = f"{REPLAY_MARK}{label}"
    return label[:MAX_LABEL_CHARS]


def sample_table(keys: Sequence[str]) -> SampleTable:
    """Columns: the probe's value keys in their order (the task score first), each with a
    label of at most :data:`MAX_LABEL_CHARS` characters; sorted by sample id."""
    labels = {k: probe_label(k) for k in keys if probe_label(k) != k}
    return SampleTable("probe", "probe_scorer", tuple(keys), (), labels)
