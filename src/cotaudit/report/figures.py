"""Figures (matplotlib, Agg canvas; no pyplot state). Each function writes one PNG and returns
its :class:`~cotaudit.report.sections.FigureInfo`: size in pixels and the data series per panel.

Figures are saved at a fixed size (no tight bounding box), so a figure of width ``w`` and height
``h`` inches is ``round(w * DPI)`` x ``round(h * DPI)`` pixels.

Labels come from logs (sample ids, conditions, run labels): every text is drawn as written
(:func:`literal_text`: a ``$`` is a dollar sign, never TeX), and a figure that cannot be drawn
is a :class:`~cotaudit.report.sections.FigureInfo` saying why (:func:`drawn`): the section keeps
its tables and the report names the figure.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ParamSpec, TypeVar, cast

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

from cotaudit.params import error_line
from cotaudit.report.sections import FigureInfo

P = ParamSpec("P")
R = TypeVar("R", bound=FigureInfo | None)
E = TypeVar("E")

DPI = 100
WIDTH = 7.5
COLORS = [
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#ff7f0e",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
]


def _figure(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def panel_row(height: float, n: int) -> tuple[Figure, np.ndarray]:
    """A figure of the report's width and ``height`` inches, and its ``n`` panels side by side
    sharing the y axis."""
    fig = _figure(WIDTH, height)
    return fig, fig.subplots(1, n, sharey=True, squeeze=False)[0]


@dataclass(frozen=True)
class FigureText:
    """A figure's file and its words: ``path``, the PNG written; ``title``, drawn over the
    figure; ``caption``, the report's line under it; ``xlabel`` and ``ylabel``, its axes' names
    where the caller names them (:func:`points_with_ci`, :func:`grouped_bars`,
    :func:`line_panels`, :func:`signed_lines`; the other figures name their own axes). The words
    hold run labels, conditions and sample ids from logs and models, drawn as written
    (:func:`literal_text`)."""

    path: Path
    title: str
    caption: str = ""
    xlabel: str = ""
    ylabel: str = ""


def _panel_figure(
    height: float,
    entries: Sequence[E],
    draw: Callable[[Axes, E], tuple[str, list[str]]],
    ylabel: str,
    text: FigureText,
    legend: Callable[[Figure, Axes], object] | None = None,
) -> FigureInfo | None:
    """A row of panels (:func:`panel_row`), one per entry, saved to ``text.path``: ``draw``
    draws an entry in its panel and returns the panel's name and its series' labels; the first
    panel's y axis is ``ylabel``; ``legend`` (when given) draws the legend from the figure and
    the first panel; ``text.title`` over the row. None when there are no entries."""
    if not entries:
        return None
    fig, axes = panel_row(height, len(entries))
    panels = [draw(ax, entry) for ax, entry in zip(axes, entries, strict=True)]
    axes[0].set_ylabel(ylabel, fontsize=9)
    if legend is not None:
        legend(fig, axes[0])
    fig.suptitle(text.title, fontsize=10)
    return save_figure(fig, text, panels)


def _label_panel(ax: Axes, title: str, xlabel: str, ylim: tuple[float, float]) -> None:
    """Panel ``ax`` titled ``title``, its x axis ``xlabel``, its y axis over ``ylim``."""
    ax.set_title(title, fontsize=9)
    ax.set_xlabel(xlabel, fontsize=9)
    ax.set_ylim(*ylim)
    ax.tick_params(labelsize=8)


def literal_text(fig: Figure) -> None:
    """Every text of ``fig`` drawn as written: no mathtext, no TeX (a sample id holding
    ``$\\frac{$`` is those characters, not a formula that fails to parse)."""
    for text in fig.findobj(Text):
        text.set_parse_math(False)
        text.set_usetex(False)


def drawn(draw: Callable[P, R]) -> Callable[P, R]:
    """``draw`` (a figure function taking its :class:`FigureText` as ``text``) that, when the
    figure cannot be drawn, returns a :class:`FigureInfo` of ``text.path`` and no image, its
    ``failed`` the reason, instead of raising."""

    @functools.wraps(draw)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return draw(*args, **kwargs)
        except Exception as e:  # the figure alone is lost; the section goes on
            text = inspect.signature(draw).bind_partial(*args, **kwargs).arguments["text"]
            return cast(R, FigureInfo(Path(text.path), 0, 0, [], failed=error_line(e)))

    return run


def save_figure(fig: Figure, text: FigureText, panels: list[tuple[str, list[str]]]) -> FigureInfo:
    """Write ``fig`` as a PNG to ``text.path`` (its text drawn literally, :func:`literal_text`):
    its :class:`FigureInfo` with ``panels`` (each panel's name and its series' labels) and the
    caption of ``text``."""
    literal_text(fig)
    path = Path(text.path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(
        path, dpi=DPI, format="png", metadata={"Software": None}, pil_kwargs={"optimize": True}
    )
    w, h = fig.get_size_inches()
    return FigureInfo(path, round(w * DPI), round(h * DPI), panels, text.caption)


def _finite(values: Sequence[float]) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    return arr[np.isfinite(arr)]


# --- selfcommit --------------------------------------------------------------------------------


@drawn
def paired_differences(
    diffs: dict[str, Sequence[float]],
    aurocs: dict[str, float],
    text: FigureText,
    bin_width: float = 0.1,
) -> FigureInfo:
    """One row per summary: histogram of the paired differences (bins of ``bin_width`` centred
    on -1, ..., 0, ..., 1), the median as a vertical line, the AUROC written at the right."""
    names = list(diffs)
    fig = _figure(WIDTH, 0.4 + 1.05 * max(1, len(names)))
    axes = fig.subplots(max(1, len(names)), 1, sharex=True, squeeze=False)[:, 0]
    half = bin_width / 2  # bins centred on multiples of bin_width (0 is a bin's centre)
    edges = np.arange(-1.0 - half, 1.0 + half + 1e-9, bin_width)
    panels = []
    for ax, name in zip(axes, names, strict=False):
        d = _finite(diffs[name])
        ax.hist(d, bins=edges, color=COLORS[0], edgecolor="white", label="pairs")
        if d.size:
            med = float(np.median(d))
            ax.axvline(med, color=COLORS[1], lw=2, label="median")
        ax.axvline(0.0, color="0.6", lw=0.8, ls=":")
        ax.set_ylabel(name, rotation=0, ha="right", va="center", fontsize=9)
        ax.tick_params(labelsize=8)
        ax.yaxis.get_major_locator().set_params(integer=True)
        a = aurocs.get(name, math.nan)
        ax.text(
            1.01,
            0.5,
            f"AUROC\n{a:.2f}" if not math.isnan(a) else "AUROC\n—",
            transform=ax.transAxes,
            va="center",
            ha="left",
            fontsize=8,
        )
        panels.append((name, ["pairs"]))
    axes[-1].set_xlabel("honest − hinted (paired by problem); red line: median", fontsize=9)
    axes[-1].set_xlim(-1.1, 1.1)
    fig.suptitle(text.title, fontsize=10)
    return save_figure(fig, text, panels)


@dataclass
class CurvePair:
    """A problem's honest and hinted c(t), picked by ``rule``."""

    label: str
    rule: str
    pair_id: str
    honest: tuple[Sequence[float], Sequence[float]]
    hinted: tuple[Sequence[float], Sequence[float]]
    detail: str = ""


def pick_panel(ax: Axes, pick: CurvePair, theta: float) -> None:
    """Panel ``ax`` of ``pick``'s c(t) against t/T: titled by the pick, theta dashed."""
    ax.axhline(theta, color="0.5", lw=0.8, ls="--")
    ax.set_xlim(-0.03, 1.03)
    _label_panel(ax, f"{pick.label}\n{pick.pair_id}{pick.detail}", "t / T", (-0.05, 1.05))


@drawn
def curve_pairs(picks: Sequence[CurvePair], theta: float, text: FigureText) -> FigureInfo | None:
    """One panel per pick: c(t) of the honest and hinted response against t/T, theta dashed."""

    def draw(ax: Axes, pick: CurvePair) -> tuple[str, list[str]]:
        for (x, y), label, color, marker in (
            (pick.honest, "honest", COLORS[0], "o"),
            (pick.hinted, "hinted", COLORS[1], "s"),
        ):
            ax.plot(
                x, y, marker=marker, ms=3.5, lw=1.4, color=color, label=label, drawstyle="default"
            )
        pick_panel(ax, pick, theta)
        return pick.label, ["honest", "hinted"]

    def legend(fig: Figure, first: Axes) -> None:
        fig.legend(
            *first.get_legend_handles_labels(),
            loc="outside lower center",
            ncols=2,
            fontsize=8,
            frameon=False,
        )

    return _panel_figure(2.7, picks, draw, "c(t)", text, legend)


# --- trace_tutor -------------------------------------------------------------------------------


@dataclass
class Band:
    """A mean curve with its 95% band."""

    label: str
    mean: Sequence[float]
    low: Sequence[float]
    high: Sequence[float]


@drawn
def pass_curves(
    panels_in: Sequence[tuple[str, Sequence[float], Sequence[Band]]], text: FigureText
) -> FigureInfo | None:
    """One panel per keyed condition: mean pass rate against checkpoint (%), shaded 95% bands."""

    def draw(ax: Axes, panel: tuple[str, Sequence[float], Sequence[Band]]) -> tuple[str, list[str]]:
        name, x, bands = panel
        for i, b in enumerate(bands):
            color = COLORS[i % len(COLORS)]
            ax.plot(x, b.mean, marker="o", ms=3.5, color=color, label=b.label)
            ax.fill_between(x, b.low, b.high, color=color, alpha=0.15, lw=0)
        _label_panel(ax, name, "prefix of the explanation (%)", (-0.03, 1.03))
        ax.legend(fontsize=7, loc="upper left")
        return name, [b.label for b in bands]

    return _panel_figure(3.0, panels_in, draw, "mean pass rate", text)


@drawn
def paired_shift(
    panels_in: Sequence[tuple[str, Sequence[float], Sequence[float]]],
    text: FigureText,
    labels: tuple[str, str] = ("key visible", "key masked"),
) -> FigureInfo | None:
    """One panel per keyed condition: each problem's paired AUC difference before (key visible)
    and after masking, joined by a grey line; medians as black bars."""
    rng = np.random.default_rng(0)  # horizontal jitter only

    def draw(
        ax: Axes, panel: tuple[str, Sequence[float], Sequence[float]]
    ) -> tuple[str, list[str]]:
        name, before, after = panel
        b, a = np.asarray(before, dtype=float), np.asarray(after, dtype=float)
        jitter = rng.uniform(-0.06, 0.06, size=b.size)
        for i in range(b.size):
            ax.plot([0 + jitter[i], 1 + jitter[i]], [b[i], a[i]], color="0.75", lw=0.8, zorder=1)
        ax.scatter(0 + jitter, b, color=COLORS[0], s=14, zorder=2, label=labels[0])
        ax.scatter(1 + jitter, a, color=COLORS[1], s=14, zorder=2, label=labels[1])
        for x, v in ((0, b), (1, a)):
            if v.size:
                ax.hlines(np.median(v), x - 0.22, x + 0.22, color="black", lw=2, zorder=3)
        ax.axhline(0.0, color="0.5", lw=0.8, ls=":")
        ax.set_xticks([0, 1], labels, fontsize=8)
        ax.set_xlim(-0.5, 1.5)
        ax.set_title(f"{name} (n = {b.size})", fontsize=9)
        ax.tick_params(labelsize=8)
        return name, list(labels)

    ylabel = "AUC(keyed) − AUC(question-only)"
    return _panel_figure(3.0, panels_in, draw, ylabel, text)


# --- report_ll and comparisons -------------------------------------------------------------------


@drawn
def points_with_ci(
    categories: Sequence[str],
    series: Sequence[Band],
    text: FigureText,
    height: float = 3.0,
) -> FigureInfo:
    """Means with CI error bars per category, one offset series per entry of ``series``."""
    fig = _figure(WIDTH, height)
    ax = fig.subplots()
    x = np.arange(len(categories), dtype=float)
    n = max(1, len(series))
    width = 0.6 / n
    for i, s in enumerate(series):
        m = np.asarray(s.mean, dtype=float)
        lo = np.asarray(s.low, dtype=float)
        hi = np.asarray(s.high, dtype=float)
        err = np.vstack(
            [np.where(np.isfinite(lo), m - lo, 0.0), np.where(np.isfinite(hi), hi - m, 0.0)]
        )
        ax.errorbar(
            x + (i - (n - 1) / 2) * width,
            m,
            yerr=err,
            fmt="o",
            ms=5,
            capsize=3,
            color=COLORS[i % len(COLORS)],
            label=s.label,
        )
    ax.axhline(0.0, color="0.5", lw=0.8, ls=":")
    ax.set_xticks(x, categories, fontsize=8)
    ax.set_ylabel(text.ylabel, fontsize=9)
    if text.xlabel:
        ax.set_xlabel(text.xlabel, fontsize=9)
    ax.tick_params(labelsize=8)
    ax.legend(fontsize=8)
    ax.set_title(text.title, fontsize=10)
    return save_figure(fig, text, [(text.title, [s.label for s in series])])


@drawn
def grouped_bars(
    categories: Sequence[str],
    series: Sequence[tuple[str, Sequence[float]]],
    text: FigureText,
    reference: float | None = None,
    ylim: tuple[float, float] | None = None,
) -> FigureInfo:
    """Grouped bars: one group per category, one bar (series) per run."""
    fig = _figure(WIDTH, 3.0)
    ax = fig.subplots()
    x = np.arange(len(categories), dtype=float)
    n = max(1, len(series))
    width = 0.8 / n
    for i, (label, values) in enumerate(series):
        v = np.asarray(values, dtype=float)
        ax.bar(
            x + (i - (n - 1) / 2) * width,
            np.nan_to_num(v, nan=0.0),
            width * 0.95,
            color=COLORS[i % len(COLORS)],
            label=label,
        )
    if reference is not None:
        ax.axhline(reference, color="0.4", lw=0.8, ls="--")
    ax.set_xticks(x, categories, fontsize=8)
    if ylim:
        ax.set_ylim(*ylim)
    ax.set_ylabel(text.ylabel, fontsize=9)
    ax.tick_params(labelsize=8)
    ax.legend(fontsize=8)
    ax.set_title(text.title, fontsize=10)
    return save_figure(fig, text, [(text.title, [label for label, _ in series])])


def _run_lines(
    ax: Axes, x: Sequence[float], series: Sequence[tuple[str, Sequence[float]]]
) -> list[str]:
    """One dotted line per run of ``series`` over ``x`` (colours in :data:`COLORS` order); the
    runs' labels."""
    for i, (label, y) in enumerate(series):
        ax.plot(x, y, marker="o", ms=3, color=COLORS[i % len(COLORS)], label=label)
    return [label for label, _ in series]


@drawn
def line_panels(
    panels_in: Sequence[tuple[str, Sequence[float], Sequence[tuple[str, Sequence[float]]]]],
    text: FigureText,
) -> FigureInfo | None:
    """One panel per entry, one line per run."""

    def draw(
        ax: Axes, panel: tuple[str, Sequence[float], Sequence[tuple[str, Sequence[float]]]]
    ) -> tuple[str, list[str]]:
        name, x, series = panel
        labels = _run_lines(ax, x, series)
        _label_panel(ax, name, text.xlabel, (-0.03, 1.03))
        return name, labels

    def legend(fig: Figure, first: Axes) -> None:
        first.legend(fontsize=7)

    return _panel_figure(2.8, panels_in, draw, text.ylabel, text, legend)


@drawn
def signed_lines(
    x: Sequence[float],
    series: Sequence[tuple[str, Sequence[float]]],
    text: FigureText,
) -> FigureInfo | None:
    """One line per entry of ``series`` over ``x``, y over [-1, 1] with a line at 0 (NaN points
    are gaps)."""
    if not series:
        return None
    fig = _figure(WIDTH, 2.8)
    ax = fig.subplots()
    ax.axhline(0.0, color="#999999", lw=0.8)
    labels = _run_lines(ax, x, series)
    ax.set_ylim(-1.03, 1.03)
    ax.set_xlabel(text.xlabel, fontsize=9)
    ax.set_ylabel(text.ylabel, fontsize=9)
    ax.tick_params(labelsize=8)
    ax.legend(fontsize=7)
    fig.suptitle(text.title, fontsize=10)
    return save_figure(fig, text, [(text.title, labels)])


# --- validation ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RocLine:
    """One ROC curve to draw: its legend label (text from logs allowed) and its points."""

    label: str
    fpr: Sequence[float]
    tpr: Sequence[float]
    dashed: bool = False


@drawn
def roc_curves(lines: Sequence[RocLine], text: FigureText) -> FigureInfo | None:
    """One square panel: each line's ROC curve (true positive rate against false positive
    rate, dashed for a baseline), the chance diagonal dotted; the legend holds the labels. None
    when there are no lines."""
    if not lines:
        return None
    fig = _figure(WIDTH, 4.6)
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1], color="0.6", lw=0.8, ls=":")
    for i, line in enumerate(lines):
        ax.plot(
            line.fpr,
            line.tpr,
            color=COLORS[i % len(COLORS)],
            lw=1.6,
            ls="--" if line.dashed else "-",
            label=line.label,
        )
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_aspect("equal")
    ax.set_xlabel(text.xlabel or "false positive rate", fontsize=9)
    ax.set_ylabel(text.ylabel or "true positive rate", fontsize=9)
    ax.tick_params(labelsize=8)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.02, 0.5), frameon=False)
    fig.suptitle(text.title, fontsize=10)
    return save_figure(fig, text, [(text.title, [line.label for line in lines])])
