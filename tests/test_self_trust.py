"""Issue 16 item 6: never trust the release against itself. Attacks and
verifiers judge by the claims (validated: k >= 2, m >= 1), never by the
release's ``params``; ``anonymize`` refuses (exit 2, nothing written) a
release that would fail its own claim. The trail's entries are checked in
tests/test_trail_entries.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tampering import recount

DATA = "".join(["a b\n"] * 5 + ["a c\n"] * 5 + ["b c\n"] * 5 + ["d\n"])


@pytest.fixture
def made(run_cli, tmp_path: Path) -> tuple[Path, Path, Path]:
    data = tmp_path / "d.basket"
    data.write_text(DATA)
    release, trail = tmp_path / "r.json", tmp_path / "t.json"
    result = run_cli("anonymize", data, "--method", "disassociation", "--k", "3", "--m", "2", "-o", release,
                     "--trail", trail, "-q", "--executor", "serial")  # fmt: skip
    assert result.code == 0, result.err
    return data, release, trail


def _json(result: Any) -> dict[str, Any]:
    return json.loads(result.out)


def _rewrite(path: Path, target: Path, change: Any) -> Path:
    obj = json.loads(path.read_text())
    change(obj)
    target.write_text(json.dumps(obj))
    return target


def test_editing_params_does_not_change_what_attack_concludes(run_cli, made, tmp_path: Path) -> None:
    """The issue's example: params.m = 0 turned BREACHED into "no breach"."""
    _, release, _ = made

    def below_k(obj: dict[str, Any]) -> None:  # an item left in one sub-record of its chunk: support 1 < k
        cluster = next(c for c in obj["clusters"] if c["record_chunks"])
        chunk = cluster["record_chunks"][0]
        item = chunk[0][0]
        for row in [row for row in chunk if item in row][1:]:
            row.remove(item)
        cluster["record_chunks"] = [[row for row in ch if row] for ch in cluster["record_chunks"]]
        recount(obj)

    def zeroed(obj: dict[str, Any]) -> None:
        below_k(obj)
        obj["params"].update(k=0, m=0)

    runs = {}
    for name, change in (("tampered", below_k), ("zeroed", zeroed)):
        result = run_cli("attack", _rewrite(release, tmp_path / f"{name}.json", change), "--json", "-q")
        report = _json(result)
        runs[name] = (
            result.code,
            report["verdict"],
            [c["status"] for c in report["claims"]],
            [(a["attack"], [f["severity"] for f in a["findings"]]) for a in report["attacks"]],
        )
    assert runs["tampered"][:3] == (1, "FAIL", ["fails"])
    assert any("breach" in severities for _, severities in runs["tampered"][3])
    assert runs["zeroed"] == runs["tampered"]


@pytest.mark.parametrize(("field", "value", "problem"), [("m", 0, "$.claims[0].m"), ("k", 1, "$.claims[0].k")])
def test_a_claim_below_the_model_minimum_is_a_structural_failure(
    run_cli, made, tmp_path: Path, field: str, value: int, problem: str
) -> None:
    _, release, _ = made
    edited = _rewrite(release, tmp_path / "e.json", lambda obj: obj["claims"][0].update({field: value}))
    for command in ("verify", "attack"):
        result = run_cli(command, edited, "--json", "-q", "--executor", "serial")
        assert result.code == 1 and _json(result)["structure"][0]["path"] == problem, result.out


def test_anonymize_refuses_fewer_records_than_k(run_cli, tmp_path: Path) -> None:
    data = tmp_path / "few.basket"
    data.write_text("a b\na c\n")
    release = tmp_path / "r.json"
    result = run_cli("anonymize", data, "--method", "disassociation", "--k", "3", "-o", release, "-q")
    assert result.code == 2 and result.err.count("\n") == 1, result.err
    assert "$.claims[0].k: km-anonymity (k=3, m=2) cannot hold: only 2 published record(s) hold an item" in result.err
    assert not release.exists()
