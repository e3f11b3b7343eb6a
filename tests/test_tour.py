"""``privtool tour``: runs its steps as real commands and says where the files are."""

from __future__ import annotations

import re
from pathlib import Path

from privtool.cli import tour
from privtool.io import read_dataset


def test_tour_makes_and_describes_a_dataset(tmp_path: Path, run_cli, registry) -> None:
    result = run_cli("tour", "--dir", tmp_path / "t", "--records", "300", "--seed", "4")
    assert result.code == 0, result.err
    data = tmp_path / "t" / "baskets.dat"
    assert read_dataset(registry, data).n_records == 300
    for number, step in enumerate(tour.STEPS, start=1):
        assert f"Step {number} of {len(tour.STEPS)}: {step.title}" in result.out
    assert "$ privtool synth --records 300" in result.out
    assert "records" in result.out and "300" in result.out  # the stats table
    assert f"The tour's files are in {tmp_path / 't'}" in result.out
    report = tmp_path / "t" / "audit.html"
    assert report.is_file() and "Verdict:" in report.read_text()
    assert f"The compliance report is {report}" in " ".join(result.out.split())
    proved = next(n for n, step in enumerate(tour.STEPS, start=1) if step.title == "Prove it")
    assert re.search(rf"step {proved} took [\d.]+ s, exit code 0", result.out), (
        "verify did not certify the safe release"
    )


def test_a_failing_step_stops_the_tour_with_exit_2(tmp_path: Path, run_cli) -> None:
    result = run_cli("-p", "no:formats", "tour", "--dir", tmp_path, "--records", "50")
    assert result.code == 2
    assert "tour step 1 (Make some data) failed" in result.err
    assert "Step 2 of" not in result.out
