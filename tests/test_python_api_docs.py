"""Every example of docs/python-api.md runs, outputs included (doctest), its
command-line block writes the files the Python example wrote, byte for byte,
and no code block of the page escapes the check."""

from __future__ import annotations

import doctest
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

PAGE = Path(__file__).resolve().parent.parent / "docs" / "python-api.md"
BLOCKS: list[tuple[str, str]] = re.findall(r"^```(\w*)\n(.*?)^```", PAGE.read_text(), flags=re.M | re.S)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[doctest.TestResults, str, dict[str, Any]]]:
    """The page run as one doctest from a scratch folder: ``(its results, the
    report of its failures, the names it left defined)``."""
    test = doctest.DocTestParser().get_doctest(
        PAGE.read_text(), {"__name__": "python_api_docs"}, PAGE.name, os.fspath(PAGE), 0
    )
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report: list[str] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path_factory.mktemp("docs"))
        runner.run(test, out=report.append, clear_globs=False)
    yield runner.summarize(verbose=False), "".join(report), test.globs


def test_every_code_block_is_checked() -> None:
    assert BLOCKS
    for language, body in BLOCKS:
        assert language in ("pycon", "bash"), f"a ```{language} block would not be run"
        if language == "pycon":
            assert all(line.startswith((">>>", "...")) for line in body.splitlines()[:1]), body
    assert [language for language, _ in BLOCKS].count("bash") == 1  # the one the test below runs


def test_the_examples_run_with_the_outputs_shown(page: tuple[doctest.TestResults, str, dict[str, Any]]) -> None:
    results, report, _ = page
    assert results.attempted > 20
    assert results.failed == 0, report


def test_the_command_line_block_writes_the_same_files(
    page: tuple[doctest.TestResults, str, dict[str, Any]], tmp_path: Path
) -> None:
    """The page's ``privtool anonymize`` command, run on the ``csv-long`` file
    the example saved, writes the release and trail ``result.save`` wrote."""
    out: Path = page[2]["out"]
    (command,) = [body for language, body in BLOCKS if language == "bash"]
    shutil.copy(out / "baskets.long.csv", tmp_path)
    script = f'privtool() {{ "{sys.executable}" -m privtool "$@"; }}\n{command}'
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for name in ("release.json", "trail.json"):
        assert (tmp_path / name).read_bytes() == (out / name).read_bytes(), name
