"""HTML for Jupyter: how the Python API's results display themselves.

Every result object of :mod:`privtool` has a ``_repr_html_`` built from these
pieces: a headline first (the verdict, when there is one), then a compact
table. Everything that comes from data (labels, parameters, reasons) is
escaped, so an item called ``<script>`` shows as text.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence

STATUS_COLOURS = {
    "PASS": "#1a7f37",
    "FAIL": "#cf222e",
    "INCOMPLETE": "#9a6700",
    "breach": "#cf222e",
    "risk": "#9a6700",
}
"""Colour of a headline or cell word; anything else is shown in the text colour."""


def cell(value: object) -> str:
    """One escaped table cell: floats to 4 significant digits, None as empty."""
    if value is None:
        text = ""
    elif isinstance(value, float):
        text = f"{value:.4g}"
    else:
        text = str(value)
    colour = STATUS_COLOURS.get(text)
    escaped = html.escape(text)
    return f'<span style="color:{colour};font-weight:bold">{escaped}</span>' if colour else escaped


def table(columns: Sequence[str], rows: Iterable[Sequence[object]], limit: int = 20) -> str:
    """A compact HTML table of at most ``limit`` rows, saying how many were left out."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body: list[str] = []
    left_out = 0
    for row in rows:
        if len(body) < limit:
            body.append("<tr>" + "".join(f"<td>{cell(v)}</td>" for v in row) + "</tr>")
        else:
            left_out += 1
    more = f"<p>{left_out} more row(s); <code>.to_frame()</code> has them all.</p>" if left_out else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{more}"


def headline(title: str, status: str | None = None, reason: str = "") -> str:
    """The first line of a result: its status in colour (when it has one), what it is, and why."""
    parts = []
    if status is not None:
        parts.append(cell(status))
    parts.append(html.escape(title))
    text = " ".join(parts)
    why = f"<br><small>{html.escape(reason)}</small>" if reason else ""
    return f"<p><strong>{text}</strong>{why}</p>"
