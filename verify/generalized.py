"""Verifiers of a ``generalized`` release.

* ``k-anonymity`` (He & Naughton 2009, section 3.1): every published record
  occurs at least k times. One unit per distinct record. Proves the
  ``k-anonymity`` claim of generalized and sanitized releases.
* ``hierarchy``: the published hierarchy is a tree (one parent per node, every
  node reaches the root, no cycle), every published label is one of its nodes,
  and, when the original is given, the published records can be assigned to
  distinct original records that each one generalizes (every original item has
  an ancestor-or-self in the published record, and every published label is the
  deepest such label of an original item: the deepest-cover reading of nested
  labels, docs/formats.md). The assignment is computed, not read from the trail,
  so it holds whatever the method wrote there (:mod:`.matching`). An integrity
  check: it proves no claim model.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any, ClassVar

from privtool.components import Evidence, Verifier
from privtool.context import Context
from privtool.release import Release
from privtool.results import Certificate

from .levels import K_CHECKED, level
from .matching import assignment_is_matching, unmatched_generalizations


class KAnonymity(Verifier):
    name = "k-anonymity"
    summary = "Every generalized record occurs at least k times."
    params = (K_CHECKED,)
    applies_to: ClassVar[tuple[str, ...]] = ("generalized", "sanitized")
    proves: ClassVar[tuple[str, ...]] = ("k-anonymity",)

    def verify(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> list[Certificate]:
        start = time.perf_counter()
        k = level(release, params, "k")
        counts = Counter(tuple(record) for record in release.records)
        small = sorted((n, record) for record, n in counts.items() if n < k)
        witness = None
        details: dict[str, Any] = {"k": k, "records": len(release.records), "violations": len(small)}
        if small:
            n, record = small[0]
            witness = {"record": list(record), "occurrences": n, "k": k}
            details["witnesses"] = [{"record": list(r), "occurrences": c} for c, r in small[1:21]]
        return [
            Certificate(
                self.name, not small, "count", len(counts), round(time.perf_counter() - start, 4), witness, details
            )
        ]


def hierarchy_problem(hierarchy: dict[str, Any]) -> tuple[dict[str, str] | None, dict[str, Any] | None]:
    """The parent map of a published hierarchy, or the first problem found."""
    root = hierarchy["root"]
    parent: dict[str, str] = {}
    for child, up in hierarchy["edges"]:
        if child == root:
            return None, {"problem": "the root has a parent", "node": child}
        if child in parent and parent[child] != up:
            return None, {"problem": "a node has two parents", "node": child, "parents": [parent[child], up]}
        parent[child] = up
    for node in parent:
        seen = {node}
        step = node
        while step != root:
            if step not in parent:
                return None, {"problem": "a node does not reach the root", "node": node, "stops_at": step}
            step = parent[step]
            if step in seen:
                return None, {"problem": "a cycle", "node": node}
            seen.add(step)
    return parent, None


def ancestors_of(parent: dict[str, str], root: str) -> dict[str, frozenset[str]]:
    """Every node's set of ancestors-or-self."""
    memo: dict[str, frozenset[str]] = {root: frozenset([root])}

    def walk(node: str) -> frozenset[str]:
        chain = []
        while node not in memo:
            chain.append(node)
            node = parent[node]
        above = memo[node]
        for n in reversed(chain):
            above = above | {n}
            memo[n] = above
        return memo[chain[0]] if chain else above

    for node in parent:
        walk(node)
    return memo


class HierarchyConsistency(Verifier):
    name = "hierarchy"
    summary = "Published labels are nodes of the published tree and generalize distinct original records."
    params = ()
    applies_to: ClassVar[tuple[str, ...]] = ("generalized",)

    def verify(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> list[Certificate]:
        start = time.perf_counter()
        hierarchy = release.hierarchy or {"root": "", "edges": []}
        details: dict[str, Any] = {"checked_against_original": evidence.original is not None}

        def done(holds: bool, witness: dict[str, Any] | None, units: int) -> list[Certificate]:
            return [
                Certificate(self.name, holds, "direct", units, round(time.perf_counter() - start, 4), witness, details)
            ]

        parent, problem = hierarchy_problem(hierarchy)
        if problem is not None:
            return done(False, problem, 0)
        assert parent is not None
        nodes = set(parent) | {hierarchy["root"]}
        for record in release.records:
            for label in record:
                if label not in nodes:
                    return done(
                        False, {"problem": "a published label is not a node of the hierarchy", "label": label}, 0
                    )
        if evidence.original is None:
            return done(True, None, len(release.records))
        ancestors = ancestors_of(parent, hierarchy["root"])
        originals = [tuple(r) for r in evidence.original.to_label_records()]
        for label in evidence.original.labels:
            if label not in nodes:
                return done(False, {"problem": "an original item is not in the hierarchy", "item": label}, 0)
        published = [tuple(r) for r in release.records]
        trail = evidence.trail
        groups = trail.notes.get("groups") if trail is not None else None
        if (
            trail is not None
            and isinstance(groups, dict)
            and assignment_is_matching(published, originals, trail.cluster_of_record, groups, ancestors)
        ):
            details["matching"] = "the trail's assignment, checked record by record"
            return done(True, None, len(release.records))
        unmatched = unmatched_generalizations(published, originals, ancestors)
        details["unmatched_published_records"] = sum(unmatched.values())
        if unmatched:
            first = sorted(unmatched)[0]
            witness = {
                "problem": "no distinct original record is generalized by this published record",
                "record": list(first),
                "unmatched_copies": unmatched[first],
            }
            return done(False, witness, len(release.records))
        return done(True, None, len(release.records))
