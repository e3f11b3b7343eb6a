"""Outputs of ``privtool compare``: ``results.csv``, ``results.json``, one figure
per metric with a panel per measure that varies (PNG and SVG, mean over
repeats, one line per method against the first swept parameter), the shared
utility figure (tkd, re and ARE of every method, whatever its release kind) and
a self-contained ``index.html``."""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from ..atomic import atomic_open, write_text_atomic

UTILITY_AXIS = ("tkd.tkd", "re.re", "are.are")
"""The utility measures every release kind reports (docs/metrics.md): their
columns come first among the measures and they share one figure, ``utility``."""


def columns(rows: Sequence[Mapping[str, Any]], axes: Sequence[str]) -> list[str]:
    """Method, grid axes, run columns, the shared utility axis, then every other
    measure in first-seen order."""
    seen: list[str] = [
        "method",
        *axes,
        "repeat",
        "seed",
        "seconds",
        "verdict",
        "verified",
        "certified",
        "refuted",
        "error",
        "verify_seconds",
        "cell",
        *UTILITY_AXIS,
    ]
    for row in rows:
        for key in row:
            if key not in seen:
                seen.append(key)
    return [c for c in seen if any(c in row for row in rows)]


def write_csv(path: Path, rows: Sequence[Mapping[str, Any]], cols: Sequence[str]) -> None:
    with atomic_open(path, "w") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(cols), extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow(row)


def measures(rows: Sequence[Mapping[str, Any]], axes: Sequence[str]) -> list[str]:
    """Numeric columns that vary across the runs (a constant is not worth a plot)."""
    skip = {"cell", "method", "repeat", "seed", "verdict", "verified", "refuted", *axes}
    out = []
    for col in columns(rows, axes):
        if col in skip:
            continue
        values = {
            row.get(col)
            for row in rows
            if isinstance(row.get(col), (int, float)) and not isinstance(row.get(col), bool)
        }
        if len(values) > 1:
            out.append(col)
    return out


def groups(names: Sequence[str]) -> dict[str, list[str]]:
    """Measures by the metric that produced them (``tlost.tlost_terms`` -> ``tlost``)."""
    grouped: dict[str, list[str]] = {}
    for name in names:
        grouped.setdefault(name.split(".", 1)[0], []).append(name)
    return grouped


def series(rows: Sequence[Mapping[str, Any]], x: str, y: str) -> dict[str, list[tuple[Any, float]]]:
    """Per method, mean of ``y`` per value of ``x`` (over repeats), sorted by x."""
    sums: dict[str, dict[Any, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        value = row.get(y)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and row.get(x) is not None:
            sums[row["method"]][row[x]].append(float(value))
    return {m: sorted((xv, sum(v) / len(v)) for xv, v in by_x.items()) for m, by_x in sums.items()}


MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def plot(out_dir: Path, rows: Sequence[Mapping[str, Any]], x: str, group: str, ys: Sequence[str]) -> str:
    """Write ``plots/<group>.png`` and ``.svg``, one panel per measure of the
    group; return the SVG text for the index."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "privtool"
    matplotlib.rcParams["svg.fonttype"] = "none"
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    ncols = min(3, len(ys))
    nrows = -(-len(ys) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.2 * nrows), squeeze=False, layout="constrained")
    ticks = sorted(
        {row[x] for row in rows if isinstance(row.get(x), (int, float)) and not isinstance(row.get(x), bool)}
    )
    for ax, y in zip(axes.flat, ys, strict=False):
        for n, (method, points) in enumerate(sorted(series(rows, x, y).items())):
            # Markers and dashes differ per method, so a method that ties another stays visible.
            ax.plot(
                [p[0] for p in points],
                [p[1] for p in points],
                label=method,
                marker=MARKERS[n % len(MARKERS)],
                markersize=max(3.0, 9 - 1.5 * n),
                zorder=2 + n,
                linestyle=("-", "--", ":")[n % 3],
                alpha=0.85,
            )
        if len(ticks) <= 12:
            ax.set_xticks(ticks)
        elif all(isinstance(t, int) for t in ticks):
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel(x)
        ax.set_title(y, fontsize="medium")
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(ys) :]:
        ax.set_visible(False)
    # one legend for all panels, outside them, so that no line is hidden behind it
    handles, names = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside right upper", fontsize="small")
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in group)
    plots = out_dir / "plots"
    plots.mkdir(exist_ok=True)
    with atomic_open(plots / f"{stem}.png", "wb") as handle:
        fig.savefig(handle, format="png", dpi=100, metadata={"Software": None})
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None})
    plt.close(fig)
    svg = buffer.getvalue()
    write_text_atomic(plots / f"{stem}.svg", svg)
    return svg[svg.index("<svg") :]


def index_html(
    meta: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], cols: Sequence[str], svgs: Mapping[str, str]
) -> str:
    head = "".join(f"<th>{escape(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{escape(_cell(row.get(c)))}</td>" for c in cols) + "</tr>" for row in rows)
    figures = "".join(f"<figure>{svg}</figure>" for svg in svgs.values())
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>privtool compare</title>"
        "<style>body{font-family:system-ui,sans-serif;margin:2rem;color:#1b1b1b}table{border-collapse:collapse;font-size:.85rem}"
        "td,th{border:1px solid #ccc;padding:.2rem "
        ".4rem}th{background:#f3f3f3}.plots{display:flex;flex-wrap:wrap;gap:1rem}"
        "figure{margin:0;flex:1 1 440px}code{background:#f6f8fa}</style></head><body>"
        f"<h1>privtool compare</h1><p>Data <code>{escape(str(meta.get('data')))}</code> (SHA-256 "
        f"<code>{escape(str(meta.get('input_sha256')))}</code>), "
        f"{len(rows)} runs.</p><p>Command: <code>{escape(str(meta.get('command')))}</code></p>"
        "<h2>Plots</h2><div "
        f"class='plots'>{figures}</div><h2>Results</h2><table><tr>{head}</tr>{body}</table></body></html>\n"
    )


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def write_outputs(
    out_dir: Path, meta: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], axes: Sequence[str]
) -> None:
    """Every output file, from the rows of all finished cells."""
    cols = columns(rows, axes)
    write_csv(out_dir / "results.csv", rows, cols)
    write_text_atomic(
        out_dir / "results.json", json.dumps({"meta": dict(meta), "rows": list(rows)}, indent=1, default=str) + "\n"
    )
    swept = [a for a in axes if len({row.get(a) for row in rows}) > 1] or list(axes)
    svgs = {}
    if swept:
        shared = [c for c in UTILITY_AXIS if c in cols]
        if shared:
            svgs["utility"] = plot(out_dir, rows, swept[0], "utility", shared)
        for group, ys in groups(measures(rows, axes)).items():
            svgs[group] = plot(out_dir, rows, swept[0], group, ys)
    write_text_atomic(out_dir / "index.html", index_html(meta, rows, cols, svgs))
