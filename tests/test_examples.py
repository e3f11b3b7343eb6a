"""The embedded worked examples: counts as transcribed from the papers, their
hierarchies, and the published results they carry for golden tests."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from privtool import examples

# name -> (records, distinct items, item occurrences), counted by hand from the papers' tables.
COUNTS = {
    "strategies-table1": (4, 10, 22),
    "strategies-table7": (14, 19, 54),
    "cover-problem": (6, 5, 21),
    "he-naughton": (7, 4, 17),
    "lgr-table1": (8, 11, 23),
}


def test_every_example_is_listed() -> None:
    assert examples.names() == sorted(COUNTS)


@pytest.mark.parametrize("name", sorted(COUNTS))
def test_counts_match_the_papers(name: str) -> None:
    dataset = examples.load(name)
    assert (dataset.n_records, dataset.n_items, dataset.n_occurrences) == COUNTS[name]
    example = examples.get(name)
    assert example.source and example.title


def _leaves(example: examples.Example) -> dict[str, set[str]]:
    """Node -> leaves under it, from the edges alone."""
    children: dict[str, list[str]] = {}
    for child, parent in example.hierarchy_edges:
        children.setdefault(parent, []).append(child)

    def under(node: str) -> set[str]:
        return set().union(*(under(c) for c in children[node])) if node in children else {node}

    nodes = {n for edge in example.hierarchy_edges for n in edge}
    return {node: under(node) for node in nodes}


@pytest.mark.parametrize("name", ["he-naughton", "lgr-table1"])
def test_hierarchy_is_a_tree_whose_leaves_are_the_items(name: str) -> None:
    example = examples.get(name)
    children = [child for child, _ in example.hierarchy_edges]
    assert len(children) == len(set(children))  # one parent each
    parents = {parent for _, parent in example.hierarchy_edges}
    assert parents - set(children) == {example.hierarchy_root}
    leaves = _leaves(example)
    assert leaves[example.hierarchy_root] == set(example.dataset().labels)


def _ncp(example: examples.Example, published: list[list[str]]) -> float:
    """NCP numerator: each original occurrence charged |leaves(node)| / |I| of the
    published node covering it (0 for a leaf)."""
    leaves = _leaves(example)
    total = len(leaves[example.hierarchy_root])
    cost = 0.0
    for original, generalised in zip(example.records, published, strict=True):
        for item in original:
            node = next(n for n in generalised if item in leaves.get(n, {n}))
            cost += 0 if node == item else len(leaves[node]) / total
    return cost


def test_he_naughton_published_partition_costs_3_5_of_17() -> None:
    example = examples.get("he-naughton")
    result = example.paper_results["partition_k2"]
    assert _ncp(example, result["records"]) == pytest.approx(result["ncp_numerator"])
    assert example.dataset().n_occurrences == result["ncp_denominator"]
    assert min(Counter(map(tuple, result["records"])).values()) >= example.params["k"]


def test_lgr_proposed_column_is_not_strictly_2_anonymous() -> None:
    """Issue 5: records 1 and 6-8 of the paper's own result each occur once."""
    example = examples.get("lgr-table1")
    proposed = example.paper_results["proposed"]
    counts = Counter(tuple(sorted(r)) for r in proposed)
    unique = [i + 1 for i, r in enumerate(proposed) if counts[tuple(sorted(r))] < 2]
    assert unique == [1, 6, 7, 8]
    # Every published label is the item itself or an ancestor of it.
    leaves = _leaves(example)
    for original, published in zip(example.records, proposed, strict=True):
        for label in published:
            assert leaves.get(label, {label}) & set(original)


def test_stats_example_from_the_cli(run_cli) -> None:
    result = run_cli("stats", "--example", "strategies-table7", "--json")
    assert result.code == 0, result.err
    obj = json.loads(result.out)
    assert (obj["example"], obj["records"], obj["items"], obj["max_size"]) == ("strategies-table7", 14, 19, 6)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--example", "nope"), "unknown example 'nope'"),
        ((), "stats needs a FILE or --example NAME"),
        (("x.dat", "--example", "he-naughton"), "not both"),
    ],
)
def test_stats_example_errors(run_cli, args: tuple[str, ...], message: str) -> None:
    result = run_cli("stats", *args)
    assert result.code == 2
    assert message in result.err
