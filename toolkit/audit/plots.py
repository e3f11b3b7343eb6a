"""Plots of an audit, as inline SVG text: bar charts drawn here, in plain SVG.

Two charts, each a handful of rectangles and labels: importing and running
matplotlib for them cost more CPU than all the attacks of an audit of
bms-webview-2's safe release together (docs/results/scale.md, "Audit against
verify"). Only release data and result counts are plotted, never original
records; every label is XML-escaped.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from html import escape

from . import Audit

WIDTH, HEIGHT = 550, 320
LEFT, RIGHT, TOP = 62, 16, 34
FONT = 'font-family="DejaVu Sans, Arial, sans-serif"'
SEVERITY_COLOURS = (("breach", "#8e0000"), ("risk", "#f9a825"), ("info", "#90a4ae"))


def integer_ticks(top: float, most: int = 6) -> list[int]:
    """Integer ticks from 0 up to at least ``top``, a 1-2-5 step apart, at most ``most`` + 1 of them."""
    if top <= 0:
        return [0, 1]
    raw = top / most
    magnitude = 10 ** max(0, math.floor(math.log10(raw))) if raw >= 1 else 1
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    count = math.ceil(top / step)
    return [i * step for i in range(count + 1)]


def _text(x: float, y: float, label: str, anchor: str = "middle", size: int = 11, extra: str = "") -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}" {FONT}{extra}>{escape(label)}</text>'
    )


def bar_chart(
    title: str,
    positions: Sequence[float],
    series: Sequence[tuple[str, str, Sequence[int]]],
    xticks: Sequence[tuple[float, str]],
    xlabel: str,
    ylabel: str,
    slanted: bool = False,
) -> str:
    """A bar chart: one bar at each of ``positions`` (x in data units, bars
    0.8 wide, at least a pixel), the ``series`` (name, colour, one value per
    bar) stacked in order, with a legend beside the plot when there are
    several; ``xticks`` are (position, label), ``slanted`` labels for names."""
    bottom = 80 if slanted else 54
    right = RIGHT + (84 if len(series) > 1 else 0)
    plot_w, plot_h = WIDTH - LEFT - right, HEIGHT - TOP - bottom
    totals = [sum(values[i] for _, _, values in series) for i in range(len(positions))]
    ticks = integer_ticks(max(totals, default=0))
    y_scale = plot_h / ticks[-1]
    low = min(positions, default=0) - 0.5
    span = max(positions, default=0) + 0.5 - low
    x_scale = plot_w / span
    width = max(1.0, 0.8 * x_scale)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(title)}">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        _text(LEFT + plot_w / 2, 20, title, size=13),
    ]
    base = TOP + plot_h
    for tick in ticks:
        y = base - tick * y_scale
        parts.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + plot_w}" y2="{y:.1f}" stroke="#e0e0e0"/>')
        parts.append(_text(LEFT - 6, y + 4, f"{tick:,}", anchor="end", size=10))
    for i, position in enumerate(positions):
        x = LEFT + (position - low) * x_scale - width / 2
        level = 0
        for name, colour, values in series:
            if values[i]:
                y = base - (level + values[i]) * y_scale
                parts.append(
                    f'<rect x="{x:.2f}" y="{y:.1f}" width="{width:.2f}" height="{values[i] * y_scale:.1f}" '
                    f'fill="{colour}"><title>{escape(f"{position:g}: {values[i]:,} {name}")}</title></rect>'
                )
            level += values[i]
    for position, label in xticks:
        x = LEFT + (position - low) * x_scale
        parts.append(f'<line x1="{x:.1f}" y1="{base}" x2="{x:.1f}" y2="{base + 4}" stroke="#333"/>')
        if slanted:
            turn = f' transform="rotate(-25 {x:.1f} {base + 14:.1f})"'
            parts.append(_text(x, base + 14, label, anchor="end", size=10, extra=turn))
        else:
            parts.append(_text(x, base + 15, label, size=10))
    parts.append(f'<line x1="{LEFT}" y1="{base}" x2="{LEFT + plot_w}" y2="{base}" stroke="#333"/>')
    parts.append(f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{base}" stroke="#333"/>')
    parts.append(_text(LEFT + plot_w / 2, HEIGHT - 8, xlabel))
    parts.append(_text(16, TOP + plot_h / 2, ylabel, extra=f' transform="rotate(-90 16 {TOP + plot_h / 2:.1f})"'))
    if len(series) > 1:
        for n, (name, colour, _) in enumerate(series):
            y = TOP + 6 + 16 * n
            parts.append(f'<rect x="{WIDTH - right + 12}" y="{y}" width="12" height="10" fill="{colour}"/>')
            parts.append(_text(WIDTH - right + 28, y + 9, name, anchor="start", size=10))
    parts.append("</svg>")
    return "".join(parts)


def release_shape_svg(audit: Audit) -> str:
    """Histogram of cluster sizes (disassociated) or record sizes (other kinds)."""
    release = audit.release
    if release.kind == "disassociated":
        values = [c.size for c in release.clusters]
        xlabel, title, unit = "records per cluster", "Cluster sizes", "clusters"
    else:
        values = [len(r) for r in release.records]
        xlabel, title, unit = "items per published record", "Record sizes", "records"
    counts = Counter(values)
    xs = sorted(counts)
    low, high = (xs[0], xs[-1]) if xs else (0, 0)
    ticks = [(t, f"{t:,}") for t in integer_ticks(high) if low - 0.5 <= t <= high + 0.5] or [(low, f"{low:,}")]
    return bar_chart(title, xs, [(unit, "#4c72b0", [counts[x] for x in xs])], ticks, xlabel, "count")


def results_svg(audit: Audit) -> str:
    """Per attack: its findings by severity (breach, risk, info), stacked."""
    runs = audit.assessment.attacks
    labels = [run.attack for run in runs] or ["(no attack)"]
    series = [
        (name, colour, [sum(1 for f in run.findings if f.severity == name) for run in runs] or [0])
        for name, colour in SEVERITY_COLOURS
    ]
    positions = list(range(len(labels)))
    ticks = list(zip(positions, labels, strict=True))
    return bar_chart("Attack findings by severity", positions, series, ticks, "attack", "findings", slanted=True)
