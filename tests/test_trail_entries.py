"""Issue 16 item 6, the trail: its entries are validated when read (one
sentence naming the JSON path, exit 2) and against the release (a ghost in a
cluster or chunk the release does not have fails faithfulness)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

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
