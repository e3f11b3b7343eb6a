"""How a Dask executor starts (docs/executors.md, "The fixed cost of a Dask stage"):
its local workers are forked from the driver when the driver has no other
thread, from a fork server that imports only what they need otherwise, and a
cluster that starts in the background still reports an unreachable scheduler
as one sentence, exit 2."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PROBE = textwrap.dedent(
    """
    import json, os, sys, threading
    from distributed import get_worker
    from privtool.dask_executor import DaskExecutor

    def probe(item):
        return os.getppid(), "pandas" in sys.modules, "profile" in get_worker().periodic_callbacks

    if sys.argv[1] == "threaded":  # a thread of the caller's own, alive while the cluster starts
        stop = threading.Event()
        threading.Thread(target=stop.wait, daemon=True).start()
    executor = DaskExecutor(workers=2)
    try:
        seen = sorted(set(executor.imap(probe, list(range(64)))))
    finally:
        executor.close()
    print(json.dumps({"driver": os.getpid(), "workers": seen, "driver_pandas": "pandas" in sys.modules}))
    """
)


def _probe(mode: str) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    report: dict = json.loads(done.stdout.splitlines()[-1])
    assert report["workers"], report
    assert not any(pandas for _, pandas, _ in report["workers"]), report
    assert not any(profiling for _, _, profiling in report["workers"]), report
    assert report["driver_pandas"] is False
    return report


@pytest.mark.parametrize("mode", ["alone", "threaded"])
def test_local_workers_are_forked_from_the_driver_only_when_it_has_no_other_thread(mode: str) -> None:
    """In a fresh interpreter (a fork server already running in this one would
    serve instead): with no thread but the one making the executor, the workers
    are the driver's own children (forked from it); with another thread they
    are not (forked by the fork server, as spawned ones are not either). Either
    way neither they nor the driver import pandas, which Dask's own preload
    list would, and no worker runs Dask's statistical profiler."""
    pytest.importorskip("dask.distributed")
    pytest.importorskip("pandas")  # without it installed there is nothing to keep out
    report = _probe(mode)
    parents = {parent for parent, _, _ in report["workers"]}
    if mode == "alone":
        assert parents == {report["driver"]}, report
    else:
        assert report["driver"] not in parents, report


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_scheduler_is_one_sentence_exit_2(tmp_path: Path, run_cli) -> None:
    """The executor connects in the background while the command reads its
    input; the failure still ends the run with the one sentence it always gave."""
    pytest.importorskip("dask.distributed")
    data, release = tmp_path / "d.dat", tmp_path / "r.json"
    synth = ["synth", "--records", "300", "--items", "40", "--avg-size", "5", "--max-size", "20", "--seed", "1"]
    assert run_cli(*synth, "-o", data).code == 0
    assert run_cli("anonymize", data, "--method", "disassociation", "--k", "3", "-o", release, "-q").code == 0
    address = f"tcp://127.0.0.1:{_closed_port()}"
    result = run_cli("verify", release, "-q", "--executor", "dask", "--scheduler", address)
    assert result.code == 2
    assert result.err.startswith(f"privtool: error: cannot reach the Dask scheduler at {address}")
    assert len(result.err.strip().splitlines()) == 1, result.err
