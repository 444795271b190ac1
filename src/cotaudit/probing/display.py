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
) -> str:
    """The generic probe's curves as one aligned block: a row per cut (the zero probe, t = 0,
    first when made), t, t/T and each context's value (``label`` = ``p(t)`` or ``c(t)``, at
    most 3 decimals); a line saying the t = 0 row is the zero probe; then one sparkline line
    per context over the cuts after the zero probe. ``curves[name]`` has the zero probe's
    value first when it was made."""
    header = ["t", "t/T", *(f"{label} {n}" for n in curves)]
    cuts = ([(0, 0.0)] if zero_probe else []) + list(zip(positions, fractions, strict=True))
    rows = [
        [str(t), fmt_number(f, 2), *(fmt_number(c[i]) for c in curves.values())]
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
REPLAY_MARK = "↺"


def probe_label(key: str) -> str:
    """The column label of a probe value key: :data:`PROBE_LABELS` (else the key), a replayed
    context's key marked ``↺`` (cut to :data:`MAX_LABEL_CHARS` characters)."""
    base, replay = (key[: -len("_replay")], True) if key.endswith("_replay") else (key, False)
    label = PROBE_LABELS.get(base, base)
    if replay:
        label = f"{REPLAY_MARK}{label}"
    return label[:MAX_LABEL_CHARS]


def sample_table(keys: Sequence[str]) -> SampleTable:
    """Columns: the probe's value keys in their order (the task score first), each with a
    label of at most :data:`MAX_LABEL_CHARS` characters; sorted by sample id."""
    labels = {k: probe_label(k) for k in keys if probe_label(k) != k}
    return SampleTable("probe", "probe_scorer", tuple(keys), (), labels)
