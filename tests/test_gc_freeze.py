"""Reading a release leaves the garbage collector as it was (privtool.gcpause):
the Python API freezes nothing, so a caller's cyclic garbage is still
collected; only a command, which owns its process, freezes after reading."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import privtool
from privtool.gcpause import paused_gc


class _Node:
    """An object that can be put in a reference cycle."""

    other: _Node


@pytest.fixture(scope="module")
def release_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A small safe-disassociated release and its trail, made through the API."""
    rng = np.random.default_rng(13)
    lines = [
        " ".join(map(str, sorted({int(x) for x in rng.zipf(1.6, int(rng.integers(1, 6))) % 30}))) for _ in range(200)
    ]
    folder = tmp_path_factory.mktemp("gc")
    (folder / "data.dat").write_text("\n".join(lines) + "\n")
    result = privtool.anonymize(folder / "data.dat", "disassociation", sanitizers="safe-disassociation", k=3, m=2)
    result.save(folder / "release.json", folder / "trail.json")
    return folder / "release.json", folder / "trail.json"


def garbage_cycle() -> weakref.ref[_Node]:
    """A weak reference to one object of an unreachable two-object cycle."""
    first, second = _Node(), _Node()
    first.other, second.other = second, first
    return weakref.ref(first)


@pytest.mark.parametrize(
    "use",
    [
        pytest.param(lambda release, trail: privtool.load_release(release), id="load_release"),
        pytest.param(lambda release, trail: privtool.verify(release, trail=trail), id="verify"),
    ],
)
def test_the_api_leaves_the_collector_as_it_found_it(
    release_files: tuple[Path, Path], use: Callable[[Path, Path], object]
) -> None:
    frozen = gc.get_freeze_count()
    enabled = gc.isenabled()
    with paused_gc():  # no automatic collection: the cycle is still there when the code runs
        cycle = garbage_cycle()
        use(*release_files)
        assert gc.get_freeze_count() == frozen
    assert gc.isenabled() == enabled
    gc.collect()
    assert cycle() is None


def test_a_command_freezes_what_it_read(release_files: tuple[Path, Path], run_cli) -> None:
    release, trail = release_files
    with paused_gc():  # no automatic collection: the cycle is still there when the code runs
        cycle = garbage_cycle()
        frozen = gc.get_freeze_count()
        result = run_cli("verify", release, "--trail", trail, "--executor", "serial", "-q")
        assert result.code == 0, result.err
        assert gc.get_freeze_count() > frozen
    gc.collect()
    assert cycle() is not None  # frozen with everything else the command's process held
