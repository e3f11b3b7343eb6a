"""Every example of docs/python-api.md runs, outputs included (doctest), and
no Python block of the page escapes the check."""

from __future__ import annotations

import doctest
import os
import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parent.parent / "docs" / "python-api.md"


def test_every_python_block_is_a_doctest() -> None:
    blocks = re.findall(r"^```(\w*)\n(.*?)^```", PAGE.read_text(), flags=re.M | re.S)
    assert blocks
    for language, body in blocks:
        assert language in ("pycon", "bash"), f"a ```{language} block would not be run"
        if language == "pycon":
            assert all(line.startswith((">>>", "...")) for line in body.splitlines()[:1]), body


def test_the_examples_run_with_the_outputs_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    failures, attempted = doctest.testfile(
        os.fspath(PAGE),
        module_relative=False,
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
        raise_on_error=False,
        verbose=False,
    )
    assert attempted > 20
    assert failures == 0
