"""Plots of an audit, as inline SVG text (matplotlib, Agg backend, imported lazily).

Only release data and result counts are plotted, never original records.
"""

from __future__ import annotations

import io
from collections import Counter
from types import ModuleType
from typing import TYPE_CHECKING

from . import Audit

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _svg(fig: Figure) -> str:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def _pyplot() -> ModuleType:
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "privtool"
    matplotlib.rcParams["svg.fonttype"] = "none"
    import matplotlib.pyplot as plt

    return plt


def release_shape_svg(audit: Audit) -> str:
    """Histogram of cluster sizes (disassociated) or record sizes (other kinds)."""
    plt = _pyplot()
    release = audit.release
    if release.kind == "disassociated":
        values = [c.size for c in release.clusters]
        xlabel, title = "records per cluster", "Cluster sizes"
    else:
        values = [len(r) for r in release.records]
        xlabel, title = "items per published record", "Record sizes"
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    counts = Counter(values)
    xs = sorted(counts)
    ax.bar(xs, [counts[x] for x in xs], color="#4c72b0")
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(xlabel)
    ax.set_ylabel("count")
    ax.set_title(title)
    fig.tight_layout()
    svg = _svg(fig)
    plt.close(fig)
    return svg


def results_svg(audit: Audit) -> str:
    """Per attack: its findings by severity (breach, risk, info), stacked."""
    plt = _pyplot()
    categories = [("breach", "#8e0000"), ("risk", "#f9a825"), ("info", "#90a4ae")]
    runs = audit.assessment.attacks
    labels = [run.attack for run in runs] or ["(no attack)"]
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    bottoms = [0] * len(labels)
    for name, colour in categories:
        heights = [sum(1 for f in run.findings if f.severity == name) for run in runs] or [0]
        ax.bar(labels, heights, bottom=bottoms, color=colour, label=name)
        bottoms = [b + h for b, h in zip(bottoms, heights, strict=True)]
    from matplotlib.ticker import MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("findings")
    ax.set_title("Attack findings by severity")
    ax.legend(fontsize="small")
    fig.tight_layout()
    svg = _svg(fig)
    plt.close(fig)
    return svg
