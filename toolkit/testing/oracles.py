"""Brute-force oracles of claims, for tiny releases.

Each oracle restates a claim model's definition (docs/guarantees.md) in the
plainest code there is: every itemset of at most m items enumerated with
``itertools.combinations`` and counted record by record. They share nothing
with the verifiers they cross-check (CP-SAT models, bitset enumeration, Gram
matrices over leaf classes) and return the first counter-example found, or
``None`` when the claim holds.

:data:`ORACLES` maps a claim model to its oracle; a claim of a model without
one (``cover-freedom``, a plugin's own) is left to the verifiers
(:func:`privtool.testing.checks.check_claims_proved`).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from ..release import Release
from ..trail import Trail


def km_counterexample(rows: Sequence[Sequence[str]], k: int, m: int) -> tuple[tuple[str, ...], int] | None:
    """An itemset of 1..m items held by 1..k-1 of ``rows`` (each a set of items), with its support."""
    counts: Counter[tuple[str, ...]] = Counter()
    for row in rows:
        items = sorted(set(row))
        for size in range(1, m + 1):
            counts.update(itertools.combinations(items, size))
    for itemset, support in sorted(counts.items()):
        if support < k:
            return itemset, support
    return None


def _paths(release: Release) -> dict[str, set[str]]:
    """Each leaf (an item a person can hold) -> the labels that cover it: itself
    and, in a generalized release, its ancestors in the published hierarchy."""
    labels = {label for row in release.records for label in row}
    if release.kind != "generalized" or release.hierarchy is None:
        return {label: {label} for label in labels}
    parent = {child: up for child, up in release.hierarchy["edges"]}
    leaves = (set(parent) | labels) - set(parent.values())
    paths = {}
    for leaf in leaves:
        path, node = {leaf}, leaf
        while node in parent:
            node = parent[node]
            path.add(node)
        paths[leaf] = path
    return paths


def km_anonymity(release: Release, claim: Mapping[str, Any], trail: Trail | None) -> str | None:
    """k^m-anonymity. Disassociated: in every record chunk and shared chunk,
    every itemset of 1..m items that occurs in a sub-record occurs in at least k.
    Records (generalized, sanitized): every set of 1..m items a person can hold
    is covered by no published record or by at least k, a record covering an
    item when it holds the item or, generalized, one of its ancestors."""
    k, m = int(claim["k"]), int(claim["m"])
    if release.kind == "disassociated":
        chunks = [(c.id, chunk) for c in release.clusters for chunk in c.record_chunks]
        chunks += [(j.id, chunk) for j in release.joint_clusters for chunk in j.shared_chunks]
        for where, rows in chunks:
            found = km_counterexample(rows, k, m)
            if found is not None:
                return f"in {where}, the itemset {list(found[0])} occurs in {found[1]} sub-records, fewer than k = {k}"
        return None
    paths = _paths(release)
    records = [set(row) for row in release.records]
    for size in range(1, m + 1):
        for items in itertools.combinations(sorted(paths), size):
            count = sum(1 for record in records if all(paths[item] & record for item in items))
            if 0 < count < k:
                return f"{count} published records cover the items {list(items)}, fewer than k = {k}"
    return None


def k_anonymity(release: Release, claim: Mapping[str, Any], trail: Trail | None) -> str | None:
    """k-anonymity of records: every published record (as a set) occurs at least k times."""
    k = int(claim["k"])
    counts = Counter(tuple(sorted(set(row))) for row in release.records)
    for record, count in sorted(counts.items()):
        if count < k:
            return f"the record {list(record)} is published {count} times, fewer than k = {k}"
    return None


def rule_hiding(release: Release, claim: Mapping[str, Any], trail: Trail | None) -> str | None:
    """Rule hiding: in the published records, every sensitive rule (from the
    trail) has support below ``min_support`` records or confidence below
    ``min_confidence``."""
    if trail is None or not trail.sensitive_rules:
        return "the trail states no sensitive rules to check"
    records = [set(row) for row in release.records]
    min_support, min_confidence = int(claim["min_support"]), Fraction(str(claim["min_confidence"]))
    for antecedent, consequent in trail.sensitive_rules:
        support_x = _support(records, antecedent)
        support_xy = _support(records, [*antecedent, *consequent])
        if support_xy >= min_support and support_x and Fraction(support_xy, support_x) >= min_confidence:
            return (
                f"the rule {antecedent} => {consequent} still has support {support_xy} and confidence "
                f"{support_xy}/{support_x}"
            )
    return None


def _support(records: Iterable[set[str]], items: Sequence[str]) -> int:
    wanted = set(items)
    return sum(1 for record in records if wanted <= record)


Oracle = Callable[[Release, Mapping[str, Any], "Trail | None"], "str | None"]

ORACLES: dict[str, Oracle] = {
    "km-anonymity": km_anonymity,
    "k-anonymity": k_anonymity,
    "rule-hiding": rule_hiding,
}
"""Claim model -> its brute-force oracle."""
