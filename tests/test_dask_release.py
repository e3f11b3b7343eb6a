"""A release made on a real Dask LocalCluster is byte-identical to the serial one."""

from __future__ import annotations

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
