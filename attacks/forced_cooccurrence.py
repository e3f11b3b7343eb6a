"""The ``forced-cooccurrence`` attack: pairs of items that every reconstruction
puts together (pigeonhole; after Barakat et al., SECRYPT 2016, as far as
ALGORITHM-NOTES 5.2 reconstructs it).

Adversary model (consistent-reconstruction): the adversary knows the release and
considers every dataset it could have come from; a pair of items in different
chunks that co-occurs in at least ``f >= 1`` records of every one of them is a
link the adversary learns for certain.

In a cluster of ``n`` records, the sub-records of two record chunks are laid
over the same ``n`` records in any order, so items ``a`` and ``b`` of different
record chunks share at least ``forced(a, b) = max(0, s(a) + s(b) - n)`` records
in every reconstruction, and exactly that many in some (the bound is the
minimum). A shared chunk spreads over the ``N`` records of its joint cluster, so
at least ``s(x) - (N - n)`` of its ``x`` land in a member cluster of ``n``
records; a term-chunk term occurs in at least one record of its cluster. With
these lower bounds ``lo`` in place of ``s`` the same formula is a sound lower
bound for every pair of a cluster, and ``max(0, s(a) + s(b) - N)`` is exact for
two shared chunks of one joint cluster.

Findings: one ``risk`` per cluster with pairs forced together where neither item
is in every record (a pair with an item in every record is public from the
release itself: that item is linked to everyone of the cluster), and one
``info`` summary with the counts of both kinds. No claimed model covers these
links: k^m-anonymity bounds how *few* records an itemset can be narrowed to in
the best reconstruction, not how many it must have in all of them.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privtool.components import Attack, Evidence
from privtool.context import Context
from privtool.dataset import label_sort_key
from privtool.release import Release
from privtool.results import Finding

from .cover import RECORD, SHARED, ChunkRef
from .cover_linkage import ChunkView, each_chunk, shared_cluster_views

NAME = "forced-cooccurrence"
ADVERSARY = (
    "consistent-reconstruction: the adversary knows the release and considers every dataset it could have come from"
)
TERM = "term chunk"


@dataclass(frozen=True)
class ForcedPair:
    """Items ``a`` and ``b`` (of chunks ``chunk_a`` and ``chunk_b``) share at
    least ``forced`` of the ``records`` records of ``scope`` in every
    reconstruction; ``universal`` when one of them is in all of them."""

    scope: str
    a: str
    chunk_a: str
    b: str
    chunk_b: str
    forced: int
    records: int
    universal: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "items": [self.a, self.b],
            "chunks": [self.chunk_a, self.chunk_b],
            "forced_records": self.forced,
            "of_records": self.records,
        }


@dataclass
class Forced:
    """Forced pairs of a release: how many, the largest bound, and the pairs
    themselves (all of them, or only those with neither item in every record)."""

    total: int = 0
    largest: int = 0
    pairs: list[ForcedPair] = field(default_factory=list)

    def add(self, other: Forced) -> None:
        self.total += other.total
        self.largest = max(self.largest, other.largest)
        self.pairs.extend(other.pairs)


@dataclass
class ScopeItems:
    """The items of one scope that every reconstruction puts in at least one of
    its records: labels, their chunk (group), the joint cluster of a shared
    chunk (``""`` otherwise), and that lower bound."""

    labels: list[str] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    owners: list[str] = field(default_factory=list)
    low: list[int] = field(default_factory=list)

    def add(self, labels: Sequence[str], supports: Sequence[int], group: str, owner: str, outside: int) -> None:
        """The items of one chunk whose bound ``support - outside`` is positive
        (``supports`` in descending order, so most large shared chunks stop at
        their first item)."""
        for label, support in zip(labels, supports, strict=True):
            if support <= outside:
                break
            self.labels.append(label)
            self.groups.append(group)
            self.owners.append(owner)
            self.low.append(support - outside)


def _codes(values: Sequence[str]) -> np.ndarray:
    """Equal values get equal integer codes (first seen, first numbered)."""
    numbers: dict[str, int] = {}
    return np.fromiter((numbers.setdefault(v, len(numbers)) for v in values), dtype=np.int64, count=len(values))


def scope_pairs(scope: str, items: ScopeItems, records: int, universal: bool, same_joint: bool = True) -> Forced:
    """Pairs of items of different chunks whose lower bounds add up to more
    than ``records`` (one vectorised matrix over the scope's items). All are
    counted; ``universal`` also lists those with an item in every record.
    Without ``same_joint``, two shared chunks of one joint cluster are left to
    :func:`joint_pairs`, whose bound is larger."""
    out = Forced()
    if len(items.labels) < 2 or sum(heapq.nlargest(2, items.low)) <= records:
        return out  # no two bounds add up to more than the records: nothing is forced
    low = np.asarray(items.low, dtype=np.int64)
    codes = _codes(items.groups)
    names = _codes(items.labels)
    forced = low[:, None] + low[None, :] - records
    mask = (forced > 0) & (codes[:, None] != codes[None, :]) & (names[:, None] != names[None, :])
    if not same_joint:
        owner = _codes(items.owners)
        alone = np.asarray([o == "" for o in items.owners], dtype=bool)  # a record chunk or a term
        mask &= alone[:, None] | (owner[:, None] != owner[None, :])
    mask = np.triu(mask, 1)
    out.total = int(mask.sum())
    out.largest = int(forced[mask].max()) if out.total else 0
    if not universal:
        partial = low < records
        mask &= partial[:, None] & partial[None, :]
    labels, groups = items.labels, items.groups
    for i, j in zip(*np.nonzero(mask), strict=True):
        a, b = (int(i), int(j)) if label_sort_key(labels[i]) <= label_sort_key(labels[j]) else (int(j), int(i))
        full = bool(low[a] >= records or low[b] >= records)
        out.pairs.append(
            ForcedPair(scope, labels[a], groups[a], labels[b], groups[b], int(forced[i, j]), records, full)
        )
    return out


Supports = tuple[list[str], list[int]]
"""A chunk's items and their supports, in descending support."""


def descending(chunk: ChunkView) -> Supports:
    """The chunk's items and supports (its cover analysis, shared with the
    other attacks of the assessment) in descending support; the order among
    equal supports does not matter (every pair is counted, and the listed
    pairs are sorted)."""
    cover = chunk.cover
    order = sorted(range(len(cover.supports)), key=cover.supports.__getitem__, reverse=True)
    return [cover.itemset[i] for i in order], [cover.supports[i] for i in order]


def joint_sizes(release: Release) -> dict[str, tuple[list[str], int]]:
    """Per joint cluster, its simple member clusters and their records (a
    member may be an earlier joint cluster)."""
    sizes = {c.id: c.size for c in release.clusters}
    out: dict[str, tuple[list[str], int]] = {}
    for joint in release.joint_clusters:
        members = [c for m in joint.members for c in (out[m][0] if m in out else [m])]
        out[joint.id] = (members, sum(sizes[c] for c in members))
    return out


def forced_pairs(release: Release, universal: bool = True) -> Forced:
    """The forced pairs of the release: per cluster, then per joint cluster (a
    pair of two shared chunks of one joint cluster is counted at that level).
    ``universal=False`` lists only the pairs with neither item in every record
    (all are counted). A shared chunk enters a member cluster of ``n`` records
    only when its largest support exceeds ``N - n``: with nested joint
    clusters a cluster lies under many large shared chunks, and this test skips
    them without looking at their items."""
    joints = joint_sizes(release)
    sizes = {c.id: c.size for c in release.clusters}
    chunks = {chunk.ref: chunk for _, chunk in each_chunk(shared_cluster_views(release))}
    from_shared: dict[str, list[tuple[str, str, Supports, int]]] = {}
    out = Forced()
    for joint in release.joint_clusters:
        members, records = joints[joint.id]
        items = ScopeItems()
        for index in range(len(joint.shared_chunks)):
            chunk = chunks[ChunkRef(joint.id, SHARED, index)]
            labels, supports = descending(chunk)
            items.add(labels, supports, chunk.name, joint.id, 0)
            if len(supports):
                threshold = records - int(supports[0])
                for c in members:
                    if sizes[c] > threshold:
                        from_shared.setdefault(c, []).append((chunk.name, joint.id, (labels, supports), records))
        out.add(scope_pairs(joint.id, items, records, universal))
    for cluster in release.clusters:
        record_chunks = [descending(chunks[ChunkRef(cluster.id, RECORD, i)]) for i in range(len(cluster.record_chunks))]
        entering = from_shared.get(cluster.id, [])
        tops = [supports[0] for _, supports in record_chunks if supports]
        tops += [supports[0] - (records - cluster.size) for _, _, (_, supports), records in entering]
        tops += [1] * len(cluster.term_chunk)
        if sum(heapq.nlargest(2, tops)) <= cluster.size:
            continue  # no two chunks' bounds add up to more than the records: nothing is forced
        items = ScopeItems()
        for index, (labels, supports) in enumerate(record_chunks):
            items.add(labels, supports, f"{cluster.id}/record[{index}]", "", 0)
        for group, owner, (labels, supports), records in entering:
            items.add(labels, supports, group, owner, records - cluster.size)
        for term in cluster.term_chunk:
            items.add((term,), (1,), f"{TERM}:{term}", "", 0)
        out.add(scope_pairs(cluster.id, items, cluster.size, universal, same_joint=False))
    return out


class ForcedCooccurrence(Attack):
    """See the module docstring."""

    name = NAME
    summary = "pairs of items of different chunks that every reconstruction puts together (pigeonhole)"
    applies_to = ("disassociated",)
    criteria = ("inference",)
    adversary_statement = (
        "The adversary knows the release and considers every dataset it could have come from; a pair of items that "
        "every one of them puts together in some records is a link learnt for certain."
    )

    def exposure(self, findings: Sequence[Finding]) -> str | None:
        summary = next((f.evidence for f in findings if f.severity == "info" and "forced_pairs" in f.evidence), None)
        if summary is None:
            return None
        return (
            f"{summary['forced_pairs']:,} pairs of items share records in every reconstruction, "
            f"{summary['forced_pairs_partial']:,} with neither item in every record of its cluster"
        )

    def run(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> list[Finding]:
        found = forced_pairs(release, universal=False)
        partial = found.pairs
        by_scope: dict[str, list[ForcedPair]] = {}
        for p in partial:
            by_scope.setdefault(p.scope, []).append(p)
        findings = [
            Finding(
                NAME,
                "info",
                f"{found.total} pairs of items of different chunks share records in every reconstruction; "
                f"{len(partial)} of them with neither item in every record",
                {
                    "adversary": ADVERSARY,
                    "forced_pairs": found.total,
                    "forced_pairs_with_an_item_in_every_record": found.total - len(partial),
                    "forced_pairs_partial": len(partial),
                    "largest_forced": found.largest,
                },
            )
        ]
        for scope, group in by_scope.items():
            worst = sorted(group, key=lambda p: (-p.forced, label_sort_key(p.a), label_sort_key(p.b)))
            top = worst[0]
            findings.append(
                Finding(
                    NAME,
                    "risk",
                    f"{scope}: {len(group)} pair(s) of items share records in every reconstruction, "
                    f"e.g. {top.a} and {top.b} in at least {top.forced} of {top.records}",
                    {
                        "cluster": scope,
                        "adversary": ADVERSARY,
                        "pairs": [p.to_json() for p in worst],
                        "rule": "forced(a, b) = max(0, s(a) + s(b) - n): pigeonhole over the n records",
                    },
                    explanation=(
                        "Every dataset the release could have come from puts these pairs together in some records; "
                        "no claim model bounds how many records must hold a pair, only how few can."
                    ),
                )
            )
        return findings
