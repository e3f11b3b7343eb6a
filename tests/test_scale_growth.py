"""The arithmetic of benchmarks/scale_growth.py: per-record figures, flatness,
the base run and the marginal memory per record, on results made up here
from a known cost model (a fixed base plus so many bytes per record)."""

from __future__ import annotations

import importlib
import math
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
MIB = 1024 * 1024


@pytest.fixture(scope="module")
def growth() -> ModuleType:
    sys.path.insert(0, str(BENCHMARKS))  # scale_growth imports its sibling scale_dask
    try:
        return importlib.import_module("scale_growth")
    finally:
        sys.path.remove(str(BENCHMARKS))


FIXED_S = 2.0  # the model's fixed time per stage (cluster start, imports)


def stage(name: str, records: int, main_mib: float, worker_mib: float = 0.0) -> dict[str, Any]:
    """A stage's results as scale_dask.stage records them: FIXED_S plus 1 us wall, twice that in CPU, per record."""
    return {
        "stage": name,
        "wall_s": FIXED_S + records * 1e-6,
        "cpu_s": 2 * (FIXED_S + records * 1e-6),
        "peak_mib": main_mib,
        "peak_worker_mib": worker_mib,
        "load_before": [1.0, 1.0, 1.0],
        "load_after": [1.0, 1.0, 1.0],
    }


def results(base_mib: float, bytes_per_record: float, sizes: list[int], base_records: int | None) -> dict[str, Any]:
    """A results file whose one stage costs BASE_MIB plus BYTES_PER_RECORD (main process;
    the worker stays below it), with a base run of BASE_RECORDS measured on the same model."""

    def peak(n: int) -> float:
        return base_mib + n * bytes_per_record / MIB

    record: dict[str, Any] = {
        "label": "model",
        "commit": "0" * 40,
        "workers": 2,
        "sizes": {str(n): {"stages": [stage("verify", n, peak(n), worker_mib=base_mib)]} for n in sizes},
    }
    if base_records is not None:
        record["base"] = {"records": base_records, "stages": [stage("verify", base_records, peak(base_records))]}
    return record


def test_flatness_is_the_largest_over_the_smallest(growth: ModuleType) -> None:
    assert growth.flatness([3.0, 1.5, 2.0]) == 2.0
    assert growth.flatness([7.0, 7.0]) == 1.0


def test_marginal_is_the_cost_of_the_records_beyond_the_base(growth: ModuleType) -> None:
    assert growth.marginal(101.0, 100.0, 1_100, 100) == pytest.approx(1 / 1000)
    assert growth.marginal(100.0, 100.0, 10, 5) == 0.0


def test_fixed_costs_make_the_raw_figures_fall_and_the_marginal_ones_flat(growth: ModuleType) -> None:
    sizes = [500_000, 1_000_000, 2_000_000, 5_000_000]
    rows = growth.per_record(results(300.0, 400.0, sizes, 100_000))["verify"]
    assert [r.records for r in rows] == sizes
    for r in rows:
        assert r.wall_us == pytest.approx(FIXED_S * 1e6 / r.records + 1.0)
        assert r.cpu_us == pytest.approx(2 * r.wall_us)
        assert r.peak_bytes == pytest.approx(300.0 * MIB / r.records + 400.0)
        assert (r.marginal_wall_us, r.marginal_cpu_us, r.marginal_peak_bytes) == pytest.approx((1.0, 2.0, 400.0))
    raw = growth.flatness([r.peak_bytes for r in rows])
    assert raw == pytest.approx((300.0 * MIB / 500_000 + 400.0) / (300.0 * MIB / 5_000_000 + 400.0))
    assert growth.flatness([r.wall_us for r in rows]) == pytest.approx((4.0 + 1.0) / (0.4 + 1.0))
    for field in growth.MARGINAL:
        assert growth.flatness([getattr(r, field) for r in rows]) == pytest.approx(1.0)


def test_a_cost_growing_faster_than_linearly_shows_in_the_marginal_figure(growth: ModuleType) -> None:
    record = results(300.0, 400.0, [500_000, 5_000_000], 100_000)
    record["sizes"]["5000000"]["stages"][0]["cpu_s"] *= 1.5
    rows = growth.per_record(record)["verify"]
    assert rows[1].marginal_cpu_us / rows[0].marginal_cpu_us > 1.5


def test_the_peak_is_the_larger_of_main_and_worker(growth: ModuleType) -> None:
    record = results(100.0, 0.0, [1_000_000], None)
    record["sizes"]["1000000"]["stages"][0]["peak_worker_mib"] = 250.0
    (row,) = growth.per_record(record)["verify"]
    assert row.peak_bytes == pytest.approx(250.0 * MIB / 1_000_000)
    assert all(math.isnan(getattr(row, field)) for field in growth.MARGINAL)  # no base run


def test_the_slope_of_a_linear_peak_is_its_cost_per_million(growth: ModuleType) -> None:
    points = [(500_000, 150.0), (1_000_000, 200.0), (5_000_000, 600.0)]
    assert growth.slope_mib_per_million(points) == pytest.approx(100.0)


def test_the_summary_labels_the_base_and_the_marginal_flatness(growth: ModuleType) -> None:
    sizes = [500_000, 1_000_000]
    with_base = growth.summary(results(300.0, 400.0, sizes, 100_000))
    assert "base (100,000 records): wall s, peak MiB" in with_base
    assert "marginal flatness peak/rec" in with_base
    row = next(line for line in with_base.splitlines() if line.startswith("| verify | 0.5M, 1M |"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    raw = (300.0 * MIB / 500_000 + 400.0) / (300.0 * MIB / 1_000_000 + 400.0)
    assert cells[4] == f"{raw:.2f}"
    assert cells[5] == f"{FIXED_S + 0.1:.1f} s, {300.0 + 100_000 * 400.0 / MIB:,.0f} MiB"
    assert cells[6:9] == ["1.00", "1.00", "1.00"]
    assert float(cells[9]) == pytest.approx(400.0 * 1e6 / MIB, abs=0.5)
    without = growth.summary(results(300.0, 400.0, sizes, None))
    assert "no base run" in without and "| - | - | - | - |" in without


def test_repeated_runs_count_as_their_fastest_time_and_highest_peak(growth: ModuleType) -> None:
    record = results(300.0, 400.0, [500_000, 1_000_000], 100_000)
    first = record["sizes"]["500000"]["stages"][0]
    slow = {**first, "wall_s": first["wall_s"] * 1.4, "cpu_s": first["cpu_s"] * 1.2, "peak_mib": first["peak_mib"] + 7}
    record["sizes"]["500000"]["stages"].append(slow)
    record["sizes"]["500000"]["stages"].append({**slow, "stage": "verify", "finished": False, "wall_s": 0.1})
    (stage_runs,) = growth.finished_stages(record["sizes"]["500000"]).values()
    assert stage_runs["wall_s"] == first["wall_s"]  # the unfinished run's 0.1 s does not count
    assert stage_runs["cpu_s"] == first["cpu_s"]
    assert stage_runs["peak_mib"] == first["peak_mib"] + 7
    assert stage_runs["runs_wall_s"] == [first["wall_s"], slow["wall_s"]]
    rows = growth.per_record(record)["verify"]
    assert rows[0].wall_us == pytest.approx(first["wall_s"] * 1e6 / 500_000)
    assert rows[0].peak_bytes == pytest.approx((first["peak_mib"] + 7) * MIB / 500_000)
    table = growth.summary(record)
    row = next(line for line in table.splitlines() if line.startswith("| 500,000 | verify |"))
    assert row.rstrip(" |").endswith(f"{first['wall_s']:.1f}, {slow['wall_s']:.1f}")
    assert "| 500,000 | verify (stopped unfinished) |" in table


FAMILY = """
import os, subprocess, sys, time
helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3)"])  # a command line of its own
if os.fork() == 0:  # a worker forked from the stage process, as Dask forks them
    time.sleep(3)
    os._exit(0)
time.sleep(3)
helper.wait()
"""


def test_the_tree_sampler_tells_forked_workers_from_other_children(growth: ModuleType) -> None:
    """benchmarks/scale_dask.py's sampler: a child forked from the stage process
    (its command line) is a worker; a child with a command line of its own (the
    resource tracker's kind) is not."""
    import subprocess
    import time

    process = subprocess.Popen([sys.executable, "-c", FAMILY])
    sampler = sys.modules["scale_dask"].TreeSampler(process.pid)
    deadline = time.monotonic() + 20
    while len(sampler.seen) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    process.wait()
    tree = sampler.stop()
    assert len(sampler.seen) == 2, sampler.seen
    assert tree["workers"] == 1, (tree, sampler.seen)
