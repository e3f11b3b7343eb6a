"""Issue 16 item 6: never trust the release against itself. Attacks and
verifiers judge by the claims (validated: k >= 2, m >= 1), never by the
release's ``params``; trail entries are validated when read and against the
release; ``anonymize`` refuses (exit 2, nothing written) a release that would
fail its own claim."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tampering import recount

from privtool.release import read_release
from privtool.trail import read_trail

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


def test_a_ghost_in_an_unknown_cluster_fails_faithfulness(run_cli, made, tmp_path: Path) -> None:
    data, release, trail = made
    for where, ghost in (
        ("cluster", {"cluster": "nowhere", "chunk": 0, "items": ["a"]}),
        ("chunk", {"cluster": read_release(release).clusters[0].id, "chunk": 99, "items": ["a"]}),
    ):
        edited = _rewrite(
            trail, tmp_path / f"t-{where}.json", lambda obj, ghost=ghost: obj["ghost_records"].append(ghost)
        )
        result = run_cli("verify", release, "--original", data, "--trail", edited, "--json", "-q")
        assert result.code == 1, result.out
        [faithful] = [c for c in _json(result)["certificates"] if c["guarantee"] == "faithfulness"]
        assert (
            faithful["holds"] is False and f"in a {where} the release does not have" in faithful["witness"]["problem"]
        )


@pytest.mark.parametrize(
    ("field", "entry", "path"),
    [
        ("ghost_records", {"cluster": "c0", "chunk": -1, "items": ["a"]}, "$.ghost_records[0]"),
        ("ghost_records", {"cluster": "c0", "chunk": 0, "items": []}, "$.ghost_records[0]"),
        ("ghost_records", {"cluster": 7, "chunk": 0, "items": ["a"]}, "$.ghost_records[0]"),
        ("ghost_records", {"cluster": "c0", "chunk": 0, "items": ["a"], "extra": 1}, "$.ghost_records[0]"),
        ("removed_items", [0], "$.removed_items[0]"),
        ("removed_items", ["0", "a"], "$.removed_items[0]"),
        ("removed_items", [-1, "a"], "$.removed_items[0]"),
        ("cluster_of_record", [3], "$.cluster_of_record[0]"),
    ],
)
def test_malformed_trail_entries_are_one_sentence(
    run_cli, made, tmp_path: Path, field: str, entry: Any, path: str
) -> None:
    data, release, trail = made

    def put(obj: dict[str, Any]) -> None:
        obj[field] = [entry] if field != "cluster_of_record" else entry

    edited = _rewrite(trail, tmp_path / "bad.json", put)
    result = run_cli("verify", release, "--original", data, "--trail", edited, "-q")
    assert result.code == 2 and result.err.count("\n") == 1 and f"invalid trail at {path}" in result.err, result.err


def test_trails_privtool_writes_still_read(made) -> None:
    _, _, trail = made
    assert read_trail(trail).cluster_of_record


def test_anonymize_refuses_fewer_records_than_k(run_cli, tmp_path: Path) -> None:
    data = tmp_path / "few.basket"
    data.write_text("a b\na c\n")
    release = tmp_path / "r.json"
    result = run_cli("anonymize", data, "--method", "disassociation", "--k", "3", "-o", release, "-q")
    assert result.code == 2 and result.err.count("\n") == 1, result.err
    assert "$.claims[0].k: km-anonymity (k=3, m=2) cannot hold: only 2 published record(s) hold an item" in result.err
    assert not release.exists()
