"""``privtool compare``: every output file, verified releases, and resuming."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from privtool.compare.spec import parse_spec
from privtool.errors import ParameterError


def test_spec_grammar() -> None:
    spec = parse_spec("safe=disassociation:partitioner=horpart,max-cluster-size=10+safe-disassociation")
    assert (spec.label, spec.method, spec.sanitizers) == ("safe", "disassociation", ("safe-disassociation",))
    assert spec.options == {"partitioner": "horpart", "max_cluster_size": "10"}
    plain = parse_spec("lgr:hierarchy=a=b.csv")
    assert (plain.label, plain.method, plain.options) == ("lgr:hierarchy=a=b.csv", "lgr", {"hierarchy": "a=b.csv"})
    with pytest.raises(ParameterError, match="expected OPTION=VALUE"):
        parse_spec("disassociation:k")


@pytest.fixture
def small_data(tmp_path: Path, run_cli) -> Path:
    data = tmp_path / "small.dat"
    assert run_cli("synth", "--records", "400", "--items", "40", "--avg-size", "4", "--max-size", "12", "--seed", "3", "-o", data).code == 0
    return data


def test_compare_writes_everything_and_resumes(tmp_path: Path, run_cli, small_data: Path) -> None:
    out = tmp_path / "cmp"
    args = ("compare", small_data, "--method", "horpart=disassociation:partitioner=horpart",
            "--method", "adding=disassociation:partitioner=adding", "--k", "2,3", "-o", out, "-q", "--executor", "serial")
    first = run_cli(*args)
    assert first.code == 0, first.err
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert len(rows) == 4 and {r["method"] for r in rows} == {"horpart", "adding"}
    assert all(r["verified"] == "True" for r in rows), [r["refuted"] for r in rows]
    assert all(float(r["tlost.tlost_terms"]) >= 0 for r in rows)
    payload = json.loads((out / "results.json").read_text())
    assert len(payload["rows"]) == 4 and payload["meta"]["input_sha256"]
    assert (out / "plots" / "seconds.png").stat().st_size > 1000 and (out / "plots" / "seconds.svg").is_file()
    index = (out / "index.html").read_text()
    assert index.count("<svg") >= 2 and "horpart" in index
    assert len(list((out / "releases").glob("*.json"))) == 4
    stamps = {p.name: p.stat().st_mtime_ns for p in (out / "cells").glob("*.json")}
    again = run_cli(*args, "--k", "2,3,4")
    assert again.code == 0, again.err
    cells = {p.name: p.stat().st_mtime_ns for p in (out / "cells").glob("*.json")}
    assert len(cells) == 6 and all(cells[name] == stamp for name, stamp in stamps.items()), "finished cells were recomputed"
    assert len(list(csv.DictReader((out / "results.csv").open()))) == 6


def test_compare_rejects_bad_specs(tmp_path: Path, run_cli, small_data: Path) -> None:
    result = run_cli("compare", small_data, "--method", "nosuch", "-o", tmp_path / "o")
    assert result.code == 2 and "unknown anonymizer 'nosuch'" in result.err
    result = run_cli("compare", small_data, "--method", "disassociation", "--method", "disassociation", "-o", tmp_path / "o")
    assert result.code == 2 and "same label" in result.err
