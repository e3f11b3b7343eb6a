"""The one rule that chooses an audit report's format from ``--format`` and
``-o`` (``privtool audit`` and ``Result.audit``): a report is written where it
was asked for, or the run refuses; it is never dropped silently."""

from __future__ import annotations

import pytest

from privtool.audit.reports import EXTENSIONS, RENDERERS, report_format
from privtool.errors import ParameterError


@pytest.mark.parametrize(
    ("path", "given", "chosen"),
    [
        (None, None, "terminal"),
        (None, "terminal", "terminal"),
        ("a.html", None, "html"),
        ("dir.v2/a.HTM", None, "html"),
        ("a.md", None, "md"),
        ("a.json", None, "json"),
        ("a.html", "json", "json"),  # a chosen format wins
        ("a.txt", "md", "md"),
    ],
)
def test_chosen_format(path: str | None, given: str | None, chosen: str) -> None:
    assert report_format(path, given) == chosen


@pytest.mark.parametrize(
    ("path", "given", "sentence"),
    [
        (None, "html", "needs -o REPORT"),
        ("a.html", "terminal", "would be ignored"),
        ("a.txt", None, "cannot tell the report format of a.txt"),
        ("a.json.gz", None, "cannot tell the report format"),
        ("report", None, "cannot tell the report format"),
        ("a.pdf", "pdf", "must be one of json, md, html"),
    ],
)
def test_refused(path: str | None, given: str | None, sentence: str) -> None:
    with pytest.raises(ParameterError, match=sentence):
        report_format(path, given)


def test_every_extension_names_a_renderer() -> None:
    assert set(EXTENSIONS.values()) == set(RENDERERS)
