"""One utility axis for every release kind: the leaf reconstruction of a
generalized release, the ARE count-query workload and metric, and the itemset
supports under them, each against a brute-force computation on tiny data."""

from __future__ import annotations

import itertools
import json
import math
from collections import Counter

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from privtool.attacks.leaf_reconstruction import LeafSampler
from privtool.components import Evidence
from privtool.context import Context
from privtool.dataset import Dataset
from privtool.errors import InputError
from privtool.itemset_mining import itemset_supports
from privtool.plugins.utility_metrics import (
    AverageRelativeError,
    RelativeError,
    TopKDeviation,
    average_relative_error,
    count_query_workload,
)
from privtool.release import Release, write_release


def brute_support(records: list[list[str]], itemset: tuple[str, ...]) -> int:
    return sum(1 for r in records if set(itemset) <= set(r))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from("abcdef"), max_size=5), min_size=1, max_size=20),
    st.lists(st.lists(st.sampled_from("abcdefz"), max_size=3, unique=True), min_size=1, max_size=12),
)
def test_itemset_supports_equal_brute_force(rows: list[list[str]], itemsets: list[list[str]]) -> None:
    got = itemset_supports(Dataset.from_records(rows), [tuple(i) for i in itemsets])
    assert got.tolist() == [brute_support(rows, tuple(i)) for i in itemsets]


# ------------------------------------------------- generalized reconstructions
@st.composite
def generalized_releases(draw: st.DrawFn) -> tuple[nx.DiGraph, Release]:
    """A random tree (internal nodes I0.., leaves L0..) and records of random
    nodes, nested ones included (lgr's deepest-cover reading)."""
    n_internal = draw(st.integers(1, 4))
    n_leaves = draw(st.integers(2, 8))
    edges = [(f"I{i}", f"I{draw(st.integers(0, i - 1))}") for i in range(1, n_internal)]
    edges += [(f"L{j}", f"I{draw(st.integers(0, n_internal - 1))}") for j in range(n_leaves)]
    graph = nx.DiGraph([(p, c) for c, p in edges])
    graph.add_node("I0")
    nodes = sorted(graph.nodes)
    records = draw(st.lists(st.lists(st.sampled_from(nodes), max_size=3, unique=True), min_size=1, max_size=5))
    release = Release(kind="generalized", records=records, hierarchy={"root": "I0", "edges": [list(e) for e in edges]})
    return graph, release


def leaves_under(graph: nx.DiGraph, node: str) -> set[str]:
    return {x for x in nx.descendants(graph, node) | {node} if graph.out_degree(x) == 0}


def allowed_leaves(graph: nx.DiGraph, record: list[str]) -> list[set[str]]:
    """Per label of the record, the leaves it can stand for: those under it that
    no deeper label of the record covers (docs/metrics.md)."""
    out = []
    for label in record:
        deeper = [w for w in record if w != label and w in nx.descendants(graph, label)]
        out.append(leaves_under(graph, label) - set().union(*(leaves_under(graph, w) for w in deeper)))
    return out


def draws_per_record(release: Release, draws: int, seed: int) -> list[Counter[frozenset[str]]]:
    """How often each leaf set is drawn for each record: records are drawn
    independently, so one sample of the release with every record repeated
    ``draws`` times gives ``draws`` draws of each."""
    repeated = Release(
        kind="generalized", records=[r for r in release.records for _ in range(draws)], hierarchy=release.hierarchy
    )
    sample = LeafSampler(repeated).sample(np.random.default_rng(seed)).to_label_records()
    return [Counter(frozenset(r) for r in sample[i * draws : (i + 1) * draws]) for i in range(len(release.records))]


@settings(max_examples=40, deadline=None)
@given(generalized_releases())
def test_leaf_reconstruction_is_uniform_over_every_consistent_choice(case) -> None:
    """Enumerate, per record, every choice of one allowed leaf per label; the
    sampler must draw only those, each equally often (chi-square, 3,000 draws)."""
    graph, release = case
    allowed = [allowed_leaves(graph, record) for record in release.records]
    if any(not choice for per_record in allowed for choice in per_record):
        with pytest.raises(InputError, match="no item is left"):
            LeafSampler(release)
        return
    for per_record, seen in zip(allowed, draws_per_record(release, 3000, 11), strict=True):
        # the allowed sets of one record are disjoint, so each choice is a distinct leaf set
        possible = [frozenset(c) for c in itertools.product(*per_record)]
        assert len(set(possible)) == len(possible) and set(seen) <= set(possible)
        if len(possible) > 1:
            assert chisquare([seen[c] for c in possible]).pvalue > 1e-6


def test_leaf_reconstruction_of_the_lgr_example() -> None:
    """{N, c1} stands for c1 and one of c2..c4 (N's other leaves), each a third of the time."""
    hierarchy = {"root": "R", "edges": [["N", "R"], ["x", "R"], ["c1", "N"], ["c2", "N"], ["c3", "N"], ["c4", "N"]]}
    release = Release(kind="generalized", records=[["N", "c1"], ["x"], []], hierarchy=hierarchy)
    first, second, third = draws_per_record(release, 3000, 3)
    assert set(first) == {frozenset({"c1", c}) for c in ("c2", "c3", "c4")}
    assert all(abs(n - 1000) < 120 for n in first.values())
    assert second == Counter({frozenset({"x"}): 3000}) and third == Counter({frozenset(): 3000})
    inconsistent = Release(kind="generalized", records=[["N", "c1", "c2", "c3", "c4"]], hierarchy=hierarchy)
    with pytest.raises(InputError, match="published record 0 holds node 'N'"):
        LeafSampler(inconsistent)


# ------------------------------------------------------------------ workload
def test_count_query_workload_draws_parts_of_random_records() -> None:
    """P(itemset I) = sum over the records r holding at least 2 items with I in r
    of 1 / (eligible records * C(|r|, 2)): checked with 20,000 queries."""
    rows = [["a", "b", "c"], ["a", "b"], ["b", "c", "d", "e"], ["e"], [], ["a", "d"]]
    original = Dataset.from_records(rows)
    itemsets, truth = count_query_workload(original, 2, 20_000, np.random.default_rng(5))
    eligible = [r for r in rows if len(r) >= 2]
    expected: Counter[tuple[str, ...]] = Counter()
    for r in eligible:
        for pair in itertools.combinations(sorted(r), 2):
            expected[pair] += 1 / (len(eligible) * math.comb(len(r), 2))
    seen = Counter(itemsets)
    assert set(seen) == set(expected)
    assert chisquare([seen[p] for p in expected], [20_000 * expected[p] for p in expected]).pvalue > 1e-6
    assert truth.tolist() == [brute_support(rows, i) for i in itemsets]
    none, no_truth = count_query_workload(original, 5, 10, np.random.default_rng(0))
    assert none == [] and len(no_truth) == 0


# ----------------------------------------------------------------------- ARE
ROWS = [["a", "b"], ["a", "b"], ["a", "b", "c"], ["c", "d"], ["c", "d"], ["a", "c"], ["d"]]


def brute_are(original: list[list[str]], reconstruction: list[list[str]], itemsets, sanity: int) -> float:
    errors = [
        abs(brute_support(original, i) - brute_support(reconstruction, i)) / max(brute_support(original, i), sanity)
        for i in itemsets
    ]
    return sum(errors) / len(errors)


def test_are_of_a_sanitized_release_equals_brute_force() -> None:
    published = [["a", "b"], ["a"], ["a", "b", "c"], ["c", "d"], ["c"], ["a"], ["d"]]
    evidence = Evidence(original=Dataset.from_records(ROWS))
    params = {"samples": 5, "are_queries": 50, "are_query_size": 2, "are_sanity": 1}
    got = AverageRelativeError().compute(
        Release(kind="sanitized", records=published), evidence, params, Context(seed=4)
    )
    itemsets, _ = count_query_workload(evidence.original, 2, 50, Context(seed=4).rng("are-workload"))
    assert got["are_samples"] == 1 and got["are_queries"] == 50 and got["are_sanity_records"] == 1
    assert got["are"] == pytest.approx(brute_are(ROWS, published, itemsets, 1))
    # a sanity bound of 2 records caps the error of the pairs of support 1
    params["are_sanity"] = 2
    got = AverageRelativeError().compute(
        Release(kind="sanitized", records=published), evidence, params, Context(seed=4)
    )
    assert got["are"] == pytest.approx(brute_are(ROWS, published, itemsets, 2))


HIERARCHY = {"root": "*", "edges": [["A", "*"], ["C", "*"], ["a", "A"], ["b", "A"], ["c", "C"], ["d", "C"]]}
GENERALIZED = [["A"], ["A"], ["A", "c"], ["C"], ["C"], ["A", "c"], ["C"]]


def test_are_of_a_generalized_release_equals_brute_force_per_sample_and_in_expectation() -> None:
    """Each sample's ARE is the brute-force ARE of that reconstruction; the mean
    over many samples approaches the exact expectation over all 2^4 * 2^3
    reconstructions (every published node: one of its two leaves)."""
    release = Release(kind="generalized", records=GENERALIZED, hierarchy=HIERARCHY)
    evidence = Evidence(original=Dataset.from_records(ROWS))
    ctx = Context(seed=2)
    itemsets, _ = count_query_workload(evidence.original, 2, 40, ctx.rng("are-workload"))
    params = {"samples": 4, "are_queries": 40, "are_query_size": 2, "are_sanity": 1}
    got = AverageRelativeError().compute(release, evidence, params, ctx)
    sampler = LeafSampler(release)
    for i, value in enumerate(got["are_detail"]["per_sample"]):
        sample = sampler.sample(Context(seed=2).rng("reconstruction", i)).to_label_records()
        assert value == pytest.approx(brute_are(ROWS, sample, itemsets, 1))
    choices = [[leaves for leaves in ({"A": "ab", "C": "cd"}.get(label, label) for label in r)] for r in GENERALIZED]
    exact = [
        brute_are(ROWS, [list(pick) for pick in picks], itemsets, 1)
        for picks in itertools.product(*(itertools.product(*c) for c in choices))
    ]
    mean = AverageRelativeError().compute(release, evidence, {**params, "samples": 400}, ctx)["are"]
    assert len(exact) == 2**7 and mean == pytest.approx(sum(exact) / len(exact), abs=0.02)


def test_a_release_of_leaves_reconstructs_to_the_original() -> None:
    """A generalized release that publishes every item as itself has one
    reconstruction, the original: tkd, re and ARE are 0."""
    release = Release(kind="generalized", records=ROWS, hierarchy=HIERARCHY)
    evidence = Evidence(original=Dataset.from_records(ROWS))
    ctx = Context()
    assert (
        TopKDeviation().compute(
            release, evidence, {"samples": 3, "top_k": 3, "itemset_min_size": 2, "itemset_max_size": 3}, ctx
        )["tkd"]
        == 0
    )
    assert (
        RelativeError().compute(release, evidence, {"samples": 3, "re_terms": 4, "re_denominator": "average"}, ctx)[
            "re"
        ]
        == 0
    )
    params = {"samples": 3, "are_queries": 30, "are_query_size": 2, "are_sanity": 0.001}
    assert AverageRelativeError().compute(release, evidence, params, ctx)["are"] == 0


def test_average_relative_error_formula() -> None:
    """|3 - 1| / 3 and |1 - 2| / max(1, 2) with a sanity bound of 2: (2/3 + 1/2) / 2."""
    reconstruction = Dataset.from_records([["a", "b"], ["b", "c"], ["b", "c"]])
    value = average_relative_error(reconstruction, [("a", "b"), ("b", "c")], np.array([3.0, 1.0]), 2)
    assert value == pytest.approx((2 / 3 + 1 / 2) / 2)


def test_metrics_cli_reports_the_shared_axis_for_a_generalized_release(run_cli, tmp_path) -> None:
    write_release(
        Release(kind="generalized", params={"k": 2}, records=GENERALIZED, hierarchy=HIERARCHY), tmp_path / "g.json"
    )
    (tmp_path / "d.txt").write_text("".join(" ".join(r) + "\n" for r in ROWS))
    result = run_cli(
        "metrics",
        tmp_path / "g.json",
        "--original",
        tmp_path / "d.txt",
        "--json",
        "--executor",
        "serial",
        "--samples",
        "3",
    )
    assert result.code == 0, result.err
    status = {m["name"]: m["status"] for m in json.loads(result.out)["metrics"]}
    assert status["tkd"] == status["re"] == status["are"] == "ok"
