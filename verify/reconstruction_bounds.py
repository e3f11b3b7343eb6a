"""Exact maximum support of small itemsets over all reconstructions of a
disassociated release, and the disassociation guarantee built on it.

Reconstruction model (ALGORITHM-NOTES 1.3; Awad et al. section 3.2): each
record chunk of a cluster P is padded with empty sub-records to |P| entries and
permuted independently; each shared chunk of a joint cluster J is spread over
the records of every cluster under J (joint clusters may nest: a member can be
a joint cluster), one entry per record; a term-chunk term of P occurs in at
least one and at most |P| records of P. The release states no count for a
term-chunk term, so a verifier that trusts nothing must allow any count
(docs/guarantees.md explains why the 1..k-1 reading would make Definition 2
fail for every term-chunk term).

Maximum support of an itemset I:

* inside one cluster P from its own chunks: r_P(I) = min(|P|, c_i) over the
  record chunks C_i meeting I, where c_i counts the sub-records of C_i holding
  I ∩ T_i (the chunks are permuted independently, so their holders can be lined
  up on the same records); term-chunk items only cap at |P|;
* a joint cluster J whose shared chunks meet I can give at most
  cap_J(I) = min over those chunks of c_S(I ∩ T_S) records in total over all the
  clusters under it, so f(J) = min(cap_J, sum of f over its members), with
  f(P) = r_P, computed bottom-up (the caps are nested, so greedy filling is exact);
* top-level clusters and joint clusters reconstruct independently: the maximum
  over the release is the sum of their f.

Joint clusters may nest explicitly or be written flattened (a joint cluster
listing every simple cluster under it); joint clusters whose sets of clusters
cross (neither disjoint nor nested) are not covered by this closed form, and the
certificate then says "not checked".
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from privtool.context import Context
from privtool.release import Release
from privtool.results import Certificate

from .chunks import ChunkBits

Realization = tuple[tuple[str, ...], int, dict[str, int]]
"""An itemset some reconstruction of a cluster holds, with (r_P, caps per joint cluster)."""

INFINITE = 1 << 62
FREE = -1
"""Mask of a term-chunk item: no count, only the cluster size caps it."""

Rows = tuple[tuple[str, ...], ...]
ClusterView = tuple[str, int, tuple[Rows, ...], tuple[str, ...], tuple[tuple[str, tuple[Rows, ...]], ...], int, int]
"""(cluster id, size, record chunks, term chunk, ancestors as (joint id, shared chunks) nearest first, m, k)."""


def _score(r: int, caps: dict[str, int]) -> int:
    """The maximum support inside one cluster: r_P bounded by every shared-chunk cap."""
    return min([r, *caps.values()])


class OverlappingJointClusters(Exception):
    """The joint clusters do not form a tree (their sets of clusters cross)."""


def joint_parents(release: Release) -> dict[str, str]:
    """Parent of every cluster and joint cluster in the tree of joint clusters.

    A joint cluster may list joint clusters among its members (explicit nesting)
    or, as the disassociation method writes it, every simple cluster under it
    (flattened nesting). Either way the sets of clusters under the joint clusters
    must be laminar (two are disjoint or one holds the other); the parent of a
    node is then the smallest joint cluster strictly above it (equal sets: the
    later one in the release is above)."""
    order = {j.id: n for n, j in enumerate(release.joint_clusters)}
    listed = {j.id: list(j.members) for j in release.joint_clusters}

    def clusters_under(joint: str, path: tuple[str, ...] = ()) -> frozenset[str]:
        if joint in path:
            raise OverlappingJointClusters(joint)
        out: set[str] = set()
        for member in listed[joint]:
            out |= clusters_under(member, (*path, joint)) if member in listed else {member}
        return frozenset(out)

    under = {j: clusters_under(j) for j in listed}
    chains: dict[str, list[str]] = defaultdict(list)
    for joint, members in under.items():
        for cluster in members:
            chains[cluster].append(joint)
    parent: dict[str, str] = {}
    for cluster, joints in chains.items():
        joints.sort(key=lambda j: (len(under[j]), order[j]))
        for child, above in zip([cluster, *joints], joints, strict=False):
            known = parent.setdefault(child, above)
            if known != above:
                raise OverlappingJointClusters(child)
    # Laminar iff every joint's clusters lie inside its parent's (each pair checked once).
    for child, above in parent.items():
        if child in under and not under[child] <= under[above]:
            raise OverlappingJointClusters(child)
    return parent


def cluster_views(release: Release, m: int, k: int, parent: dict[str, str]) -> list[ClusterView]:
    """One view per cluster; ``parent`` is :func:`joint_parents` of the release."""
    shared = {
        j.id: tuple(tuple(tuple(row) for row in chunk) for chunk in j.shared_chunks) for j in release.joint_clusters
    }
    views = []
    for c in release.clusters:
        chain: list[tuple[str, tuple[Rows, ...]]] = []
        node = c.id
        while node in parent:
            node = parent[node]
            if any(node == j for j, _ in chain):
                raise OverlappingJointClusters(node)
            chain.append((node, shared[node]))
        views.append(
            (
                c.id,
                c.size,
                tuple(tuple(tuple(row) for row in ch) for ch in c.record_chunks),
                tuple(c.term_chunk),
                tuple(chain),
                m,
                k,
            )
        )
    return views


class _Sources:
    """Where each item of a cluster's view can come from: (source index, mask)."""

    def __init__(self, view: ClusterView) -> None:
        _, size, record_chunks, term_chunk, chain, _, _ = view
        self.size = size
        self.owner: list[str | None] = []  # None: record chunk of the cluster; else the joint id
        bits: list[ChunkBits] = []
        for chunk in record_chunks:
            self.owner.append(None)
            bits.append(ChunkBits.of(chunk))
        for joint_id, chunks in chain:
            for chunk in chunks:
                self.owner.append(joint_id)
                bits.append(ChunkBits.of(chunk))
        self.options: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for s, b in enumerate(bits):
            for item, mask in zip(b.items, b.bits, strict=False):
                self.options[item].append((s, mask))
        for item in term_chunk:
            self.options[item].append((len(bits), FREE))
        self.items = sorted(self.options)

    def value(self, masks: dict[int, int]) -> tuple[int, dict[str, int]]:
        """(r_P, caps per joint) of the itemset whose parts have these masks."""
        r = self.size
        caps: dict[str, int] = {}
        for s, mask in masks.items():
            if mask == FREE:
                continue
            count = mask.bit_count()
            joint = self.owner[s]
            if joint is None:
                r = min(r, count)
            else:
                caps[joint] = min(caps.get(joint, INFINITE), count)
        return r, caps

    def realizations(self, m: int) -> Iterable[Realization]:
        """Every itemset of 1..m items some reconstruction of the cluster holds,
        with (r_P, caps); an item available from several sources (only in a
        malformed release) yields one entry per choice."""

        def extend(start: int, path: tuple[str, ...], masks: dict[int, int]) -> Iterator[Realization]:
            if len(path) == m:
                return
            for n in range(start, len(self.items)):
                item = self.items[n]
                for s, mask in self.options[item]:
                    current = masks.get(s)
                    joined = mask if (mask == FREE or current is None) else current & mask
                    if not joined:
                        continue
                    new_masks = {**masks, s: joined}
                    new_path = (*path, item)
                    yield (new_path, *self.value(new_masks))
                    yield from extend(n + 1, new_path, new_masks)

        yield from extend(0, (), {})

    def best(self, itemset: Sequence[str]) -> tuple[int, dict[str, int]] | None:
        """(r_P, caps) of one itemset in this cluster (the best source choice), or
        None when no reconstruction of the cluster holds it."""
        found = None
        for _, r, caps in self._choices(tuple(itemset)):
            score = _score(r, caps)
            if found is None or score > found[0]:
                found = (score, r, caps)
        return None if found is None else (found[1], found[2])

    def _choices(self, itemset: tuple[str, ...]) -> Iterator[Realization]:
        def walk(i: int, masks: dict[int, int]) -> Iterator[Realization]:
            if i == len(itemset):
                yield (itemset, *self.value(masks))
                return
            for s, mask in self.options.get(itemset[i], ()):
                current = masks.get(s)
                joined = mask if (mask == FREE or current is None) else current & mask
                if joined:
                    yield from walk(i + 1, {**masks, s: joined})

        yield from walk(0, {})


def cluster_maxima(view: ClusterView) -> list[Realization]:
    """Every itemset some reconstruction of the cluster holds, with (r_P, caps),
    keeping per itemset the source choice with the largest min(r_P, caps)."""
    best: dict[tuple[str, ...], tuple[int, dict[str, int]]] = {}
    for itemset, r, caps in _Sources(view).realizations(view[5]):
        score = _score(r, caps)
        old = best.get(itemset)
        if old is None or score > _score(*old):
            best[itemset] = (r, caps)
    return [(itemset, r, caps) for itemset, (r, caps) in best.items()]


def combine(entries: Iterable[tuple[str, int, dict[str, int]]], parent: dict[str, str]) -> int:
    """Maximum support over the release from per-cluster (cluster id, r_P, caps):
    f(J) = min(cap_J, sum of f over J's members), summed over the top level."""
    value: dict[str, int] = defaultdict(int)
    cap: dict[str, int] = {}
    children: dict[str, set[str]] = defaultdict(set)
    for cluster_id, r, caps in entries:
        value[cluster_id] += r
        for joint, c in caps.items():
            cap[joint] = min(cap.get(joint, INFINITE), c)
        node = cluster_id
        while node in parent:
            children[parent[node]].add(node)
            node = parent[node]

    def f(node: str) -> int:
        if node not in children:
            return value[node]
        return min(cap.get(node, INFINITE), sum(f(child) for child in children[node]))

    tops = {node for node in list(value) + list(children) if node not in parent or parent[node] not in children}
    return sum(f(node) for node in tops)


def max_supports(release: Release, m: int, ctx: Context) -> dict[tuple[str, ...], int]:
    """Maximum support over all reconstructions of every itemset of 1..m items
    that some reconstruction holds (items sorted as strings within a tuple).
    Exhaustive: meant for small releases and tests; the guarantee check below
    enumerates only what can fail."""
    parent = joint_parents(release)
    views = cluster_views(release, m, 0, parent)
    per_cluster = ctx.map(cluster_maxima, views, "maximum supports per cluster")
    entries: dict[tuple[str, ...], list[tuple[str, int, dict[str, int]]]] = defaultdict(list)
    for view, rows in zip(views, per_cluster, strict=False):
        for itemset, r, caps in rows:
            entries[itemset].append((view[0], r, caps))
    return {itemset: combine(parts, parent) for itemset, parts in entries.items()}


def suspects(view: ClusterView) -> list[tuple[str, ...]]:
    """Itemsets of the cluster whose maximum support inside it is below k.

    Every itemset a reconstruction holds is held by some cluster's view, and its
    maximum over the release is at least its maximum inside any one cluster; so
    only these itemsets can break the guarantee. :func:`check_disassociation_guarantee`
    calls it only for clusters whose floor (the cluster size, and the smallest
    sub-k support inside any chunk it sees) is below k: otherwise none exists."""
    sources = _Sources(view)
    k = view[6]
    if not sources.items:
        return []
    return sorted({itemset for itemset, r, caps in sources.realizations(view[5]) if _score(r, caps) < k})


def chunk_floor(unit: tuple[Rows, int, int]) -> int:
    """The smallest support below k of an itemset of 1..m items inside the chunk
    (``INFINITE`` when the chunk is k^m-anonymous): ``(rows, k, m)``."""
    from .chunks import km_witness_enum

    rows, k, m = unit
    witness = km_witness_enum(rows, k, m)
    return INFINITE if witness is None else witness[1]


def cluster_floor(unit: tuple[int, tuple[Rows, ...], int, int]) -> int:
    """min(|P|, :func:`chunk_floor` of each record chunk): ``(size, record chunks, k, m)``."""
    size, record_chunks, k, m = unit
    return min([size, *(chunk_floor((rows, k, m)) for rows in record_chunks)])


def check_disassociation_guarantee(release: Release, k: int, m: int, ctx: Context) -> Certificate:
    """Definition 2 over the itemsets some reconstruction holds; witness: the
    itemset with the smallest maximum support below k."""
    start = time.perf_counter()
    details: dict[str, Any] = {"k": k, "m": m, "term_chunk_model": "a term occurs in 1..|P| records of its cluster"}
    try:
        parent = joint_parents(release)
        views = cluster_views(release, m, k, parent)
    except OverlappingJointClusters as exc:
        details["reason"] = (
            f"joint clusters around {exc.args[0]!r} cross (neither disjoint nor nested); "
            "the closed form does not cover it"
        )
        return Certificate(
            "disassociation-guarantee", None, "closed-form", 0, round(time.perf_counter() - start, 4), None, details
        )
    # A lower bound of every cluster's in-cluster maximum: min(|P|, the smallest
    # sub-k support inside its record chunks and the shared chunks above it).
    # Only clusters whose bound is below k can hold an itemset that fails.
    floors = ctx.map(cluster_floor, [(v[1], v[2], k, m) for v in views], "disassociation guarantee: cluster floors")
    shared_units = [
        (j.id, tuple(tuple(row) for row in chunk)) for j in release.joint_clusters for chunk in j.shared_chunks
    ]
    shared_floor: dict[str, int] = defaultdict(lambda: INFINITE)
    for (joint, _), low in zip(
        shared_units,
        ctx.map(chunk_floor, [(rows, k, m) for _, rows in shared_units], "shared chunk floors"),
        strict=False,
    ):
        shared_floor[joint] = min(shared_floor[joint], low)
    weak = [
        view for view, low in zip(views, floors, strict=False) if min([low, *(shared_floor[j] for j, _ in view[4])]) < k
    ]
    candidates = sorted({i for found in ctx.map(suspects, weak, "disassociation guarantee: suspects") for i in found})
    by_item: dict[str, list[int]] = defaultdict(list)
    if candidates:
        for n, view in enumerate(views):
            for item in {
                *view[3],
                *(x for ch in view[2] for row in ch for x in row),
                *(x for _, chunks in view[4] for ch in chunks for row in ch for x in row),
            }:
                by_item[item].append(n)
    sources: dict[int, _Sources] = {}
    failing = []
    for itemset in candidates:
        clusters = set(by_item[itemset[0]]).intersection(*(by_item[x] for x in itemset[1:]))
        parts = []
        for n in sorted(clusters):
            found = sources.setdefault(n, _Sources(views[n])).best(itemset)
            if found is not None:
                parts.append((views[n][0], *found))
        support = combine(parts, parent)
        if support < k:
            failing.append((support, itemset))
    failing.sort()
    details["suspect_itemsets"] = len(candidates)
    details["violations"] = len(failing)
    witness = None
    if failing:
        support, itemset = failing[0]
        witness = {"itemset": list(itemset), "max_support": support, "k": k}
        details["witnesses"] = [{"itemset": list(i), "max_support": s} for s, i in failing[1:21]]
    return Certificate(
        "disassociation-guarantee",
        not failing,
        "closed-form",
        len(views),
        round(time.perf_counter() - start, 4),
        witness,
        details,
    )
