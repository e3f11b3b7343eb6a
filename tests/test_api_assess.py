"""The Python API's assessment, measures and comparisons are the command
line's (one engine, one code path): the same verdicts, findings, figures and
comparison rows, as DataFrames and as notebook HTML; and the issue's whole
workflow fits a 15-line script."""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import privtool

DONE_SCRIPT = """\
import privtool
data = privtool.Dataset.from_pandas(frame, transaction="visit", item="page")
result = privtool.anonymize(data, "disassociation", sanitizers="safe-disassociation", k=5, m=2)
verdict = result.verify()
findings = result.attack("linkage", targets=200)
metrics = result.metrics().to_frame()
methods = ["disassociation", "safe=disassociation+safe-disassociation"]
comparison = privtool.compare(data, methods, grid={"k": [5]}).to_frame()
"""


@pytest.fixture(scope="module")
def visits(shared_data: Path) -> pd.DataFrame:
    """The first 2,000 visits of BMS-WebView-1 as a long frame (integer pages)."""
    with gzip.open(shared_data / "bms-webview-1.dat.gz", "rt") as handle:
        records = [list(map(int, next(handle).split())) for _ in range(2000)]
    rows = [(visit, page) for visit, record in enumerate(records) for page in record]
    return pd.DataFrame(rows, columns=["visit", "page"])


@pytest.fixture(scope="module")
def result(visits: pd.DataFrame) -> privtool.Result:
    data = privtool.Dataset.from_pandas(visits, transaction="visit", item="page")
    return privtool.anonymize(data, "disassociation", sanitizers="safe-disassociation", k=5, m=2)


@pytest.fixture(scope="module")
def saved(result: privtool.Result, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("saved")
    paths = {"release": folder / "release.json", "trail": folder / "trail.json", "data": folder / "visits.dat"}
    result.save(paths["release"], paths["trail"])
    paths["data"].write_text("".join(" ".join(r) + "\n" for r in result.original.to_label_records()))
    return paths


def test_the_whole_workflow_in_at_most_fifteen_lines(visits: pd.DataFrame) -> None:
    assert len(DONE_SCRIPT.splitlines()) <= 15
    namespace: dict[str, Any] = {"frame": visits}
    exec(DONE_SCRIPT, namespace)
    assert namespace["verdict"].verdict == "PASS", namespace["verdict"].reason
    findings = namespace["findings"]
    assert {run.attack for run in findings.assessment.attacks} == {"linkage"}
    assert findings.breaches == []
    metrics = namespace["metrics"]
    assert isinstance(metrics, pd.DataFrame) and list(metrics.columns) == [
        "metric",
        "measure",
        "value",
        "status",
        "reason",
    ]
    assert {"tkd", "re"} <= set(metrics["metric"])
    comparison = namespace["comparison"]
    assert isinstance(comparison, pd.DataFrame)
    assert sorted(comparison["method"]) == ["disassociation", "safe"]
    assert set(comparison["verdict"]) <= {"PASS", "INCOMPLETE", "FAIL"}


def _cli_json(run_cli, *args: object) -> tuple[int, dict[str, Any]]:
    done = run_cli(*args, "--json", "--executor", "serial")
    return done.code, json.loads(done.out)


def test_verify_is_the_command_lines_verdict(result: privtool.Result, saved: dict[str, Path], run_cli) -> None:
    code, cli = _cli_json(run_cli, "verify", saved["release"], "--original", saved["data"], "--trail", saved["trail"])
    from_files = privtool.verify(saved["release"], saved["data"], saved["trail"])
    from_objects = result.verify()
    for verdict in (from_files, from_objects):
        assert (verdict.verdict, verdict.reason, verdict.exit_code) == (cli["verdict"], cli["reason"], code)
        assert [c["status"] for c in cli["claims"]] == [c.status for c in verdict.assessment.claims]
    frame = from_files.to_frame()
    assert list(frame["kind"]) == ["claim"] * len(cli["claims"]) + ["integrity"] * len(cli["integrity"])
    assert from_files.passed is (cli["verdict"] == "PASS")
    with pytest.raises(TypeError, match="not a truth value"):
        bool(from_files)


def test_attack_is_the_command_lines(result: privtool.Result, saved: dict[str, Path], run_cli) -> None:
    code, cli = _cli_json(
        run_cli, "attack", saved["release"], "--original", saved["data"], "--trail", saved["trail"],
        "--attack", "linkage", "--targets", "100",
    )  # fmt: skip
    findings = result.attack("linkage", targets=100)
    assert (findings.verdict, findings.exit_code) == (cli["verdict"], code)
    assert [f["title"] for run in cli["attacks"] for f in run["findings"]] == [f.title for f in findings.findings]
    assert len(findings.to_frame()) == len(findings.findings)
    with pytest.raises(privtool.ParameterError, match="no selected attack or verifier has an option --tragets"):
        result.attack("linkage", tragets=100)


def test_result_methods_give_the_same_answers_on_a_process_pool(result: privtool.Result) -> None:
    """``executor`` moves the per-chunk work, never the verdict, findings or figures."""
    serial, pooled = result.verify(), result.verify(executor="process")
    assert (pooled.verdict, pooled.reason) == (serial.verdict, serial.reason)
    assert [(c.status, c.reason, c.checked) for c in pooled.assessment.claims] == [
        (c.status, c.reason, c.checked) for c in serial.assessment.claims
    ]
    serial_findings = result.attack("linkage", targets=50)
    pooled_findings = result.attack("linkage", targets=50, executor="process")
    assert [f.title for f in pooled_findings.findings] == [f.title for f in serial_findings.findings]
    assert result.metrics("tkd", executor="process")["tkd"] == result.metrics("tkd")["tkd"]


def test_metrics_are_the_command_lines(result: privtool.Result, saved: dict[str, Path], run_cli) -> None:
    code, cli = _cli_json(
        run_cli, "metrics", saved["release"], "--original", saved["data"], "--trail", saved["trail"],
        "--metric", "tkd", "--metric", "re",
    )  # fmt: skip
    measured = result.metrics("tkd", "re")
    assert code == 0
    assert {m["name"]: m["values"] for m in cli["metrics"]} == {r.name: r.values for r in measured.results}
    frame = measured.to_frame()
    assert set(frame["metric"]) == {"tkd", "re"} and frame["value"].notna().all()
    assert measured["tkd"] == measured.results[0].values
    with pytest.raises(privtool.UnknownComponent, match="unknown metric 'tdk'"):
        result.metrics("tdk")


def test_audit_writes_the_command_lines_report(result: privtool.Result, tmp_path: Path, run_cli) -> None:
    findings = result.audit(tmp_path / "audit.html")
    page = (tmp_path / "audit.html").read_text()
    assert findings.verdict in page
    result.save(tmp_path / "release.json", tmp_path / "trail.json")
    data = tmp_path / "visits.dat"
    data.write_text("".join(" ".join(r) + "\n" for r in result.original.to_label_records()))
    cli = run_cli(
        "audit", tmp_path / "release.json", "--original", data, "--trail", tmp_path / "trail.json",
        "--format", "json", "-o", tmp_path / "cli.json", "--executor", "serial", "-q",
    )  # fmt: skip
    assert cli.code == findings.exit_code
    assert json.loads((tmp_path / "cli.json").read_text())["verdict"] == findings.verdict
    with pytest.raises(privtool.ParameterError, match="must be one of json, md, html, not 'pdf'"):
        result.audit(tmp_path / "audit.pdf", "pdf")
    with pytest.raises(privtool.ParameterError, match="cannot tell the report format of"):
        result.audit(tmp_path / "audit.pdf")  # the format comes from the extension, as for the command
    assert not (tmp_path / "audit.pdf").exists()


def test_compare_gives_the_command_lines_rows(tmp_path: Path, saved: dict[str, Path], run_cli) -> None:
    specs = ["disassociation", "safe=disassociation+safe-disassociation"]
    cli = run_cli(
        "compare", saved["data"], *(w for s in specs for w in ("--method", s)), "--k", "4,6",
        "--executor", "serial", "-q", "-o", tmp_path / "cli",
    )  # fmt: skip
    assert cli.code == 0, cli.err
    comparison = privtool.compare(saved["data"], specs, grid={"k": [4, 6]}, work_dir=tmp_path / "api")

    def timeless(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in row.items() if not k.endswith("seconds")} for row in rows]

    cli_rows = json.loads((tmp_path / "cli" / "results.json").read_text())["rows"]
    assert timeless(comparison.rows) == timeless(cli_rows)
    assert (tmp_path / "api" / "index.html").is_file() and comparison.directory == tmp_path / "api"
    frame = comparison.to_frame()
    assert len(frame) == 4 and list(frame["k"]) == [4, 6, 4, 6]
    counts = comparison.verdicts()
    assert counts == Counter(row["verdict"] for row in cli_rows)
    order = ["FAIL", "INCOMPLETE", "PASS"]
    assert list(counts) == sorted(counts, key=order.index)  # worst first
    page = comparison._repr_html_()
    worst = next(iter(counts))
    headline = ", ".join(f"{n} {verdict}" for verdict, n in counts.items())
    assert page.index(f">{worst}<") < page.index(headline) < page.index("<table>")
    with pytest.raises(TypeError, match=r"grid\['k'\] must be a list of values, not 5"):
        privtool.compare(saved["data"], specs, grid={"k": 5})  # type: ignore[dict-item]
    with pytest.raises(privtool.ParameterError, match="two --method specs have the same label"):
        privtool.compare(saved["data"], ["disassociation", "disassociation"])


def test_results_show_the_verdict_first_with_data_escaped() -> None:
    data = privtool.Dataset.from_records([["<b>x</b>", "y"]] * 6 + [["<b>x</b>"]] * 6)
    result = privtool.anonymize(data, "disassociation", k=2)
    for view in (result.verify(), result.attack()):
        page = view._repr_html_()
        first = re.search(r">(PASS|FAIL|INCOMPLETE)<", page)
        assert first is not None and first.group(1) == view.verdict
        assert page.index(view.verdict) < page.index("<table>")
        assert "<b>x</b>" not in page
    assert "<b>x</b>" not in result.metrics()._repr_html_()


def test_views_without_pandas_say_what_to_install(result: privtool.Result, monkeypatch: pytest.MonkeyPatch) -> None:
    verdict = result.verify()
    monkeypatch.setitem(__import__("sys").modules, "pandas", None)
    with pytest.raises(ImportError, match=r"install it with pip install 'privtool\[pandas\]'\.$"):
        verdict.to_frame()


def test_privtool_verify_stays_a_function_after_the_plugins_load() -> None:
    from privtool.registry import load_registry

    load_registry()  # imports every built-in plugin module, the verifiers among them
    assert callable(privtool.verify) and callable(privtool.compare)
    assert privtool.verify.__module__ == "privtool.api"
