"""Small line charts of curves as PNG images, for the log viewer's Markdown.

Inspect's log viewer (0.3.285) shows a score explanation's Markdown image only when its source is
a base64 data URI of a raster type (PNG, JPEG, GIF, WebP, ...): the Markdown is HTML-escaped
before it is rendered, so an inline ``<svg>`` shows as text, and an SVG data URI shows as its
text too (``tests/report/test_viewer_browser.py`` checks all three in the browser). So a curve
is drawn here, in pure Python, into an indexed-colour PNG of :data:`WIDTH` x :data:`HEIGHT`
pixels (1-3 KB): the y axis is a share in [0, 1] with grid lines at 0, 0.5 and 1, the x axis
runs from 0 to ``x_max``; guides are dashed horizontal lines (a threshold); each series is a
polyline through its points with a marker on each point; loose points are markers joined to
nothing. Tick labels and axis names use a 5 x 7 pixel font of the characters in
:data:`GLYPHS`. Only numbers and fixed names are drawn, never model text.
"""

from __future__ import annotations

import base64
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise

WIDTH, HEIGHT = 360, 140
"""Image size in pixels (shown at this size: a Markdown image has no width)."""
LEFT, RIGHT, TOP, BOTTOM = 30, WIDTH - 14, 14, HEIGHT - 20
"""The plot area: x pixels LEFT..RIGHT, y pixels TOP (y = 1) .. BOTTOM (y = 0)."""

PALETTE = (
    (255, 255, 255),  # 0 background
    (228, 228, 228),  # 1 grid lines
    (90, 90, 90),  # 2 axes and text
    (31, 119, 180),  # 3 first series (blue)
    (230, 120, 20),  # 4 second series (orange)
    (200, 55, 55),  # 5 guides (red)
    (150, 150, 150),  # 6 loose points (grey)
)
"""Colour of each palette index (RGB)."""
BACKGROUND, GRID, INK, BLUE, ORANGE, GUIDE, GREY = range(len(PALETTE))

SERIES_COLORS = (BLUE, ORANGE)
"""Colours of the first and second series."""

GLYPHS: dict[str, tuple[str, ...]] = {
    "0": (".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."),
    "1": ("..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."),
    "2": (".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"),
    "3": ("#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."),
    "4": ("...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."),
    "5": ("#####", "#....", "####.", "....#", "....#", "#...#", ".###."),
    "6": ("..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."),
    "7": ("#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."),
    "8": (".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."),
    "9": (".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."),
    ".": ("..", "..", "..", "..", "..", "##", "##"),
    "%": ("##...", "##..#", "...#.", "..#..", ".#...", "#..##", "...##"),
    "-": ("....", "....", "....", "####", "....", "....", "...."),
    "(": ("..#", ".#.", "#..", "#..", "#..", ".#.", "..#"),
    ")": ("#..", ".#.", "..#", "..#", "..#", ".#.", "#.."),
    " ": ("..", "..", "..", "..", "..", "..", ".."),
    "c": (".....", ".....", ".###.", "#....", "#....", "#...#", ".###."),
    "f": ("..##", ".#..", "###.", ".#..", ".#..", ".#..", ".#.."),
    "p": (".....", ".....", "####.", "#...#", "####.", "#....", "#...."),
    "t": (".#..", ".#..", "###.", ".#..", ".#..", ".#..", "..##"),
}
"""The pixel font: 7 rows per character, ``#`` = ink."""

DISC = (".###.", "#####", "#####", "#####", ".###.")
"""Filled marker, centred on the point."""
RING = ("..###..", ".#...#.", "#.....#", "#.....#", "#.....#", ".#...#.", "..###..")
"""Hollow marker (7 x 7), centred on the point; its centre keeps what was drawn there."""


@dataclass(frozen=True)
class Series:
    """A curve: ``points`` (x, y) joined in order by a line (a None y is a gap), a marker on
    each point (a ring at the indices in ``rings``, else a disc)."""

    points: Sequence[tuple[float, float | None]]
    color: int
    dashed: bool = False
    rings: frozenset[int] = field(default_factory=frozenset)


@dataclass(frozen=True)
class Point:
    """A marker joined to nothing (a probe that is no point of the curve)."""

    x: float
    y: float
    color: int = GREY
    ring: bool = False


def x_pixel(x: float, x_max: float) -> int:
    """Column of x: LEFT + round(x / x_max * (RIGHT - LEFT)) (x clipped to [0, x_max])."""
    return LEFT + round(min(max(x, 0.0), x_max) / x_max * (RIGHT - LEFT))


def y_pixel(y: float) -> int:
    """Row of a share y: BOTTOM - round(y * (BOTTOM - TOP)) (y clipped to [0, 1])."""
    return BOTTOM - round(min(max(y, 0.0), 1.0) * (BOTTOM - TOP))


def text_width(text: str) -> int:
    """Pixels ``text`` takes in the font (one blank column between characters)."""
    return sum(len(GLYPHS[ch][0]) + 1 for ch in text) - 1 if text else 0


class Canvas:
    """A WIDTH x HEIGHT grid of palette indices."""

    def __init__(self) -> None:
        self.px = [bytearray(WIDTH) for _ in range(HEIGHT)]

    def set(self, x: int, y: int, color: int) -> None:
        if 0 <= x < WIDTH and 0 <= y < HEIGHT:
            self.px[y][x] = color

    def mask(self, rows: Sequence[str], x: int, y: int, color: int) -> None:
        """Draw ``rows`` (``#`` = ink) with its top-left corner at (x, y)."""
        for dy, row in enumerate(rows):
            for dx, ch in enumerate(row):
                if ch == "#":
                    self.set(x + dx, y + dy, color)

    def marker(self, x: int, y: int, color: int, ring: bool) -> None:
        shape = RING if ring else DISC
        half = len(shape) // 2
        self.mask(shape, x - half, y - half, color)

    def text(self, text: str, x: int, y: int, color: int = INK) -> None:
        """``text`` with its top-left corner at (x, y)."""
        for ch in text:
            self.mask(GLYPHS[ch], x, y, color)
            x += len(GLYPHS[ch][0]) + 1

    def line(
        self,
        x0: int,
        y0: int,
        x1: int,
        y1: int,
        color: int,
        dashed: bool = False,
        thick: bool = True,
    ) -> None:
        """Bresenham line, 2 pixels thick unless ``thick`` is False; ``dashed``: 4 on, 3 off."""
        dx, dy = abs(x1 - x0), -abs(y1 - y0)
        sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
        err, step = dx + dy, 0
        steep = -dy > dx
        while True:
            if not dashed or step % 7 < 4:
                self.set(x0, y0, color)
                if thick and steep:
                    self.set(x0 + 1, y0, color)
                elif thick:
                    self.set(x0, y0 + 1, color)
            if x0 == x1 and y0 == y1:
                return
            e2 = 2 * err
            if e2 >= dy:
                err += dy
                x0 += sx
            if e2 <= dx:
                err += dx
                y0 += sy
            step += 1

    def png(self) -> bytes:
        """The canvas as a PNG: 4-bit palette, no filter, deflated."""

        def chunk(kind: bytes, data: bytes) -> bytes:
            return (
                struct.pack(">I", len(data))
                + kind
                + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
            )

        raw = bytearray()
        for row in self.px:
            raw.append(0)
            padded = row + bytearray(len(row) % 2)
            raw += bytes((padded[i] << 4) | padded[i + 1] for i in range(0, len(padded), 2))
        header = struct.pack(">IIBBBBB", WIDTH, HEIGHT, 4, 3, 0, 0, 0)
        palette = b"".join(bytes(rgb) for rgb in PALETTE)
        return (
            b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", header)
            + chunk(b"PLTE", palette)
            + chunk(b"IDAT", zlib.compress(bytes(raw), 9))
            + chunk(b"IEND", b"")
        )


def line_chart(
    series: Sequence[Series],
    x_max: float,
    x_ticks: Sequence[tuple[float, str]],
    y_name: str,
    x_name: str,
    guides: Sequence[float] = (),
    points: Sequence[Point] = (),
) -> bytes:
    """The PNG of ``series`` over x in [0, ``x_max``] and y in [0, 1].

    Grid lines at y = 0, 0.5, 1 labelled on the left; each guide a dashed line labelled on the
    left in its colour; a tick under the x axis at each of ``x_ticks`` (x, label; an empty
    label draws the tick only, a label that would overlap the previous one is left out);
    ``y_name`` above the y axis, ``x_name`` in the bottom-left corner (left of the x labels).
    """
    if not x_max > 0:
        raise ValueError(f"line_chart: need x_max > 0, got {x_max}")
    cv = Canvas()
    for grid_y, label in ((0.0, "0"), (0.5, "0.5"), (1.0, "1")):
        cv.line(LEFT, y_pixel(grid_y), RIGHT, y_pixel(grid_y), GRID, thick=False)
        if all(abs(grid_y - g) > 0.06 for g in guides):
            cv.text(label, LEFT - 4 - text_width(label), y_pixel(grid_y) - 3)
    for g in guides:
        cv.line(LEFT, y_pixel(g), RIGHT, y_pixel(g), GUIDE, dashed=True, thick=False)
        label = f"{g:g}"
        cv.text(label, LEFT - 4 - text_width(label), y_pixel(g) - 3, GUIDE)
    cv.line(LEFT, TOP - 4, LEFT, BOTTOM, INK, thick=False)
    cv.line(LEFT, BOTTOM, RIGHT, BOTTOM, INK, thick=False)
    cv.text(y_name, 2, 2)
    cv.text(x_name, 2, BOTTOM + 6)
    last_end = 2 + text_width(x_name)
    for x, label in x_ticks:
        px = x_pixel(x, x_max)
        cv.line(px, BOTTOM + 1, px, BOTTOM + 3, INK, thick=False)
        if label:
            start = min(max(px - text_width(label) // 2, 0), WIDTH - text_width(label))
            if start > last_end + 3:
                cv.text(label, start, BOTTOM + 6)
                last_end = start + text_width(label)
    for s in series:
        drawn = [(x_pixel(x, x_max), y_pixel(y)) if y is not None else None for x, y in s.points]
        for a, b in pairwise(drawn):
            if a is not None and b is not None:
                cv.line(*a, *b, s.color, dashed=s.dashed)
    for s in series:
        for i, (x, y) in enumerate(s.points):
            if y is not None:
                cv.marker(x_pixel(x, x_max), y_pixel(y), s.color, ring=i in s.rings)
    for p in points:
        cv.marker(x_pixel(p.x, x_max), y_pixel(p.y), p.color, ring=p.ring)
    return cv.png()


def markdown_image(png: bytes, alt: str) -> str:
    """``![alt](data:image/png;base64,...)``; brackets, backslashes and newlines in ``alt``
    are dropped (they would end the alt text)."""
    clean = "".join(ch for ch in alt if ch not in "[]\\\n\r")
    return f"![{clean}](data:image/png;base64,{base64.b64encode(png).decode('ascii')})"
