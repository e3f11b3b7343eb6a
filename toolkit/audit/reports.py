"""The audit report files: one renderer per format, shared by ``privtool audit
--format FORMAT -o REPORT`` and :meth:`privtool.Result.audit`."""

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


def write_report(audit: Audit, path: str | os.PathLike[str], report_format: str) -> None:
    """Write ``audit`` to ``path`` in ``report_format`` (``html``, ``md`` or ``json``), atomically."""
    render = RENDERERS.get(report_format)
    if render is None:
        raise ParameterError(f"the report format must be one of {', '.join(RENDERERS)}, not {report_format!r}.")
    write_text_atomic(path, render(audit))
