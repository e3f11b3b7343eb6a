"""How the process pool starts (docs/executors.md, "The fixed cost of a process
pool"): made by a process whose only thread is the caller, its workers are
forked from that process at once; with another thread alive (a threaded
program calling the API), from a fork server at the first map that needs them.
Either way the results are the serial ones."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

import privtool
from privtool import executors
from privtool.executors import ProcessExecutor, fork_is_safe

PROBE = textwrap.dedent(
    """
    import json, multiprocessing, os, sys, threading
    from privtool.executors import ProcessExecutor

    def parent(item):
        return os.getppid()

    if __name__ == "__main__":
        if sys.argv[1] == "threaded":  # a thread of the program's own, alive while the pool starts
            stop = threading.Event()
            threading.Thread(target=stop.wait, daemon=True).start()
        executor = ProcessExecutor(2)
        before_map = [child.pid for child in multiprocessing.active_children()]
        try:
            parents = sorted(set(executor.imap(parent, list(range(64))))) if sys.argv[2] == "map" else []
        finally:
            executor.close()
        print(json.dumps({
            "driver": os.getpid(),
            "before_map": before_map,
            "parents": parents,
            "after_close": [child.pid for child in multiprocessing.active_children()],
        }))
    """
)


def _probe(tmp_path: Path, threads: str, work: str) -> dict[str, Any]:
    """Run :data:`PROBE` as a script file (a fork server's workers import the
    mapped function from it) in a fresh interpreter."""
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    done = subprocess.run(
        [sys.executable, str(script), threads, work], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return report


@pytest.mark.parametrize("threads", ["alone", "threaded"])
def test_workers_are_forked_from_the_driver_only_when_it_has_no_other_thread(tmp_path: Path, threads: str) -> None:
    """Alone: both workers run from the moment the executor is made and are
    the driver's own children. Threaded: none runs before the first map, and
    then they are the fork server's children, not the driver's."""
    report = _probe(tmp_path, threads, "map")
    if threads == "alone":
        assert len(report["before_map"]) == 2, report
        assert report["parents"] == [report["driver"]], report
    else:
        assert report["before_map"] == [], report
        assert report["parents"] and report["driver"] not in report["parents"], report
    assert report["after_close"] == [], report


def test_an_executor_that_never_mapped_stops_its_started_workers(tmp_path: Path) -> None:
    report = _probe(tmp_path, "alone", "idle")
    assert len(report["before_map"]) == 2, report
    assert report["after_close"] == [], report


def test_one_worker_or_a_threaded_caller_starts_no_process() -> None:
    """``workers=1`` maps in the calling process; another thread alive (this
    test's) leaves the pool to the first long map."""
    assert ProcessExecutor(1)._pool is None
    outcome: list[Any] = []
    worker = threading.Thread(target=lambda: outcome.append((fork_is_safe(), ProcessExecutor(2)._pool)))
    worker.start()
    worker.join()
    assert outcome == [(False, None)]


class _RecordedPool(executors.ProcessPoolExecutor):
    """A process pool that records how each one starts its workers."""

    started: ClassVar[list[str]] = []

    def __init__(self, workers: int, mp_context: Any) -> None:
        type(self).started.append(mp_context.get_start_method())
        super().__init__(workers, mp_context=mp_context)


def test_the_api_called_from_a_thread_pools_through_the_fork_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pooled_maps: list[int]
) -> None:
    """A program with threads of its own calls the API from one of them: its
    ``executor="process"`` pool forks from a fork server, never from the
    program, and finds what the serial executor finds."""
    rng = np.random.default_rng(3)
    data = tmp_path / "baskets.dat"
    data.write_text("".join(" ".join(map(str, sorted(set(rng.integers(0, 60, 6))))) + "\n" for _ in range(2000)))
    monkeypatch.setattr(executors.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(executors, "ProcessPoolExecutor", _RecordedPool)
    monkeypatch.setattr(_RecordedPool, "started", [])
    result = privtool.anonymize(data, "disassociation", k=3, seed=4)
    found: list[Any] = []
    caller = threading.Thread(target=lambda: found.append(result.attack("linkage", targets=60, executor="process")))
    caller.start()
    caller.join()
    assert _RecordedPool.started == ["forkserver"]
    assert pooled_maps  # the pool really ran
    serial = result.attack("linkage", targets=60)
    assert [(f.title, f.evidence) for f in found[0].findings] == [(f.title, f.evidence) for f in serial.findings]
