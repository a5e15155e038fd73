"""Line charts as inline SVG: no script, no external file, readable in any browser."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

import attrs

PALETTE: tuple[str, ...] = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b")
"""Series colours, in order."""

WIDTH, HEIGHT = 440, 230
LEFT, RIGHT, TOP, BOTTOM = 52, 12, 28, 58
TITLE_LINE = 15
"""The height of a title line."""


@attrs.frozen
class Series:
    """One line: its label and ``(x, y)`` points (non-finite ``y`` are left out)."""

    label: str
    points: tuple[tuple[float, float], ...]
    dashed: bool = False
    errors: tuple[float, ...] = ()
    """A standard error per point (drawn as ± whiskers), or none."""
    colour: str | None = None
    """Its colour (default: the next of :data:`PALETTE` in the chart)."""


@attrs.frozen
class Marker:
    """A vertical line at ``x`` (a configuration change at a resume), labelled on the chart."""

    x: float
    label: str
    """Short, drawn at the top of the line."""
    title: str = ""
    """The longer text shown on hovering the line."""


TITLE_CHARACTERS = 58
"""The most characters of a title line that fit the chart's width at its font; a longer title
wraps at a space onto a second line."""


def title_lines(title: str, width: int = TITLE_CHARACTERS) -> list[str]:
    """``title`` in at most two lines of about ``width`` characters, split at spaces (a second line
    longer still is cut with an ellipsis; the full title stays in the chart's ``aria-label``)."""
    if len(title) <= width:
        return [title]
    cut = title.rfind(" ", 0, width + 1)
    cut = cut if cut > 0 else width
    first, rest = title[:cut].rstrip(), title[cut:].strip()
    return [first, rest if len(rest) <= width else rest[: width - 1].rstrip() + "…"]


def nice_ticks(low: float, high: float, count: int = 5, *, whole: bool = False) -> list[float]:
    """About ``count`` round tick values covering ``[low, high]``; ``whole``: whole numbers only
    (steps: a tick at step 1.5 names no step)."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return [0.0]
    if high <= low:  # one value: a range around it (0 alone: 0 to 1, as for a rate)
        pad = abs(low) * 0.1
        low, high = (low - pad, high + pad) if pad else (low, low + 1.0)
        if whole:
            low, high = math.floor(low), math.ceil(high)
    raw = (high - low) / max(count, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    factors = (1, 2, 5, 10) if whole else (1, 2, 2.5, 5, 10)
    step = next(m * magnitude for m in factors if m * magnitude >= raw)
    if whole:
        step = max(1.0, round(step))
    first = math.floor(low / step) * step
    ticks = []
    value = first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 12))
        value += step
    if ticks[-1] < high:
        ticks.append(round(value, 12))
    return ticks


def _label(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) >= 1e4 or abs(value) < 1e-3:
        return f"{value:.1e}"
    return f"{value:.3g}"


def _finite(series: Series) -> Series:
    """``series`` without its non-finite points (and their errors; a non-finite error becomes 0)."""
    errors = (*series.errors, *(0.0,) * (len(series.points) - len(series.errors)))
    kept = [
        ((x, y), e if math.isfinite(e) else 0.0)
        for (x, y), e in zip(series.points, errors, strict=False)
        if math.isfinite(x) and math.isfinite(y)
    ]
    return attrs.evolve(
        series,
        points=tuple(point for point, _ in kept),
        errors=tuple(abs(e) for _, e in kept) if series.errors else (),
    )


@attrs.frozen
class _Frame:
    """The plot area of one chart: its ticks, and where a value is drawn in it."""

    x_ticks: list[float]
    y_ticks: list[float]
    width: int = WIDTH - LEFT - RIGHT
    height: int = HEIGHT - TOP - BOTTOM

    @property
    def x0(self) -> float:
        return self.x_ticks[0]

    @property
    def x1(self) -> float:
        return self.x_ticks[-1]

    @property
    def y0(self) -> float:
        return self.y_ticks[0]

    @property
    def y1(self) -> float:
        return self.y_ticks[-1]

    def px(self, x: float) -> float:
        """The horizontal pixel of step ``x``."""
        return LEFT + (x - self.x0) / (self.x1 - self.x0 or 1.0) * self.width

    def py(self, y: float) -> float:
        """The vertical pixel of value ``y`` (SVG's y grows downwards)."""
        return TOP + self.height - (y - self.y0) / (self.y1 - self.y0 or 1.0) * self.height


def line_chart(
    title: str, series: Sequence[Series], x_label: str = "step", y_label: str = "", markers: Sequence[Marker] = ()
) -> str:
    """One chart as an ``<svg>`` element; a chart with no points says so instead of drawing axes.
    ``markers`` inside the steps drawn are vertical dashed lines."""
    drawn = [_finite(s) for s in series]
    drawn = [s for s in drawn if s.points]
    lines = title_lines(title)
    extra = TITLE_LINE * (len(lines) - 1)  # a second title line: the drawing grows upwards by one line
    head = (
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT + extra}" '
        f'viewBox="0 {-extra} {WIDTH} {HEIGHT + extra}" role="img" aria-label="{escape(title)}">'
        + "".join(
            f'<text x="{WIDTH / 2}" y="{16 - extra + index * TITLE_LINE}" text-anchor="middle" '
            f'class="chart-title">{escape(line)}</text>'
            for index, line in enumerate(lines)
        )
    )
    if not drawn:
        return (
            head + f'<text x="{WIDTH / 2}" y="{HEIGHT / 2}" text-anchor="middle" class="empty">no data yet</text></svg>'
        )
    frame = _frame(drawn)
    parts = [head, *_axes(frame, x_label, y_label), *_markers(frame, markers)]
    for index, s in enumerate(drawn):
        parts.extend(_curve(frame, s, s.colour or PALETTE[index % len(PALETTE)]))
    parts.extend(_legend(drawn))
    parts.append("</svg>")
    return "".join(parts)


def _frame(drawn: Sequence[Series]) -> _Frame:
    """Round ticks covering every point of ``drawn`` and its ± whiskers."""
    xs = [x for s in drawn for x, _ in s.points]
    ys = [y for s in drawn for _, y in s.points]
    ys += [y + sign * e for s in drawn for (_, y), e in zip(s.points, s.errors, strict=False) for sign in (-1, 1)]
    whole = all(float(x).is_integer() for x in xs)  # steps
    return _Frame(nice_ticks(min(xs), max(xs), whole=whole), nice_ticks(min(ys), max(ys)))


def _axes(frame: _Frame, x_label: str, y_label: str) -> list[str]:
    """The plot's box, its horizontal grid with the value ticks, the zero line when 0 is inside,
    the step ticks and the axis labels."""
    plot_w, plot_h = frame.width, frame.height
    parts = [f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" class="plot"/>']
    for tick in frame.y_ticks:
        y = frame.py(tick)
        parts.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>')
        parts.append(f'<text x="{LEFT - 4}" y="{y + 3:.1f}" text-anchor="end" class="tick">{_label(tick)}</text>')
    if frame.y0 < 0 < frame.y1:
        zero = frame.py(0)
        parts.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{zero:.1f}" y2="{zero:.1f}" class="zero"/>')
    for tick in frame.x_ticks:
        x = frame.px(tick)
        parts.append(
            f'<text x="{x:.1f}" y="{TOP + plot_h + 13}" text-anchor="middle" class="tick">{_label(tick)}</text>'
        )
    parts.append(f'<text x="{LEFT + plot_w / 2}" y="{TOP + plot_h + 26}" text-anchor="middle" class="axis">')
    parts.append(f"{escape(x_label)}</text>")
    if y_label:
        parts.append(
            f'<text x="12" y="{TOP + plot_h / 2}" text-anchor="middle" class="axis" '
            f'transform="rotate(-90 12 {TOP + plot_h / 2})">{escape(y_label)}</text>'
        )
    return parts


def _markers(frame: _Frame, markers: Sequence[Marker]) -> list[str]:
    """A dashed vertical line, labelled and with a hover title, per marker inside the steps drawn."""
    parts = []
    for marker in markers:
        if frame.x0 <= marker.x <= frame.x1:
            x = frame.px(marker.x)
            parts.append(
                f'<g class="marker"><title>{escape(marker.title or marker.label)}</title>'
                f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{TOP}" y2="{TOP + frame.height}" stroke="#6b7785" '
                f'stroke-width="1.2" stroke-dasharray="2 3"/>'
                f'<text x="{x + 3:.1f}" y="{TOP + 10}" class="marker-label">{escape(marker.label)}</text></g>'
            )
    return parts


def _curve(frame: _Frame, s: Series, colour: str) -> list[str]:
    """One series: its line, a whisker per standard error, and (at most 30 points) a dot per
    point whose hover title gives the value."""
    px, py = frame.px, frame.py
    dash = ' stroke-dasharray="5 3"' if s.dashed else ""
    points = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in s.points)
    parts = [f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="1.6"{dash}/>']
    for (x, y), e in zip(s.points, s.errors, strict=False):
        parts.append(
            f'<line x1="{px(x):.1f}" x2="{px(x):.1f}" y1="{py(y - e):.1f}" y2="{py(y + e):.1f}" '
            f'stroke="{colour}" stroke-width="1.2" class="whisker"/>'
        )
    if len(s.points) <= 30:
        parts.extend(
            f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="2.6" fill="{colour}"><title>'
            f"{escape(s.label)}: step {_label(x)}, {y:.4g}{f' ± {e:.3g}' if s.errors else ''}</title></circle>"
            for (x, y), e in zip(s.points, s.errors or (0.0,) * len(s.points), strict=True)
        )
    return parts


def _legend(drawn: Sequence[Series]) -> list[str]:
    """A colour swatch and label per series along the bottom, wrapping to a new row at the edge."""
    parts = []
    legend_y = HEIGHT - 20
    x = float(LEFT)
    for index, s in enumerate(drawn):
        colour = s.colour or PALETTE[index % len(PALETTE)]
        width = 22 + 6.2 * len(s.label)
        if x > LEFT and x + width > WIDTH:
            x, legend_y = float(LEFT), legend_y + 13
        parts.append(f'<rect x="{x:.0f}" y="{legend_y - 8}" width="10" height="10" fill="{colour}"/>')
        parts.append(f'<text x="{x + 13:.0f}" y="{legend_y + 1}" class="legend">{escape(s.label)}</text>')
        x += width
    return parts
