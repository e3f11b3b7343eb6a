"""The ARX-style summary of the ``linkage`` attack (records at risk, highest
risk, average success rate) against a brute-force oracle on tiny sanitized and
generalized releases: every known itemset of 1..known items of every target,
counted against every published record with its covered leaves."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from privtool.attacks.linkage import BackgroundLinkage
from privtool.components import Evidence
from privtool.context import Context
from privtool.dataset import Dataset
from privtool.release import Release

ITEMS = list("abcdef")
HIERARCHY = {"root": "*", "edges": [["a", "AB"], ["b", "AB"], ["c", "CD"], ["d", "CD"], ["e", "*"], ["f", "*"], ["AB", "*"], ["CD", "*"]]}
LEAVES = {"AB": {"a", "b"}, "CD": {"c", "d"}, "*": set(ITEMS)}
rows_of = st.lists(st.lists(st.sampled_from(ITEMS), min_size=1, max_size=4, unique=True), min_size=1, max_size=10)


def oracle(original: list[list[str]], published: list[set[str]], k: int, known: int) -> tuple[int, float, float]:
    """(records at risk, highest risk, average success rate) by brute force."""
    rates = []
    for record in original:
        counts = [sum(1 for p in published if set(q) <= p) for n in range(1, known + 1) for q in itertools.combinations(record, n)]
        best = min((c for c in counts if c), default=0)
        rates.append(1 / best if best else 0.0)
    return sum(1 for r in rates if r > 1 / k), max(rates), sum(rates) / len(rates)


def summary(release: Release, original: list[list[str]], known: int) -> dict:
    params = {"known": known, "targets": None, "max_itemsets": 1000}
    return BackgroundLinkage().run(release, Evidence(original=Dataset.from_records(original)), params, Context())[0].evidence


def check(got: dict, expected: tuple[int, float, float]) -> None:
    at_risk, highest, average = expected
    assert got["records_at_risk"] == at_risk
    assert abs(got["highest_risk"] - highest) < 1e-9
    assert abs(got["average_success_rate"] - average) < 1e-6


@settings(max_examples=40, deadline=None)
@given(rows_of, st.integers(0, 2**16), st.integers(2, 3), st.integers(1, 2))
def test_sanitized_summary_matches_brute_force(original, drop_seed, k, known) -> None:
    published = [r[: 1 + (drop_seed >> i) % len(r)] for i, r in enumerate(original)]  # items removed, as a sanitizer does
    release = Release(kind="sanitized", params={"k": k}, records=published)
    check(summary(release, original, known), oracle(original, [set(p) for p in published], k, known))


@settings(max_examples=40, deadline=None)
@given(rows_of, st.integers(2, 3), st.integers(1, 2), st.data())
def test_generalized_summary_matches_brute_force(original, k, known, data) -> None:
    parents = {"a": "AB", "b": "AB", "c": "CD", "d": "CD", "e": "*", "f": "*"}
    published = []
    for record in original:  # each item published as itself, its parent or the root
        labels = {data.draw(st.sampled_from([item, parents[item], "*"])) for item in record}
        published.append(sorted(labels))
    release = Release(kind="generalized", params={"k": k, "m": known}, records=published, hierarchy=HIERARCHY)
    covered = [set().union(*({label} if label in ITEMS else LEAVES[label] for label in p)) for p in published]
    check(summary(release, original, known), oracle(original, covered, k, known))
