"""A release made on a real Dask LocalCluster is byte-identical to the serial one."""

from __future__ import annotations

import socket
import warnings
from pathlib import Path

import pytest


def test_dask_local_cluster_release_equals_serial(tmp_path: Path, run_cli) -> None:
    pytest.importorskip("dask.distributed")
    data = tmp_path / "d.dat"
    assert (
        run_cli(
            "synth",
            "--records",
            "3000",
            "--items",
            "80",
            "--avg-size",
            "5",
            "--max-size",
            "20",
            "--seed",
            "1",
            "-o",
            data,
        ).code
        == 0
    )
    outputs = {}
    for executor in ("serial", "dask"):
        out = tmp_path / f"{executor}.json"
        args = [
            "anonymize",
            data,
            "--method",
            "disassociation",
            "--k",
            "3",
            "--sanitizer",
            "safe-disassociation",
            "--seed",
            "5",
            "-o",
            out,
            "-q",
            "--executor",
            executor,
        ]
        if executor == "dask":
            args += ["--workers", "2"]
        result = run_cli(*args)
        assert result.code == 0, result.err
        outputs[executor] = out.read_bytes()
    assert outputs["dask"] == outputs["serial"]


def test_a_taken_dashboard_port_gives_no_warning() -> None:
    """Two runs side by side (or another Dask cluster) hold port 8787; a local
    cluster of privtool's needs no dashboard, so it never warns about it."""
    pytest.importorskip("dask.distributed")
    from privtool.dask_executor import DaskExecutor

    holder = socket.socket()
    try:
        holder.bind(("127.0.0.1", 8787))
        holder.listen()
    except OSError:  # something else holds it already: the same situation
        pass
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            executor = DaskExecutor(workers=1)
            try:
                assert list(executor.imap(abs, [-1, -2, 3])) == [1, 2, 3]
            finally:
                executor.close()
    finally:
        holder.close()
    assert [str(w.message) for w in caught if "8787" in str(w.message)] == []
