"""Background-knowledge linkage against a brute-force oracle."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from privtool.attacks.linkage import BackgroundLinkage, known_itemsets, match_counter
from privtool.claims import Claim
from privtool.components import Evidence
from privtool.context import Context
from privtool.dataset import Dataset
from privtool.release import Release

ITEMS = list("abcdef")
records = st.lists(st.lists(st.sampled_from(ITEMS), min_size=1, max_size=4, unique=True), min_size=1, max_size=12)


@settings(deadline=None)  # the first example pays lazy imports; the machine is shared
@given(records, st.lists(st.sampled_from(ITEMS), min_size=1, max_size=3, unique=True))
def test_sanitized_count_equals_brute_force(rows, query) -> None:
    release = Release(kind="sanitized", params={"k": 2}, records=rows)
    assert match_counter(release)(query) == sum(1 for r in rows if set(query) <= set(r))


HIERARCHY = {
    "root": "*",
    "edges": [["a", "AB"], ["b", "AB"], ["c", "CD"], ["d", "CD"], ["e", "*"], ["f", "*"], ["AB", "*"], ["CD", "*"]],
}
NODES = ["a", "b", "c", "d", "e", "f", "AB", "CD", "*"]
LEAVES = {"AB": {"a", "b"}, "CD": {"c", "d"}, "*": set(ITEMS)}


@settings(deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(NODES), min_size=1, max_size=3, unique=True), min_size=1, max_size=10),
    st.lists(st.sampled_from(ITEMS), min_size=1, max_size=3, unique=True),
)
def test_generalized_count_equals_brute_force(rows, query) -> None:
    release = Release(kind="generalized", params={"k": 2}, records=rows, hierarchy=HIERARCHY)

    def covers(record, item):
        return any(item == label or item in LEAVES.get(label, ()) for label in record)

    expected = sum(1 for r in rows if all(covers(r, q) for q in query))
    assert match_counter(release)(query) == expected


@settings(deadline=None)
@given(st.lists(st.sampled_from(ITEMS), min_size=1, max_size=6, unique=True), st.integers(1, 3), st.integers(1, 50))
def test_known_itemsets_are_all_small_subsets_or_a_sample(record, known, limit) -> None:
    every = [q for n in range(1, known + 1) for q in itertools.combinations(record, n)]
    got = known_itemsets(record, known, limit, lambda: np.random.default_rng(0))
    assert len(got) == min(limit, len(every))
    assert set(got) <= set(every) and len(set(got)) == len(got)


def test_unique_generalized_record_is_a_breach_with_evidence() -> None:
    original = Dataset.from_records([["a", "c"], ["b", "c"], ["a", "e"], ["b", "e"], ["f"]])
    release = Release(
        kind="generalized",
        params={"k": 2, "m": 2},
        claims=[Claim("k-anonymity", {"k": 2})],
        hierarchy=HIERARCHY,
        records=[["AB", "CD"], ["AB", "CD"], ["AB", "e"], ["AB", "e"], ["f"]],
    )
    findings = BackgroundLinkage().run(
        release, Evidence(original=original), {"known": 2, "targets": None, "max_itemsets": 100}, Context()
    )
    summary, *rest = findings
    assert summary.evidence["records_at_risk"] == 1 and summary.evidence["highest_risk"] == 1.0
    assert [f.severity for f in rest] == ["breach"]
    assert rest[0].evidence == {"target": 4, "known_items": ["f"], "candidates": 1, "k": 2}


def test_k_anonymous_generalized_release_has_no_finding() -> None:
    original = Dataset.from_records([["a", "c"], ["b", "d"], ["a", "e"], ["b", "e"]])
    release = Release(
        kind="generalized",
        params={"k": 2, "m": 2},
        hierarchy=HIERARCHY,
        records=[["AB", "CD"], ["AB", "CD"], ["AB", "e"], ["AB", "e"]],
    )
    findings = BackgroundLinkage().run(
        release, Evidence(original=original), {"known": 2, "targets": None, "max_itemsets": 100}, Context()
    )
    assert [f.severity for f in findings] == ["info"]
    assert findings[0].evidence["average_success_rate"] == 0.5


def test_disassociated_term_chunk_terms_hide_in_their_cluster() -> None:
    """Knowing a rare term locates the cluster, not fewer than k of its records;
    an itemset of record-chunk items whose largest support is below k is a breach."""
    from privtool.release import Cluster

    original = Dataset.from_records([["a", "t"], ["a"], ["a"], ["b"], ["b"], ["c"]])
    safe = Release(
        kind="disassociated",
        params={"k": 3, "m": 2},
        claims=[Claim("km-anonymity", {"k": 3, "m": 2})],
        clusters=[Cluster("c0", 3, [[["a"], ["a"], ["a"]]], ["t"]), Cluster("c1", 3, [[["b"], ["b"]]], ["c"])],
    )
    findings = BackgroundLinkage().run(
        safe, Evidence(original=original), {"known": 2, "targets": None, "max_itemsets": 100}, Context()
    )
    summary = findings[0].evidence
    # {t} and {a, t} may sit in any of c0's 3 records; {b} in 2 < 3 records of every reconstruction.
    assert [f.severity for f in findings[1:]] == ["breach", "breach"]
    assert {tuple(f.evidence["known_items"]) for f in findings[1:]} == {("b",)}
    assert summary["records_at_risk"] == 2
