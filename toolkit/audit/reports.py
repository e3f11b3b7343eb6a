"""The audit report files: one renderer per format, shared by ``privtool audit
--format FORMAT -o REPORT`` and :meth:`privtool.Result.audit`, and the one rule
both follow to choose the format (:func:`report_format`), so that a report is
never lost silently."""

from __future__ import annotations

import os
from collections.abc import Callable

from ..atomic import write_text_atomic
from ..errors import ParameterError
from . import Audit
from .html import render_html
from .render import render_json, render_markdown

RENDERERS: dict[str, Callable[[Audit], str]] = {"json": render_json, "md": render_markdown, "html": render_html}
"""Report format -> the function that renders an audit in it."""

EXTENSIONS: dict[str, str] = {".html": "html", ".htm": "html", ".md": "md", ".json": "json"}
"""File extension (lower case) -> the report format a file named so gets when none is given."""

TERMINAL = "terminal"
"""The report printed on the terminal (no file)."""


def report_format(path: str | os.PathLike[str] | None, given: str | None) -> str:
    """The format of the report to write to ``path`` (None: the terminal) when
    the user chose ``given`` (None: not chosen).

    A chosen format wins; without one, ``path``'s extension decides
    (:data:`EXTENSIONS`) and no path means the terminal. Every combination that
    would drop or mislabel the report is a :class:`ParameterError` instead: a
    file format without a path, the terminal with a path, an extension that
    names no format."""
    if given is not None and given != TERMINAL and given not in RENDERERS:
        raise ParameterError(f"the report format must be one of {', '.join(RENDERERS)}, not {given!r}.")
    if path is None:
        if given not in (None, TERMINAL):
            raise ParameterError(f"audit --format {given} needs -o REPORT.")
        return TERMINAL
    if given == TERMINAL:
        raise ParameterError(
            f"--format terminal prints the report and writes no file, so -o {os.fspath(path)} would be ignored: "
            "drop -o, or choose --format html, md or json."
        )
    if given is not None:
        return given
    inferred = EXTENSIONS.get(os.path.splitext(os.fspath(path))[1].lower())
    if inferred is None:
        known = ", ".join(sorted(EXTENSIONS))
        raise ParameterError(
            f"cannot tell the report format of {os.fspath(path)} from its extension ({known}); pass --format."
        )
    return inferred


def write_report(audit: Audit, path: str | os.PathLike[str], report_format: str) -> None:
    """Write ``audit`` to ``path`` in ``report_format`` (``html``, ``md`` or ``json``), atomically."""
    render = RENDERERS.get(report_format)
    if render is None:
        raise ParameterError(f"the report format must be one of {', '.join(RENDERERS)}, not {report_format!r}.")
    write_text_atomic(path, render(audit))
