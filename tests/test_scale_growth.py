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


def stage(name: str, records: int, main_mib: float, worker_mib: float = 0.0) -> dict[str, Any]:
    """A stage's results as scale_dask.stage records them (1 us wall and 2 us CPU per record)."""
    return {
        "stage": name,
        "wall_s": records * 1e-6,
        "cpu_s": records * 2e-6,
        "peak_mib": main_mib,
        "peak_worker_mib": worker_mib,
        "load_before": [1.0, 1.0, 1.0],
        "load_after": [1.0, 1.0, 1.0],
    }


def results(base_mib: float, bytes_per_record: float, sizes: list[int], base_records: int | None) -> dict[str, Any]:
    """A results file whose one stage costs BASE_MIB plus BYTES_PER_RECORD (main process;
    the worker stays below it), with a base run of BASE_RECORDS measured at BASE_MIB."""
    record: dict[str, Any] = {
        "label": "model",
        "commit": "0" * 40,
        "workers": 2,
        "sizes": {
            str(n): {"stages": [stage("verify", n, base_mib + n * bytes_per_record / MIB, worker_mib=base_mib)]}
            for n in sizes
        },
    }
    if base_records is not None:
        record["base"] = {"records": base_records, "stages": [stage("verify", base_records, base_mib)]}
    return record


def test_flatness_is_the_largest_over_the_smallest(growth: ModuleType) -> None:
    assert growth.flatness([3.0, 1.5, 2.0]) == 2.0
    assert growth.flatness([7.0, 7.0]) == 1.0


def test_marginal_bytes_per_record_subtracts_the_base(growth: ModuleType) -> None:
    assert growth.marginal_bytes_per_record(101.0, 100.0, 1024) == 1024.0
    assert growth.marginal_bytes_per_record(100.0, 100.0, 10) == 0.0


def test_a_fixed_base_makes_the_raw_figure_fall_and_the_marginal_one_flat(growth: ModuleType) -> None:
    sizes = [500_000, 1_000_000, 2_000_000, 5_000_000]
    rows = growth.per_record(results(300.0, 400.0, sizes, 10_000))["verify"]
    assert [r[0] for r in rows] == sizes
    for n, wall, cpu, peak, marginal in rows:
        assert wall == pytest.approx(1.0) and cpu == pytest.approx(2.0)
        assert peak == pytest.approx(300.0 * MIB / n + 400.0)
        assert marginal == pytest.approx(400.0)
    raw = growth.flatness([r[3] for r in rows])
    assert raw == pytest.approx((300.0 * MIB / 500_000 + 400.0) / (300.0 * MIB / 5_000_000 + 400.0))
    assert growth.flatness([r[4] for r in rows]) == pytest.approx(1.0)


def test_the_peak_is_the_larger_of_main_and_worker(growth: ModuleType) -> None:
    record = results(100.0, 0.0, [1_000_000], None)
    record["sizes"]["1000000"]["stages"][0]["peak_worker_mib"] = 250.0
    (row,) = growth.per_record(record)["verify"]
    assert row[3] == pytest.approx(250.0 * MIB / 1_000_000)
    assert math.isnan(row[4])  # no base run


def test_the_slope_of_a_linear_peak_is_its_cost_per_million(growth: ModuleType) -> None:
    points = [(500_000, 150.0), (1_000_000, 200.0), (5_000_000, 600.0)]
    assert growth.slope_mib_per_million(points) == pytest.approx(100.0)


def test_the_summary_labels_the_base_and_the_marginal_flatness(growth: ModuleType) -> None:
    sizes = [500_000, 1_000_000]
    with_base = growth.summary(results(300.0, 400.0, sizes, 10_000))
    assert "base peak MiB (10,000 records)" in with_base
    assert "flatness marginal peak/rec, (peak - base) / records" in with_base
    row = next(line for line in with_base.splitlines() if line.startswith("| verify | 0.5M, 1M |"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    raw = (300.0 * MIB / 500_000 + 400.0) / (300.0 * MIB / 1_000_000 + 400.0)
    assert cells[4] == f"{raw:.2f}" and cells[5] == "300" and cells[6] == "1.00"
    assert float(cells[7]) == pytest.approx(400.0 * 1e6 / MIB, abs=0.5)
    without = growth.summary(results(300.0, 400.0, sizes, None))
    assert "no base run" in without and "| - | - |" in without
