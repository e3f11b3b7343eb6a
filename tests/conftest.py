"""Shared fixtures: the CLI runner, the shared data folder, small datasets.

Tests write only under pytest's temporary directory: every library scratch
location (``tempfile``, matplotlib's cache, Dask's spill directory, XDG caches)
points into it for the session, and hypothesis keeps no example database.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from privtool.cli import main
from privtool.registry import Registry, load_registry

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"

settings.register_profile("privtool", parent=settings.get_profile("default"), database=None)
settings.load_profile("privtool")

SCRATCH_VARIABLES = ("TMPDIR", "MPLCONFIGDIR", "XDG_CACHE_HOME", "DASK_TEMPORARY_DIRECTORY")


@pytest.fixture(scope="session", autouse=True)
def _confine_scratch_files(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Point every scratch location of the test session (and of the processes
    it starts) into the session's temporary directory."""
    scratch = tmp_path_factory.mktemp("scratch")
    patch = pytest.MonkeyPatch()
    for variable in SCRATCH_VARIABLES:
        place = scratch / variable.lower()
        place.mkdir()
        patch.setenv(variable, str(place))
    patch.setattr(tempfile, "tempdir", os.environ["TMPDIR"])
    if "dask" in sys.modules:  # imported before the variables were set: tell it directly
        import dask

        dask.config.set({"temporary-directory": os.environ["DASK_TEMPORARY_DIRECTORY"]})
    yield
    patch.undo()


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
