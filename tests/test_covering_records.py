"""CoveringRecordCounter against a brute-force oracle: every record, every item,
on random hierarchies and records that may hold a node and its descendant, by
both ways of computing the Gram matrix (dense blocks, sparse keys) and both
float precisions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privtool.attacks import covering_records
from privtool.attacks.covering_records import CoveringRecordCounter
from privtool.errors import InputError

LEAVES = [f"i{n}" for n in range(9)]


@st.composite
def hierarchies(draw) -> tuple[dict, dict[str, set[str]]]:
    """A random tree over LEAVES (internal nodes n0.., root '*') and the leaves under each node."""
    nodes, under = list(LEAVES), {leaf: {leaf} for leaf in LEAVES}
    edges, serial = [], 0
    while len(nodes) > 1 and draw(st.booleans()):
        group = draw(st.lists(st.sampled_from(nodes), min_size=2, max_size=min(4, len(nodes)), unique=True))
        parent = f"n{serial}"
        serial += 1
        edges += [[child, parent] for child in group]
        under[parent] = set().union(*(under[c] for c in group))
        nodes = [n for n in nodes if n not in group] + [parent]
    edges += [[child, "*"] for child in nodes]
    under["*"] = set(LEAVES)
    return {"root": "*", "edges": edges}, under


def brute_force(records: list[list[str]], query: list[str], under: dict[str, set[str]] | None) -> int:
    def covers(record: list[str], item: str) -> bool:
        return any(item in (under.get(label, ()) if under else {label}) for label in record)

    return sum(1 for record in records if all(covers(record, item) for item in query))


QUERIES = st.lists(
    st.lists(st.sampled_from([*LEAVES, "n0", "zz"]), min_size=1, max_size=4, unique=True), min_size=1, max_size=30
)
ROUTES = [
    ("dense", {"BLAS_SPEEDUP": 10**9}),
    ("sparse", {"BLAS_SPEEDUP": 0}),
    ("dense-float64", {"BLAS_SPEEDUP": 10**9, "FLOAT32_EXACT": 1}),
    ("dense-small-blocks", {"BLAS_SPEEDUP": 10**9, "BLOCK_ENTRIES": 1}),
]


@pytest.mark.parametrize("route", ROUTES, ids=[r[0] for r in ROUTES])
@settings(max_examples=60, deadline=None)
@given(tree=hierarchies(), data=st.data(), queries=QUERIES)
def test_generalized_counts_equal_brute_force(route, tree, data, queries) -> None:
    hierarchy, under = tree
    labels = sorted(under)
    records = data.draw(st.lists(st.lists(st.sampled_from(labels), max_size=4, unique=True), min_size=1, max_size=15))
    with pytest.MonkeyPatch.context() as patch:
        for name, value in route[1].items():
            patch.setattr(covering_records, name, value)
        counter = CoveringRecordCounter(records, hierarchy)
    expected = [brute_force(records, q, under) for q in queries]
    assert counter.many(queries) == expected
    assert [counter(q) for q in queries] == expected
    if counter.n_classes:
        assert (counter.dense is not None) == route[0].startswith("dense")


@pytest.mark.parametrize("route", ROUTES[:2], ids=[r[0] for r in ROUTES[:2]])
@settings(max_examples=60, deadline=None)
@given(
    records=st.lists(st.lists(st.sampled_from(LEAVES), max_size=5, unique=True), min_size=1, max_size=15),
    queries=QUERIES,
)
def test_sanitized_counts_equal_brute_force(route, records, queries) -> None:
    with pytest.MonkeyPatch.context() as patch:
        for name, value in route[1].items():
            patch.setattr(covering_records, name, value)
        counter = CoveringRecordCounter(records)
    assert counter.many(queries) == [brute_force(records, q, None) for q in queries]


def test_leaves_covered_by_the_same_records_share_a_class() -> None:
    hierarchy = {"root": "*", "edges": [["a", "P"], ["b", "P"], ["c", "P"], ["P", "*"], ["d", "*"]]}
    counter = CoveringRecordCounter([["P"], ["b"], ["d"], ["P"]], hierarchy)
    assert counter.class_of["a"] == counter.class_of["c"] != counter.class_of["b"]
    assert "d" in counter.class_of and counter.n_classes == 3
    assert counter.many([["a"], ["b"], ["a", "b"], ["a", "d"], ["P"]]) == [2, 3, 2, 0, 0]


def test_a_label_missing_from_the_hierarchy_is_an_input_error() -> None:
    with pytest.raises(InputError, match="not in the hierarchy"):
        CoveringRecordCounter([["a", "x"]], {"root": "*", "edges": [["a", "*"]]})
