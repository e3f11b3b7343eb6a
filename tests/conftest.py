"""Shared fixtures: the CLI runner, the shared data folder, small datasets.

Tests write only under pytest's temporary directory: every library scratch
location (``tempfile``, matplotlib's cache, Dask's spill directory, XDG caches)
points into it for the session, and hypothesis keeps no example database.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir

from privtool.cli import main
from privtool.registry import Registry, load_registry

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"

# No example database (nothing written into the repository) and no deadline:
# a deadline is a timing assertion, and timings belong in benchmarks/, not in
# tests that run on loaded machines.
settings.register_profile("privtool", parent=settings.get_profile("default"), database=None, deadline=None)
settings.load_profile("privtool")

SCRATCH_VARIABLES = ("TMPDIR", "MPLCONFIGDIR", "XDG_CACHE_HOME", "DASK_TEMPORARY_DIRECTORY")


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    """Before anything is collected, point every scratch location of the test
    session (and of the processes it starts) into pytest's temporary directory
    (``trylast``: after pytest's tmp-path plugin has made its factory, which
    xdist gives each worker its own base directory for)."""
    factory: pytest.TempPathFactory = config._tmp_path_factory
    scratch = factory.mktemp("scratch")
    for variable in SCRATCH_VARIABLES:
        place = scratch / variable.lower()
        place.mkdir()
        os.environ[variable] = str(place)
    tempfile.tempdir = os.environ["TMPDIR"]
    set_hypothesis_home_dir(scratch / "hypothesis")  # its caches (e.g. constants); no database
    if "dask" in sys.modules:  # imported before the variables were set: tell it directly
        import dask

        dask.config.set({"temporary-directory": os.environ["DASK_TEMPORARY_DIRECTORY"]})


def pytest_collection_finish(session: pytest.Session) -> None:
    """Fill hypothesis's caches once every test module is imported: its Unicode
    table and the constants it reads from our own (local) modules are built in
    the fresh home above, and inside the first test that draws they took over a
    second on a loaded machine, failing that test's too_slow health check. Both
    are internals of hypothesis: if they move, the warm-up is skipped."""
    try:
        from hypothesis.internal.charmap import charmap
        from hypothesis.internal.conjecture.providers import _get_local_constants
    except ImportError:
        return
    charmap()
    _get_local_constants()


@pytest.fixture(scope="session")
def registry() -> Registry:
    return load_registry()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"the shared data folder {SHARED_DATA} is not beside the repository")
    return SHARED_DATA


@pytest.fixture
def pooled_maps(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The lengths of the maps a :class:`privtool.executors.ProcessExecutor`
    sends to its process pool during the test, in order (a pool may start
    before any map, so its existence says nothing of its use)."""
    from privtool import executors

    seen: list[int] = []
    window = executors.in_order_window

    def spying(submit, items, workers):  # type: ignore[no-untyped-def]
        seen.append(len(items))
        return window(submit, items, workers)

    monkeypatch.setattr(executors, "in_order_window", spying)
    return seen


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
