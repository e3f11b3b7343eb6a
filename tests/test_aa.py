"""The ``aa`` anonymizer (Terrovitis, Mamoulis, Kalnis 2008): a golden test from
He & Naughton's worked example, brute-force oracles on random trees and data
(k^m-anonymity by exhaustive count, a global cut, NCP, and the cheapest repair
at every step), and the CLI."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from assessing import certificates_of
from hypothesis import given, settings
from hypothesis import strategies as st
from tampering import write_tampered
from test_generalization import HN_EDGES, HN_RECORDS, trees_and_data, write_edges

from privtool.assess import assess
from privtool.components import Evidence
from privtool.context import Context
from privtool.dataset import Dataset
from privtool.itemset_mining import itemset_counts, pair_supports
from privtool.pipeline import run_method
from privtool.plugins.aa import apriori
from privtool.release import read_release


def run(registry, records: list[list[str]], hierarchy: Path, k: int, m: int, order: str = "itemset", cost: str = "ncp"):
    params = {"k": k, "m": m, "hierarchy": str(hierarchy), "hierarchy_format": "auto", "order": order, "cost": cost}
    return registry.get("anonymizer", "aa").anonymize(Dataset.from_records(records), params, Context(seed=0))


def published_by_input(outcome) -> list[list[str]]:
    groups = outcome.trail.notes["groups"]
    return [groups[g] for g in outcome.trail.cluster_of_record]


def km_violations(records: list[list[str]], k: int, m: int) -> list[tuple[str, ...]]:
    """Every itemset of 1..m labels held by some record and by fewer than k records."""
    counts: Counter[tuple[str, ...]] = Counter()
    for record in records:
        for size in range(1, m + 1):
            counts.update(itertools.combinations(sorted(set(record)), size))
    return [itemset for itemset, n in counts.items() if n < k]


def test_he_naughton_example_gives_the_optimal_global_recoding(registry, tmp_path: Path) -> None:
    """He & Naughton 2009 (ALGORITHM-NOTES 3.4) give the optimal global recoding
    of their example under 2^2-anonymity: {a1}, {a1,a2}, {B}, {B}, {a1,a2,B} x3.
    AA finds it: only {a1,b1} and {a2,b1} (record T7) are below 2; the cheapest
    repair of {a1,b1} raises b1 (with b2) to B, which also repairs {a2,b1}."""
    outcome = run(registry, HN_RECORDS, write_edges(tmp_path / "h.csv", HN_EDGES), 2, 2)
    assert [sorted(r) for r in published_by_input(outcome)] == [
        ["a1"],
        ["a1", "a2"],
        ["B"],
        ["B"],
        ["B", "a1", "a2"],
        ["B", "a1", "a2"],
        ["B", "a1", "a2"],
    ]
    # b1 and b2 are published as B (2 of 4 leaves): 2 + 2 + 1 + 1 + 2 occurrences (T3..T7) of 17
    assert outcome.release.stats["ncp"] == pytest.approx(8 * 0.5 / 17)
    assert outcome.trail.notes["violations_2"] == 2 and outcome.trail.notes["generalisations_2"] == 1
    # m = 1: every item occurs twice or more, nothing is generalised
    assert run(registry, HN_RECORDS, tmp_path / "h.csv", 2, 1).release.stats["ncp"] == 0


def leaves_under(graph: nx.DiGraph, node: str) -> set[str]:
    return {x for x in nx.descendants(graph, node) | {node} if graph.out_degree(x) == 0}


@settings(max_examples=120, deadline=None)
@given(trees_and_data(), st.integers(1, 3), st.sampled_from(apriori.ORDERS))
def test_random_releases_are_km_anonymous_global_cuts(registry, tmp_path_factory, case, m: int, order: str) -> None:
    edges, records, k = case
    path = write_edges(tmp_path_factory.mktemp("h") / "h.csv", edges)
    graph = nx.DiGraph([(p, c) for c, p in edges])
    graph.add_node("I0")
    n_leaves = sum(1 for n in graph.nodes if graph.out_degree(n) == 0)
    outcome = run(registry, records, path, k, m, order)
    published = published_by_input(outcome)
    assert len(outcome.release.records) == len(records)
    assert Counter(map(tuple, outcome.release.records)) == Counter(map(tuple, published))
    # exhaustive: every itemset of up to m published labels that occurs, occurs k times
    assert km_violations(outcome.release.records, k, m) == []
    # one pass repairs a level (the argument of docs/algorithms/aa.md); a second would show it wrong
    assert all(outcome.trail.notes[f"passes_{size}"] <= 1 for size in range(1, m + 1))
    # a global cut: one node per item, the same in every record, never two nested nodes
    node_of: dict[str, str] = {}
    for original, form in zip(records, published, strict=True):
        for item in original:
            covering = [node for node in form if item in leaves_under(graph, node)]
            assert len(covering) == 1
            assert node_of.setdefault(item, covering[0]) == covering[0]
        assert set(form) == {node_of[item] for item in original}
    cut = set(node_of.values())
    assert not any(a != b and b in nx.descendants(graph, a) for a in cut for b in cut)
    # NCP by brute force, from the release stats and from the metric
    cost = sum(
        0 if len(leaves_under(graph, node_of[i])) == 1 else len(leaves_under(graph, node_of[i])) / n_leaves
        for r in records
        for i in r
    )
    expected = cost / sum(len(r) for r in records)
    assert outcome.release.stats["ncp"] == pytest.approx(expected)
    values = registry.get("metric", "ncp").compute(
        outcome.release, Evidence(Dataset.from_records(records), outcome.trail), {}, Context()
    )
    assert values["ncp"] == pytest.approx(expected)


def check_repairs(
    registry, path: Path, edges: list[tuple[str, str]], records: list[list[str]], k: int, m: int, cost: str = "ncp"
) -> int:
    """The claim of docs/algorithms/aa.md: each repair raises the cut to a
    generalisation of the violating itemset (any ancestor-or-self per node)
    that reaches support k and costs no more than any other that does (NCP of
    the whole release, or with ``cost="leaves"`` the leaf counts of the raised
    nodes); checked by enumerating them all with networkx and counting by brute
    force. Returns how many repairs were checked."""
    graph = nx.DiGraph([(p, c) for c, p in edges])
    graph.add_node("I0")
    n_leaves = sum(1 for n in graph.nodes if graph.out_degree(n) == 0)
    repairs: list[tuple[dict[str, str], tuple[str, ...], dict[str, str]]] = []
    original_repair = apriori._Cut.repair

    def mapping(cut: apriori._Cut) -> dict[str, str]:
        hier = cut.hier
        return {hier.labels[v]: hier.labels[int(cut.gen[v])] for v in np.flatnonzero(hier.is_leaf)}

    def recording_repair(self: apriori._Cut, nodes: tuple[int, ...], k: int) -> None:
        before = mapping(self)
        original_repair(self, nodes, k)
        repairs.append((before, tuple(self.hier.labels[v] for v in nodes), mapping(self)))

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(apriori._Cut, "repair", recording_repair)
        run(registry, records, path, k, m, cost=cost)

    def loss(cut_of: dict[str, str]) -> float:
        return sum(
            0 if len(leaves_under(graph, cut_of[i])) == 1 else len(leaves_under(graph, cut_of[i])) / n_leaves
            for r in records
            for i in r
        )

    def support(nodes: set[str]) -> int:
        return sum(all(any(i in leaves_under(graph, v) for i in r) for v in nodes) for r in records)

    def leaves(nodes: set[str]) -> int:
        return sum(len(leaves_under(graph, v)) for v in nodes)

    for before, itemset, after in repairs:
        options = []
        for choice in itertools.product(*([v, *nx.ancestors(graph, v)] for v in itemset)):
            top = {v for v in choice if not any(w != v and v in nx.descendants(graph, w) for w in choice)}
            raised = {
                item: next((t for t in top if item in leaves_under(graph, t)), node) for item, node in before.items()
            }
            if support(top) >= k:
                options.append(loss(raised) if cost == "ncp" else leaves(top))
        assert options, "the root always reaches k"
        chosen = {after[min(leaves_under(graph, v))] for v in itemset}
        assert support(chosen) >= k
        assert (loss(after) if cost == "ncp" else leaves(chosen)) == pytest.approx(min(options))
    return len(repairs)


@settings(max_examples=60, deadline=None)
@given(trees_and_data(), st.integers(1, 3), st.sampled_from(apriori.COSTS))
def test_every_repair_is_the_cheapest_generalisation_reaching_k(
    registry, tmp_path_factory, case, m: int, cost: str
) -> None:
    edges, records, k = case
    check_repairs(registry, write_edges(tmp_path_factory.mktemp("h") / "h.csv", edges), edges, records, k, m, cost)


def test_repair_check_sees_the_example_repair(registry, tmp_path: Path) -> None:
    edges = [(c, "I0" if p == "ALL" else p) for c, p in HN_EDGES]
    assert check_repairs(registry, write_edges(tmp_path / "h.csv", edges), edges, HN_RECORDS, 2, 2) == 1


@settings(max_examples=60, deadline=None)
@given(trees_and_data(), st.integers(1, 3), st.sampled_from(apriori.ORDERS))
def test_windows_give_the_row_by_row_outcome(registry, tmp_path_factory, case, m: int, order: str) -> None:
    """The vectorised windows of ``_repair_in_order`` change nothing: a window of
    one row is the row-by-row loop."""
    edges, records, k = case
    path = write_edges(tmp_path_factory.mktemp("h") / "h.csv", edges)
    default = published_by_input(run(registry, records, path, k, m, order))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(apriori, "_FIRST_WINDOW", 1)
        patch.setattr(apriori, "_LAST_WINDOW", 1)
        assert published_by_input(run(registry, records, path, k, m, order)) == default


def test_itemset_counts_against_brute_force() -> None:
    rng = np.random.default_rng(7)
    records = [sorted(set(rng.integers(0, 9, size=rng.integers(0, 6)).tolist())) for _ in range(40)]
    indptr = np.r_[0, np.cumsum([len(r) for r in records])]
    nodes = np.array([v for r in records for v in r], dtype=np.int64)
    for size in (1, 2, 3):
        expected = Counter(c for r in records for c in itertools.combinations(r, size))
        for base in (9, 2**40):  # int64 keys, and the row fallback when keys would overflow
            rows, counts = itemset_counts(indptr, nodes, size, base)
            assert dict(zip(map(tuple, rows.tolist()), counts.tolist(), strict=True)) == expected


@settings(max_examples=25, deadline=None)
@given(trees_and_data(), st.integers(1, 3))
def test_random_releases_claim_km_anonymity_and_verify_certifies_it(registry, tmp_path_factory, case, m: int) -> None:
    """The release states km-anonymity (k, m) and the assessment engine's
    independent verifier (``km-anonymity-records``) proves it; the integrity
    checks (faithfulness, hierarchy) hold against the original and the trail."""
    edges, records, k = case
    path = write_edges(tmp_path_factory.mktemp("h") / "h.csv", edges)
    dataset = Dataset.from_records(records)
    outcome = run_method(registry, dataset, "aa", {"k": k, "m": m, "hierarchy": str(path)}, Context(seed=0))
    assert [c.to_json() for c in outcome.release.claims] == [
        {"model": "km-anonymity", "k": k, "m": m, "adversary": "consistent-reconstruction"}
    ]
    result = assess(registry, outcome.release, Evidence(dataset, outcome.trail), Context())
    assert result.verdict == "PASS", result.verdict_reason
    found = certificates_of(result)
    assert found["km-anonymity-records"].holds is True and found["hierarchy"].holds is True


def test_verify_certifies_an_aa_release_and_catches_a_tampered_one(run_cli, tmp_path: Path) -> None:
    data = tmp_path / "d.txt"
    data.write_text("".join(" ".join(r) + "\n" for r in HN_RECORDS))
    hierarchy = write_edges(tmp_path / "h.csv", HN_EDGES)
    release, trail = tmp_path / "r.json", tmp_path / "t.json"
    made = run_cli(
        "anonymize", data, "--method", "aa", "--k", "2", "--m", "2", "--hierarchy", hierarchy, "-o", release,
        "--trail", trail, "-q", "--executor", "serial",
    )  # fmt: skip
    assert made.code == 0, made.err
    verified = run_cli("verify", release, "--original", data, "--trail", trail, "--json")
    assert verified.code == 0, verified.out
    report = json.loads(verified.out)
    assert report["verdict"] == "PASS"
    # publish the records ungeneralised: {a1, b1} (T7 only) occurs once, below k = 2
    payload = json.loads(release.read_text())
    payload["records"] = sorted(sorted(r) for r in HN_RECORDS)
    tampered = write_tampered(payload, tmp_path / "tampered.json")
    caught = run_cli("verify", tampered, "--json")
    assert caught.code == 1
    claim = json.loads(caught.out)["claims"][0]
    assert (claim["claim"]["model"], claim["status"]) == ("km-anonymity", "fails")
    assert "itemset={a1, b1}, covering_records=1" in claim["reason"]


def test_cli_anonymize_aa(run_cli, tmp_path: Path) -> None:
    data = tmp_path / "d.txt"
    data.write_text("".join(" ".join(r) + "\n" for r in HN_RECORDS))
    hierarchy = write_edges(tmp_path / "h.csv", HN_EDGES)
    out = tmp_path / "r.json"
    args = ["anonymize", data, "--method", "aa", "--hierarchy", hierarchy, "-o", out, "-q", "--executor", "serial"]
    result = run_cli(*args, "--k", "2", "--m", "2")
    assert result.code == 0, result.err
    release = read_release(out)
    assert release.kind == "generalized" and release.params["method"] == "aa" and release.params["m"] == 2
    assert km_violations(release.records, 2, 2) == []
    for bad, message in [
        (["--k", "9"], "--k 9 is larger than the 7 non-empty records"),
        (["--order", "random"], "--order must be one of itemset, support"),
    ]:
        result = run_cli(*args, *bad)
        assert result.code == 2 and message in result.err and result.err.count("\n") == 1


@pytest.mark.slow
def test_bms_webview_2_k5_m2(registry, shared_data: Path) -> None:
    """The benchmark case of docs/results/generalization.md: 5^2-anonymous by an
    independent count, every record published, NCP not above the public
    implementation's 5.79 % (ALGORITHM-NOTES §8)."""
    from privtool.io import read_dataset

    dataset = read_dataset(registry, shared_data / "bms-webview-2.dat.gz")
    params = {
        "k": 5,
        "m": 2,
        "hierarchy": str(shared_data / "hierarchies" / "bms-webview-2-ranges.csv.gz"),
        "hierarchy_format": "auto",
        "order": "itemset",
        "cost": "ncp",
    }
    outcome = registry.get("anonymizer", "aa").anonymize(dataset, params, Context(seed=0))
    assert len(outcome.release.records) == dataset.n_records
    # every label and every pair of labels that occurs, occurs 5 times (one sparse product, not aa's counter)
    published = Dataset.from_records(outcome.release.records)
    supports = pair_supports(published, list(published.labels))
    assert supports[supports > 0].min() >= 5
    assert outcome.release.stats["ncp_percent"] <= 5.79
