"""A release made on a real Dask LocalCluster is byte-identical to the serial one."""

from __future__ import annotations

import socket
import warnings
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
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


def _take(table: dict[str, Any], position: int) -> tuple[int, int, int]:
    return int(table["wide"][position]), int(table["narrow"][position]), int(table["strided"][position])


def test_a_function_carrying_arrays_reaches_every_worker_intact() -> None:
    """The mapped partial goes to the cluster a buffer at a time
    (``shared_on_cluster``) and is put together on a worker: its contiguous
    arrays and the one pickled in band (strided) must arrive unchanged."""
    pytest.importorskip("dask.distributed")
    from privtool.dask_executor import DaskExecutor

    rng = np.random.default_rng(7)
    table = {
        "wide": rng.integers(-(2**40), 2**40, 5000),
        "narrow": rng.integers(0, 100, 5000, dtype=np.int32),
        "strided": rng.integers(0, 9, 10000)[::2],
    }
    positions = rng.integers(0, 5000, 300).tolist()
    executor = DaskExecutor(workers=2)
    try:
        got = list(executor.imap(partial(_take, table), positions))
    finally:
        executor.close()
    assert got == [_take(table, p) for p in positions]


def _digest(item: tuple[np.ndarray, np.ndarray, str]) -> tuple[int, int, int, str]:
    wide, strided, name = item
    return int(wide.sum()), int(wide[::9973].sum()), int(strided.sum()), name


def test_batches_of_large_items_send_no_large_graph() -> None:
    """Items above Dask's large-graph threshold (10 MB, as a slice of a
    million-record release is) are scattered, not embedded in their tasks:
    no "Sending large graph" warning, and every item arrives intact (a
    contiguous array out of band, a strided one in band, a string)."""
    pytest.importorskip("dask.distributed")
    import dask

    from privtool.dask_executor import DaskExecutor
    from privtool.executors import SerialExecutor

    threshold = dask.utils.parse_bytes(dask.config.get("distributed.admin.large-graph-warning-threshold"))
    rng = np.random.default_rng(11)
    items = [
        (rng.integers(-(2**40), 2**40, threshold // 8 + 1000), rng.integers(0, 9, 2000)[::3], f"item {i}")
        for i in range(3)
    ]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        executor = DaskExecutor(workers=2)
        try:
            got = list(executor.imap(_digest, items))
        finally:
            executor.close()
    assert got == list(SerialExecutor().imap(_digest, items))
    assert [str(w.message) for w in caught if "large graph" in str(w.message)] == []


def test_a_packed_batch_comes_back_whole_in_three_parts() -> None:
    """``packed`` joins a batch's out-of-band buffers into one byte array (a
    task has three arguments however many arrays its items hold), and
    ``apply_batch`` splits them again: many small arrays, an empty one, a
    strided one (pickled in band) and plain values arrive unchanged, in order."""
    pytest.importorskip("dask.distributed")
    from privtool.dask_executor import apply_batch, packed

    rng = np.random.default_rng(5)
    batch = [
        (rng.integers(0, 2**31, int(size), dtype=np.int32), rng.integers(0, 9, 40)[::4], f"chunk {i}")
        for i, size in enumerate(rng.integers(0, 50, 300))
    ]
    header, offsets, joined = packed(batch)
    assert len(offsets) >= 301 and joined.dtype == np.uint8 and int(offsets[-1]) == len(joined)
    got = apply_batch(lambda item: item, header, offsets, joined)
    assert len(got) == len(batch)
    for (a, b, c), (x, y, z) in zip(batch, got, strict=True):
        assert np.array_equal(a, x) and a.dtype == x.dtype and np.array_equal(b, y) and c == z
    header, offsets, joined = packed(["no arrays", 3])
    assert list(offsets) == [0] and apply_batch(str, header, offsets, joined) == ["no arrays", "3"]
