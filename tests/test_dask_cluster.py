"""The multi-machine recipe of docs/executors.md, played on one machine.

A scheduler (a ``LocalCluster`` started without workers) and two worker
processes started exactly as the recipe starts them on other hosts (``dask
worker ADDRESS --nthreads 1``), each in its own empty directory (working
directory, ``--local-directory`` and ``TMPDIR``). The commands run in a third
directory with relative paths, so a worker that opened an input or output file
would not find it: nothing may depend on a file system shared with the workers.
The releases must be byte-identical to the serial ones, every certificate must
hold, and both workers must have executed tasks.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

WORKERS = 2


def start_worker(address: str, home: Path) -> subprocess.Popen[bytes]:
    """``dask worker ADDRESS --nthreads 1`` in its own directory, as on a worker host."""
    home.mkdir()
    env = {**os.environ, "TMPDIR": str(home)}
    argv = [sys.executable, "-m", "dask", "worker", address, "--nthreads", "1", "--local-directory", str(home)]
    return subprocess.Popen(
        [*argv, "--no-dashboard"], cwd=home, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def test_recipe_on_a_scheduler_with_separate_worker_processes(
    tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    distributed = pytest.importorskip("dask.distributed")
    client_dir = tmp_path / "client"
    client_dir.mkdir()
    monkeypatch.chdir(client_dir)
    synth = ["synth", "--records", "2000", "--items", "60", "--avg-size", "5", "--max-size", "20", "--seed", "2"]
    assert run_cli(*synth, "-o", "data.dat").code == 0
    cluster = distributed.LocalCluster(n_workers=0, processes=True, scheduler_port=0, dashboard_address=":0")
    workers = [start_worker(cluster.scheduler_address, tmp_path / f"worker{n}") for n in range(WORKERS)]
    try:
        with distributed.Client(cluster.scheduler_address) as client:
            client.wait_for_workers(WORKERS, timeout=120)
            releases = {}
            for name, executor in (("serial", ["--executor", "serial"]), ("dask", ["--executor", "dask"])):
                if name == "dask":
                    executor += ["--scheduler", cluster.scheduler_address]
                plain, safe = f"{name}-plain.json", f"{name}-safe.json"
                anonymize = ["anonymize", "data.dat", "--method", "disassociation", "--k", "3", "--seed", "5"]
                result = run_cli(*anonymize, "-o", plain, "--trail", f"{plain}.trail", "-q", *executor)
                assert result.code == 0, result.err
                result = run_cli(
                    "sanitize", plain, "--sanitizer", "safe-disassociation", "--trail", f"{plain}.trail",
                    "-o", safe, "--trail-out", f"{safe}.trail", "--seed", "5", "-q", *executor,
                )  # fmt: skip
                assert result.code == 0, result.err
                releases[name] = [Path(f).read_bytes() for f in (plain, f"{plain}.trail", safe, f"{safe}.trail")]
            verify = ["verify", "dask-safe.json", "--trail", "dask-safe.json.trail", "--original", "data.dat"]
            result = run_cli(*verify, *executor)
            assert result.code == 0, result.out + result.err
            executed = client.run(lambda dask_worker: dask_worker.state.executed_count)
    finally:
        for worker in workers:
            worker.terminate()
        for worker in workers:
            worker.wait(timeout=60)
        cluster.close()
    assert releases["dask"] == releases["serial"]
    assert len(executed) == WORKERS and all(count > 0 for count in executed.values()), executed
    for n in range(WORKERS):
        assert not [p.name for p in (tmp_path / f"worker{n}").rglob("*") if p.suffix in (".json", ".dat")]
