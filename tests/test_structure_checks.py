"""Issue 16 item 4: structural validation before any certificate. Each of the
issue's examples of a release that ``verify`` used to certify is refused, with
the exact place, by ``verify``, ``attack`` and ``audit`` alike (exit 1, verdict
FAIL, nothing else run); with ``--original`` alone, items and record counts
the original contradicts are refused too. A hypothesis oracle checks that every
release a built-in method makes passes, and that moving one published item into
a second chunk of its cluster never does."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import privtool
from privtool.dataset import Dataset
from privtool.registry import Registry
from privtool.release import Cluster, JointCluster, Release, release_from_json
from privtool.release_arrays import ReleaseArrays
from privtool.verifiers.joint_tree import (
    OverlappingJointClusters,
    ancestor_chains,
    joint_parents,
    laminar_parents,
    nested_parents,
)
from privtool.verifiers.structure import check_structure

CLAIM = {"model": "km-anonymity", "k": 2, "m": 2, "adversary": "consistent-reconstruction"}


def cluster(cid: str, chunks: list[list[list[str]]], terms: list[str], size: int = 4) -> dict[str, Any]:
    return {"id": cid, "size": size, "record_chunks": chunks, "term_chunk": terms}


def valid() -> dict[str, Any]:
    """Two clusters of 4 records, k=2, m=2 (verify proves it)."""
    return {
        "format": "privtool-release/2",
        "kind": "disassociated",
        "params": {"method": "disassociation", "k": 2, "m": 2},
        "provenance": {},
        "claims": [CLAIM],
        "stats": {"records_in": 8, "suppressed_records": 0, "records_published": 8},
        "clusters": [
            cluster("c0", [[["a", "b"], ["a", "b"], ["a"], ["b"]], [["c"], ["c"]]], ["t"]),
            cluster("c1", [[["a", "b"], ["a", "b"], ["a", "b"], ["a", "b"]]], ["u"]),
        ],
        "joint_clusters": [],
    }


ORIGINAL = "a b c\na b c\na t\nb\na b\na b\na b u\na b\n"
"""An original the valid release is faithful to (8 records)."""


def write(tmp_path: Path, name: str, obj: dict[str, Any]) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(obj))
    return path


def refused_everywhere(run_cli, path: Path, tmp_path: Path, where: str, fragment: str, *extra: Any) -> None:
    """verify, attack and audit each exit 1 with verdict FAIL and this one structural problem first."""
    verified = run_cli("verify", path, *extra, "--json", "-q")
    attacked = run_cli("attack", path, *extra, "--json", "-q")
    report = tmp_path / "audit.json"
    audited = run_cli("audit", path, *extra, "--format", "json", "-o", report, "-q")
    for result, obj in (
        (verified, json.loads(verified.out)),
        (attacked, json.loads(attacked.out)),
        (audited, json.loads(report.read_text())),
    ):
        assert result.code == 1, (result.code, result.err)
        found = obj["structure"] if "structure" in obj else obj["assessment"]["structure"]
        assert found and found[0]["path"] == where and fragment in found[0]["problem"], found
        assert not obj.get("claims") or all(c["status"] != "holds" for c in obj["claims"])


def test_the_valid_release_passes(run_cli, tmp_path: Path) -> None:
    path = write(tmp_path, "r.json", valid())
    data = tmp_path / "d.basket"
    data.write_text(ORIGINAL)
    result = run_cli("verify", path, "--original", data, "--json", "-q")
    assert result.code == 0, result.out
    assert json.loads(result.out)["structure"] == []


def test_an_item_in_two_record_chunks_of_one_cluster(run_cli, tmp_path: Path) -> None:
    obj = valid()
    obj["clusters"][0]["record_chunks"][1][0].append("a")
    refused_everywhere(
        run_cli, write(tmp_path, "r.json", obj), tmp_path,
        "$.clusters[0].record_chunks[1]", "item 'a' is also in $.clusters[0].record_chunks[0]",
    )  # fmt: skip


def test_an_item_in_a_record_chunk_and_the_term_chunk(run_cli, tmp_path: Path) -> None:
    obj = valid()
    obj["clusters"][1]["term_chunk"].append("b")
    refused_everywhere(
        run_cli, write(tmp_path, "r.json", obj), tmp_path,
        "$.clusters[1].term_chunk", "item 'b' is also in $.clusters[1].record_chunks[0]",
    )  # fmt: skip


def test_a_shared_chunk_item_also_in_a_cluster_under_it(run_cli, tmp_path: Path) -> None:
    obj = valid()
    obj["joint_clusters"] = [{"id": "j0", "members": ["c0", "c1"], "shared_chunks": [[["u"], ["v"]]]}]
    refused_everywhere(
        run_cli, write(tmp_path, "r.json", obj), tmp_path,
        "$.clusters[1].term_chunk", "item 'u' is also in $.joint_clusters[0].shared_chunks[0], a shared chunk above",
    )  # fmt: skip


def test_a_shared_chunk_with_more_sub_records_than_records(run_cli, tmp_path: Path) -> None:
    obj = valid()
    obj["joint_clusters"] = [{"id": "j0", "members": ["c0", "c1"], "shared_chunks": [[["v"]] * 9]}]
    refused_everywhere(
        run_cli, write(tmp_path, "r.json", obj), tmp_path,
        "$.joint_clusters[0].shared_chunks[0]", "9 sub-records for the 8 records of the clusters under 'j0'",
    )  # fmt: skip


def test_stats_inconsistent_with_the_content(run_cli, tmp_path: Path) -> None:
    """The issue's "301 records published of 300"."""
    obj = valid()
    obj["clusters"][1]["size"] = 5
    obj["stats"]["records_published"] = 9
    path = write(tmp_path, "r.json", obj)
    refused_everywhere(run_cli, path, tmp_path, "$.stats", "publishes 9 records and states 0 suppressed of 8")
    obj["stats"]["records_published"] = 8
    path = write(tmp_path, "r2.json", obj)
    refused_everywhere(run_cli, path, tmp_path, "$.stats", "publishes 9 records, but whose stats say 8")
    obj = valid()
    obj["stats"]["record_chunks"] = 2
    path = write(tmp_path, "r3.json", obj)
    refused_everywhere(run_cli, path, tmp_path, "$.stats.record_chunks", "states 2, the content has 3")


def test_joint_clusters_that_cross(run_cli, tmp_path: Path) -> None:
    obj = valid()
    obj["clusters"].append(cluster("c2", [[["a", "b"], ["a", "b"], ["a", "b"], ["a", "b"]]], []))
    obj["stats"].update(records_in=12, records_published=12)
    obj["joint_clusters"] = [
        {"id": "j0", "members": ["c0", "c1"], "shared_chunks": [[["v"], ["v"]]]},
        {"id": "j1", "members": ["c1", "c2"], "shared_chunks": [[["w"], ["w"]]]},
    ]
    refused_everywhere(run_cli, write(tmp_path, "r.json", obj), tmp_path, "$.joint_clusters[0]", "must nest")


OTHER_ITEMS = "item 'a' does not occur in the original (and 4 other item(s))"


@pytest.mark.parametrize(
    ("original", "where", "fragment"),
    [
        pytest.param("x y\n" * 8, "$.clusters[0].record_chunks[0][0]", OTHER_ITEMS, id="a different original"),
        pytest.param(ORIGINAL.replace("u", "b"), "$.clusters[1].term_chunk", "item 'u' does not", id="absent item"),
        pytest.param(ORIGINAL + "a b\n", "$.stats.records_in", "states 8 records in, the original has 9", id="dropped"),
        pytest.param(ORIGINAL.rsplit("a b\n", 1)[0], "$.stats.records_in", "the original has 7", id="inflated"),
    ],
)
def test_the_original_alone_contradicts(run_cli, tmp_path: Path, original: str, where: str, fragment: str) -> None:
    data = tmp_path / "d.basket"
    data.write_text(original)
    refused_everywhere(run_cli, write(tmp_path, "r.json", valid()), tmp_path, where, fragment, "--original", data)


def test_more_records_published_than_the_original_has_without_accounting(run_cli, tmp_path: Path) -> None:
    obj = valid()
    del obj["stats"]
    data = tmp_path / "d.basket"
    data.write_text(ORIGINAL.rsplit("a b\n", 1)[0])
    refused_everywhere(
        run_cli, write(tmp_path, "r.json", obj), tmp_path, "$.clusters", "8 records published, the original has 7",
        "--original", data,
    )  # fmt: skip


# ------------------------------------------------------------------ oracle
RECORDS = st.lists(st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=5), min_size=6, max_size=30)


@settings(max_examples=25, deadline=None)
@given(records=RECORDS, k=st.integers(2, 3), seed=st.integers(0, 3), data=st.data())
def test_oracle_releases_of_the_method_pass_and_a_moved_item_never_does(
    registry: Registry, records: list[list[str]], k: int, seed: int, data: st.DataObject
) -> None:
    dataset = Dataset.from_records(records)
    result = privtool.anonymize(dataset, "disassociation", k=k, m=2, seed=seed)
    release = result.release
    models = {m.name: m for m in registry.all("claim_model")}
    assert check_structure(release, dataset, models=models) == []
    # Oracle for the disjointness check: copy an item one of the cluster's
    # chunks holds into another chunk (record or term) of the same cluster.
    obj = json.loads(release.dumps())
    chunked = [(p, c) for p, c in enumerate(obj["clusters"]) if c["record_chunks"]]
    if not chunked:
        return
    p, c = data.draw(st.sampled_from(chunked))
    i = data.draw(st.integers(0, len(c["record_chunks"]) - 1))
    item = data.draw(st.sampled_from(sorted({x for row in c["record_chunks"][i] for x in row})))
    mutated = copy.deepcopy(obj)
    target = mutated["clusters"][p]
    others = [j for j in range(len(target["record_chunks"])) if j != i]
    if others and data.draw(st.booleans()):
        j = data.draw(st.sampled_from(others))
        row = target["record_chunks"][j][0]
        row.append(item) if item not in row else None
    elif item not in target["term_chunk"]:
        target["term_chunk"].append(item)
    problems = check_structure(release_from_json(mutated), dataset, models=models)
    assert any(f"$.clusters[{p}]" in problem.path and repr(item) in problem.problem for problem in problems)


LETTERS = st.sampled_from(["a", "b", "c", "d", "e"])


@st.composite
def disassociated(draw: st.DrawFn) -> Release:
    """A small disassociated release, well formed or not: random record chunks
    and term chunks over five labels (items may repeat across chunks), joint
    clusters over random member sets (nested, crossing or disjoint) with random
    shared chunks and sizes."""
    n = draw(st.integers(1, 4))
    rows = st.lists(LETTERS, min_size=1, max_size=3, unique=True)
    clusters = [
        Cluster(
            f"c{i}",
            draw(st.integers(1, 4)),
            draw(st.lists(st.lists(rows, min_size=1, max_size=3), max_size=2)),
            draw(st.lists(LETTERS, max_size=2, unique=True)),
        )
        for i in range(n)
    ]
    joints = [
        JointCluster(
            f"j{j}",
            draw(st.lists(st.sampled_from([c.id for c in clusters]), min_size=1, max_size=n, unique=True)),
            draw(st.lists(st.lists(rows, min_size=1, max_size=6), max_size=2)),
        )
        for j in range(draw(st.integers(0, 3)))
    ]
    return Release(kind="disassociated", params={"k": 2}, clusters=clusters, joint_clusters=joints)


@settings(max_examples=300, deadline=None)
@given(disassociated(), st.booleans())
def test_checks_on_the_arrays_find_what_the_nested_walk_finds(release: Release, with_original: bool) -> None:
    """Oracle for the checks' arrays paths (a release held as CSR arrays, as
    read from a file or made by disassociation): the same problems, at the
    same paths, as on the same content held as nested lists."""
    original = Dataset.from_records([["a", "b", "c"], ["d"]]) if with_original else None
    held = Release.from_arrays(
        ReleaseArrays.from_nested(release.clusters, release.joint_clusters, []), "disassociated", params={"k": 2}
    )
    assert held.backing_arrays is not None
    assert check_structure(held, original) == check_structure(release, original)


@settings(max_examples=300, deadline=None)
@given(disassociated())
def test_laminar_parents_on_the_arrays_is_joint_parents(release: Release) -> None:
    """Oracle for the joint tree worked out on the arrays: the parents
    ``nested_parents`` finds on the nested release, and a refusal exactly when
    it finds joint clusters that do not nest (every member here is a cluster);
    ``joint_parents`` gives the same on the release held either way."""
    arrays = ReleaseArrays.from_nested(release.clusters, release.joint_clusters, [])
    held = Release.from_arrays(arrays, "disassociated", params={"k": 2})
    try:
        expected: dict[str, str] | None = nested_parents(release)
    except OverlappingJointClusters:
        expected = None
    assert laminar_parents(arrays) == expected
    for subject in (release, held):
        if expected is None:
            with pytest.raises(OverlappingJointClusters):
                joint_parents(subject)
        else:
            assert joint_parents(subject) == expected


def walked_chain(node: str, parent: dict[str, str]) -> tuple[str, ...]:
    """A node's ancestors, one walk up from it (the oracle of :func:`ancestor_chains`)."""
    chain: list[str] = []
    while node in parent:
        node = parent[node]
        if node in chain:
            raise OverlappingJointClusters(node)
        chain.append(node)
    return tuple(chain)


NODES = [f"n{i}" for i in range(8)]


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(NODES), st.sampled_from(NODES)), st.lists(st.sampled_from(NODES), max_size=10))
def test_ancestor_chains_are_one_walk_up_from_each_node(parent: dict[str, str], nodes: list[str]) -> None:
    """Oracle for the chains worked out once per node: each node's walk up, and
    on a cycle the same node named as the first walk that meets it names."""
    try:
        expected: list[tuple[str, ...]] | str = [walked_chain(node, parent) for node in nodes]
    except OverlappingJointClusters as exc:
        expected = exc.args[0]
    try:
        got: list[tuple[str, ...]] | str = ancestor_chains(nodes, parent)
    except OverlappingJointClusters as exc:
        got = exc.args[0]
    assert got == expected
