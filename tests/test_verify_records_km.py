"""The record-level k^m verifier (``km-anonymity-records``) against a brute-force
oracle on random generalized releases with nested labels and random sanitized
releases; and two anonymizers that claim k^m-anonymity, verified through
``verify``, ``attack`` and ``audit``: the plugin guide's ``global-suppression``
and the ``km-full-domain`` test plugin (a k^m global generalisation)."""

from __future__ import annotations

import importlib.util
import json
from itertools import combinations
from pathlib import Path
from unittest import mock

import km_full_domain
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tampering import write_tampered

from privtool.claims import Claim
from privtool.components import Evidence
from privtool.context import Context
from privtool.dataset import Dataset
from privtool.hookspecs import hookimpl
from privtool.pipeline import run_method, write_outcome
from privtool.registry import Registry, load_registry
from privtool.release import Release
from privtool.verifiers.records_km import KmAnonymityOfRecords

REPO = Path(__file__).resolve().parent.parent
EDGES = [
    ["A", "ALL"],
    ["B", "ALL"],
    ["c", "ALL"],
    ["a1", "A"],
    ["a2", "A"],
    ["A2", "A"],
    ["a3", "A2"],
    ["a4", "A2"],
    ["b1", "B"],
    ["b2", "B"],
]
HIERARCHY = {"root": "ALL", "edges": EDGES}
PARENT = dict(EDGES)
NODES = sorted({"ALL", *PARENT})
LEAVES = sorted(set(PARENT) - set(PARENT.values()))


def ancestors_or_self(label: str) -> set[str]:
    out = {label}
    while label in PARENT:
        label = PARENT[label]
        out.add(label)
    return out


def oracle(records: list[list[str]], leaves: list[str], k: int, m: int, covers) -> list[tuple[tuple[str, ...], int]]:
    """Every set of 1..m leaves covered by between 1 and k-1 records, with its count."""
    found = []
    for size in range(1, m + 1):
        for query in combinations(leaves, size):
            count = sum(1 for r in records if all(covers(r, q) for q in query))
            if 1 <= count < k:
                found.append((query, count))
    return found


def generalized_covers(record: list[str], item: str) -> bool:
    return bool(set(record) & ancestors_or_self(item))


def check(release: Release, leaves: list[str], k: int, m: int, covers) -> None:
    [certificate] = KmAnonymityOfRecords().verify(release, Evidence(), {"k": k, "m": m}, Context())
    expected = oracle(release.records, leaves, k, m, covers)
    assert certificate.holds is (not expected), (expected, certificate.witness)
    if expected:
        witness = certificate.witness
        assert 1 <= len(witness["itemset"]) <= m and witness["covering_records"] < k
        count = sum(1 for r in release.records if all(covers(r, q) for q in witness["itemset"]))
        assert count == witness["covering_records"] >= 1
        smallest = min(len(q) for q, _ in expected)
        assert len(witness["itemset"]) == smallest  # the search stops at the first failing level


ENGINES = {"dense": 1 << 40, "sparse": 0}
"""BLAS_SPEEDUP values that force the dense or the sparse Gram matrix."""


@pytest.mark.parametrize("gram", sorted(ENGINES))
@settings(max_examples=120, deadline=None)
@given(
    records=st.lists(st.sets(st.sampled_from(NODES), min_size=1, max_size=3).map(sorted), min_size=1, max_size=8),
    k=st.integers(2, 4),
    m=st.integers(1, 3),
)
def test_generalized_releases_against_brute_force(gram: str, records, k: int, m: int) -> None:
    """Nested labels ({A, a1}) included: a record covers an item when it holds the
    item or an ancestor (the deepest-cover reading, docs/formats.md)."""
    release = Release("generalized", records=records, hierarchy=HIERARCHY)
    with mock.patch("privtool.attacks.covering_records.BLAS_SPEEDUP", ENGINES[gram]):
        check(release, LEAVES, k, m, generalized_covers)


@pytest.mark.parametrize("gram", sorted(ENGINES))
@settings(max_examples=120, deadline=None)
@given(
    records=st.lists(st.sets(st.sampled_from("abcdef"), min_size=1, max_size=4).map(sorted), min_size=1, max_size=9),
    k=st.integers(2, 4),
    m=st.integers(1, 4),
)
def test_sanitized_releases_against_brute_force(gram: str, records, k: int, m: int) -> None:
    release = Release("sanitized", records=records)
    leaves = sorted({x for r in records for x in r})
    with mock.patch("privtool.attacks.covering_records.BLAS_SPEEDUP", ENGINES[gram]):
        check(release, leaves, k, m, lambda record, item: item in record)


def test_nested_labels_golden() -> None:
    """{A, a1} covers a1 and every other item under A; {a1} covers only a1."""
    records = [["A", "a1"], ["A", "a1"], ["a1"], ["a1"], ["B"], ["B"]]
    release = Release("generalized", records=records, hierarchy=HIERARCHY)
    [holds] = KmAnonymityOfRecords().verify(release, Evidence(), {"k": 2, "m": 2}, Context())
    assert holds.holds is True  # a2 (or a3): 2 records; {a1}: 4; {a1, a2}: 2; {b1}: 2
    [fails] = KmAnonymityOfRecords().verify(release, Evidence(), {"k": 3, "m": 2}, Context())
    assert fails.holds is False and fails.witness["covering_records"] == 2
    assert fails.witness["itemset"] in (["a2"], ["a3"], ["a4"], ["b1"], ["b2"])


# ------------------------------------------------------------ claiming plugins
def registry_with(module, name: str) -> Registry:
    return load_registry(extra={name: module})


def data_file(tmp_path: Path, records: list[list[str]]) -> Path:
    path = tmp_path / "data.dat"
    path.write_text("".join(" ".join(r) + "\n" for r in records))
    return path


def assess_everywhere(run_cli, release: Path, data: Path, trail: Path) -> dict[str, int]:
    """The exit code of verify, attack and audit on one release."""
    common = ["--original", data, "--trail", trail, "-q", "--executor", "serial"]
    return {
        "verify": run_cli("verify", release, *common).code,
        "attack": run_cli("attack", release, *common).code,
        "audit": run_cli("audit", release, *common).code,
    }


RECORDS = [["1", "2", "3"], ["1", "2"], ["1", "4"], ["5"], ["2", "3"], ["1", "2", "3"], ["4", "5"], ["1", "5"]]


def test_full_domain_plugin_is_verified_against_its_claim(tmp_path: Path, run_cli) -> None:
    registry = registry_with(km_full_domain, "km-full-domain")
    records = [["1", "3"], ["2", "4"], ["2", "3"], ["5", "7"], ["6", "8"], ["6", "7"], ["1", "4"], ["5", "8"]]
    options = {"k": 3, "m": 2, "hierarchy": "2", "hierarchy_format": "fanout"}
    outcome = run_method(registry, Dataset.from_records(records), "km-full-domain", options, Context())
    assert outcome.release.claims == [Claim("km-anonymity", {"k": 3, "m": 2})]
    # Fan-out 2 over items 1..8: the leaves are not 3^2-anonymous, the pairs 1-2, 3-4, ... are.
    assert outcome.trail.notes["depth"] == 2 and outcome.release.records[0] == ["1-2", "3-4"]
    release, trail, data = tmp_path / "r.json", tmp_path / "t.json", data_file(tmp_path, records)
    write_outcome(outcome, release, trail)
    report = json.loads(run_cli("verify", release, "--json", "--executor", "serial").out)
    assert report["verdict"] == "PASS"
    assert [v["verifier"] for v in report["claims"][0]["verifiers"]] == ["km-anonymity-records"]
    assert assess_everywhere(run_cli, release, data, trail) == {"verify": 0, "attack": 0, "audit": 0}
    # A release one record away from the same claim (an item made unique) fails in all three.
    tampered = json.loads(release.read_text())
    tampered["records"][0] = [*tampered["records"][0], "5"] if "5" not in tampered["records"][0] else ["4"]
    broken = write_tampered(tampered, tmp_path / "broken.json")
    result = json.loads(run_cli("verify", broken, "--json", "--executor", "serial").out)
    assert result["claims"][0]["status"] == "fails"
    assert run_cli("verify", broken, "-q", "--executor", "serial").code == 1


def test_plugin_guide_example_is_verified_against_its_claim(tmp_path: Path, run_cli) -> None:
    spec = importlib.util.spec_from_file_location(
        "privtool_example_suppression", REPO / "docs" / "plugin-example" / "privtool_example" / "suppression.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.privtool_anonymizers = hookimpl(lambda: [module.GlobalSuppression()])
    registry = registry_with(module, "global-suppression")
    outcome = run_method(registry, Dataset.from_records(RECORDS), "global-suppression", {"k": 3}, Context())
    assert outcome.release.kind == "sanitized"
    assert outcome.release.claims == [Claim("km-anonymity", {"k": 3, "m": 1})]
    release, trail, data = tmp_path / "r.json", tmp_path / "t.json", data_file(tmp_path, RECORDS)
    write_outcome(outcome, release, trail)
    assert assess_everywhere(run_cli, release, data, trail) == {"verify": 0, "attack": 0, "audit": 0}
    report = json.loads(run_cli("verify", release, "--json", "--original", data, "--executor", "serial").out)
    assert report["verdict"] == "PASS" and report["claims"][0]["status"] == "holds"
    assert {r["verifier"]: r["outcome"] for r in report["integrity"]} == {
        "faithfulness": "proved",
        "removal-only": "proved",
    }
