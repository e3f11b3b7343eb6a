"""Shared fixtures: the CLI runner, the shared data folder, small datasets."""

from __future__ import annotations

from pathlib import Path

import pytest

from privtool.cli import main
from privtool.registry import Registry, load_registry

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def registry() -> Registry:
    return load_registry()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"the shared data folder {SHARED_DATA} is not beside the repository")
    return SHARED_DATA


class CliResult:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]):
    """Run ``privtool ARGS`` in-process; returns exit code, stdout and stderr."""

    def run(*args: str) -> CliResult:
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run
