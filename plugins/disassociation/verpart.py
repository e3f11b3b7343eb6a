"""Vertical partitioning (VERPART) with per-term record bitsets.

Source: Terrovitis et al., PVLDB 2012, Algorithm VERPART (transcribed in
``papers/disassociation-horpart-verpart-refine.txt`` §3.2, Figure 5): terms with
support below k go to the term chunk; the others, in descending support, are
added greedily to the current record chunk whenever the chunk stays
k^m-anonymous; each pass makes one chunk, until every term is placed.

Each frequent term's records are one Python int (bit r = record r of the
cluster), so the support of an itemset is the popcount of an AND. Adding term t
to a chunk that is already k^m-anonymous only needs the itemsets that contain
t: every ``{t} ∪ S`` with S a subset of the chunk of at most m-1 terms whose
support is not zero (a zero intersection prunes all its supersets). Ties in
support go to the smallest item id. The same greedy builds REFINE's shared
chunks. The order the terms are tried in is a parameter (:data:`ORDERS`): the
paper's is public and deterministic, which the ``minimality`` attack exploits;
``random`` shuffles it per cluster from the seed.

Supports and bitsets of many clusters are computed together, vectorised (one
sort of the (cluster, term) keys, :func:`term_groups`); only the terms with
support >= k get a bitset, one Python int each, none per item occurrence. In
the paper's order, :func:`verpart_batch` also orders every cluster's terms in
one sort and makes no per-cluster arrays: the greedy
(:func:`greedy_in_order`) runs on Python lists, and a cluster with at most
two frequent terms (most of HORPART's on bms-webview-2) needs no loop.

REFINE's shared chunks (m = 2, the paper's order) need no bitset: a term fits
a chunk unless it shares 1 to k - 1 records with a member, and the greedy's
chunks are the first-fit colouring of those conflicts in the paper's order,
computed for every joint cluster at once from pair counts
(:func:`pair_greedy_chunks`, checked against the term-by-term greedy in the
tests). HORPART's clusters keep the bitsets: their records hold many frequent
terms each, whose conflicts form long chains (about 180 rounds of colouring
on a bms-pos-like file), where the bitset greedy is about 3x faster.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from privtool.arrays import (
    concat_ranges,
    in_sorted,
    rank_in_runs,
    run_starts,
    search_sorted,
    sort_int,
    stable_order,
    unique_int,
)
from privtool.chain import ChunkedCluster
from privtool.context import SeedSplitter


@dataclass
class ClusterTerms:
    """The terms of one cluster: the frequent ones (support >= k: ascending ids,
    their record bitsets and supports) and the rare ones (the term chunk)."""

    ids: np.ndarray
    bits: list[int]
    supports: np.ndarray
    rare: np.ndarray


@dataclass
class TermGroups:
    """The (cluster, term) groups of consecutive clusters, by cluster then
    term id: each group's ``cluster``, ``term`` and ``support``, whether it is
    ``frequent`` (support >= k) and, for the frequent ones in that order, the
    record bitsets ``bits`` (bit r = record r of the cluster)."""

    cluster: np.ndarray
    term: np.ndarray
    support: np.ndarray
    frequent: np.ndarray
    bits: list[int]


def term_groups(cluster_sizes: np.ndarray, record_sizes: np.ndarray, items: np.ndarray, k: int) -> TermGroups:
    """The :class:`TermGroups` of consecutive clusters: cluster c has
    ``cluster_sizes[c]`` records, record r ``record_sizes[r]`` items, and
    ``items`` concatenates the records' (ascending) item ids. Vectorised: one
    sort of the (cluster, term) keys, one Python int per frequent group."""
    n_clusters = len(cluster_sizes)
    record_cluster = np.repeat(np.arange(n_clusters, dtype=np.int64), cluster_sizes)
    cluster_start = np.cumsum(cluster_sizes) - cluster_sizes
    local_row = np.arange(len(record_sizes), dtype=np.int64) - np.repeat(cluster_start, cluster_sizes)
    occ_cluster = np.repeat(record_cluster, record_sizes)
    occ_row = np.repeat(local_row, record_sizes)
    span = int(items.max()) + 1 if len(items) else 1
    keys = occ_cluster * span + items
    order = stable_order(keys, n_clusters * span)  # within a key, rows stay ascending
    keys, occ_row = keys[order], occ_row[order]
    starts = run_starts(keys)
    supports = np.diff(np.r_[starts, len(keys)])
    group_cluster, group_item = keys[starts] // span, keys[starts] % span
    frequent = supports >= k
    # one bitset word per (frequent group, 64-row block); keys2 ascend already
    occ_group = np.repeat(np.arange(len(starts), dtype=np.int64), supports)
    chosen = frequent[occ_group]
    rows, groups = occ_row[chosen], occ_group[chosen]
    blocks = int(cluster_sizes.max() + 63) // 64 if n_clusters else 1
    keys2 = groups * blocks + (rows >> 6)
    word_starts = run_starts(keys2)
    bit = np.left_shift(np.uint64(1), (rows & 63).astype(np.uint64))
    words = np.bitwise_or.reduceat(bit, word_starts) if len(bit) else np.zeros(0, dtype=np.uint64)
    word_group = keys2[word_starts] // blocks
    word_shift = (keys2[word_starts] % blocks) * 64
    # one bitset per frequent group, in group order: most are one word of the first block
    bits = words.tolist()
    if blocks > 1:
        for w, shift in zip(np.flatnonzero(word_shift).tolist(), word_shift[word_shift > 0].tolist(), strict=True):
            bits[w] <<= shift
        first_word = run_starts(word_group)
        ends = np.r_[first_word[1:], len(word_group)]
        for start, end in zip(first_word.tolist(), ends.tolist(), strict=True):
            for w in range(start + 1, end):
                bits[start] |= bits[w]
        bits = [bits[i] for i in first_word.tolist()]
    return TermGroups(group_cluster, group_item, supports, frequent, bits)


def cluster_terms(cluster_sizes: np.ndarray, record_sizes: np.ndarray, items: np.ndarray, k: int) -> list[ClusterTerms]:
    """Term supports and bitsets of consecutive clusters (arguments as for
    :func:`term_groups`), one :class:`ClusterTerms` per cluster."""
    n_clusters = len(cluster_sizes)
    groups = term_groups(cluster_sizes, record_sizes, items, k)
    group_item, supports, frequent, bits = groups.term, groups.support, groups.frequent, groups.bits
    bounds = np.searchsorted(groups.cluster, np.arange(n_clusters + 1))
    frequent_before = np.r_[0, np.cumsum(frequent)]  # frequent groups before each group
    out = []
    for c in range(n_clusters):
        lo, hi = int(bounds[c]), int(bounds[c + 1])
        keep = frequent[lo:hi]
        out.append(
            ClusterTerms(
                ids=group_item[lo:hi][keep],
                bits=bits[int(frequent_before[lo]) : int(frequent_before[hi])],
                supports=supports[lo:hi][keep],
                rare=group_item[lo:hi][~keep],
            )
        )
    return out


def fits(bits: int, chunk: list[int], k: int, m: int) -> bool:
    """Whether a k^m-anonymous chunk (the bitsets ``chunk``) stays k^m-anonymous
    when a term with records ``bits`` (support >= k) joins it."""
    if m < 2:
        return True
    if m == 2:  # pairs only: no subset walk
        for other in chunk:
            both = bits & other
            if both and both.bit_count() < k:
                return False
        return True
    stack = [(bits, 0, m - 1)]
    while stack:
        common, start, room = stack.pop()
        for i in range(start, len(chunk)):
            both = common & chunk[i]
            if not both:
                continue
            if both.bit_count() < k:
                return False
            if room > 1:
                stack.append((both, i + 1, room - 1))
    return True


def greedy_chunks(
    terms: ClusterTerms, k: int, m: int, order: Sequence[int] | None = None
) -> tuple[tuple[int, ...], ...]:
    """Term domains of k^m-anonymous chunks covering every frequent term
    (VERPART lines 6-15), each domain as ascending ids. ``order`` is the order
    the terms are tried in (positions in ``terms``); by default the paper's,
    support descending with ties to the smallest id."""
    ids = terms.ids.tolist()
    if order is None:
        supports = terms.supports.tolist()
        order = sorted(range(len(ids)), key=lambda i: (-supports[i], ids[i]))
    return greedy_in_order([ids[i] for i in order], [terms.bits[i] for i in order], k, m)


def greedy_in_order(ids: list[int], bits: list[int], k: int, m: int) -> tuple[tuple[int, ...], ...]:
    """:func:`greedy_chunks` over terms already in the order they are tried:
    their ids and record bitsets."""
    if len(ids) < 2:  # nothing to check
        return (tuple(ids),) if ids else ()
    if len(ids) == 2 and m >= 2:  # one pair: together unless it conflicts
        both = bits[0] & bits[1]
        return ((ids[0],), (ids[1],)) if both and both.bit_count() < k else (tuple(sorted(ids)),)
    pending = list(zip(ids, bits, strict=True))
    chunks: list[tuple[int, ...]] = []
    while pending:
        members: list[int] = []
        member_bits: list[int] = []
        rest: list[tuple[int, int]] = []
        for term in pending:
            mine = term[1]
            if m == 2:  # fits() inlined: pairs only, the common case
                for other in member_bits:
                    both = mine & other
                    if both and both.bit_count() < k:
                        rest.append(term)
                        break
                else:
                    members.append(term[0])
                    member_bits.append(mine)
            elif fits(mine, member_bits, k, m):
                members.append(term[0])
                member_bits.append(mine)
            else:
                rest.append(term)
        members.sort()
        chunks.append(tuple(members))
        pending = rest
    return tuple(chunks)


def first_fit_colours(n: int, earlier: np.ndarray, later: np.ndarray) -> np.ndarray:
    """The colour (1, 2, ...) of each of ``n`` nodes taken in order, each the
    smallest colour none of its earlier neighbours has (first-fit colouring);
    edge ``i`` joins ``earlier[i] < later[i]``.

    Vectorised in rounds: a node is coloured in the round after its last
    earlier neighbour, all such nodes at once (the smallest colour missing from
    the sorted distinct colours of its earlier neighbours), so the rounds are
    as many as the longest chain of edges, not the nodes."""
    colour = np.zeros(n, dtype=np.int64)
    while True:
        edges = colour[later] == 0
        earlier, later = earlier[edges], later[edges]
        waiting = np.zeros(n, dtype=bool)
        waiting[later[colour[earlier] == 0]] = True
        ready = (colour == 0) & ~waiting
        if not ready.any():
            return colour
        colour[ready] = 1
        into = ready[later]
        width = int(colour.max()) + 2
        seen = unique_int(later[into] * width + colour[earlier[into]])
        node, taken = np.divmod(seen, width)
        starts = run_starts(node)
        rank = rank_in_runs(starts, len(node)) + 1  # taken colours are distinct and ascending from 1
        missing = np.minimum.reduceat(np.where(taken != rank, rank, width), starts) if len(starts) else starts
        lengths = np.diff(np.r_[starts, len(node)])
        colour[node[starts]] = np.where(missing < width, missing, lengths + 1)


def pair_greedy_chunks(
    cluster_sizes: np.ndarray, record_sizes: np.ndarray, items: np.ndarray, k: int
) -> list[list[tuple[int, ...]]]:
    """For m = 2 and the paper's order, what :func:`greedy_chunks` makes of every
    cluster of :func:`cluster_terms`' input (its frequent terms' chunk domains),
    from pair counts instead of bitsets, without a Python step per term.

    With m = 2 a term fits a chunk unless it shares between 1 and k - 1 records
    (a *conflict*) with a member. The greedy's pass c takes, in order, every
    term left whose earlier conflicting terms include none taken in pass c; so
    a term's chunk is the smallest one none of its earlier conflicting terms
    is in: the first-fit colouring of the conflicts in the paper's order
    (:func:`first_fit_colours`). The conflicts are the pairs of frequent terms
    that some record holds both of, counted with one sort, and below k."""
    n_clusters = len(cluster_sizes)
    span = int(items.max()) + 1 if len(items) else 1
    record_cluster = np.repeat(np.arange(n_clusters, dtype=np.int64), cluster_sizes)
    occ_record = np.repeat(np.arange(len(record_sizes), dtype=np.int64), record_sizes)
    occ_key = record_cluster[occ_record] * span + items
    keys = sort_int(occ_key)
    starts = run_starts(keys)
    supports = np.diff(np.r_[starts, len(keys)])
    frequent = keys[starts[supports >= k]]  # (cluster, term) keys, ascending
    supports = supports[supports >= k]
    cluster, term = np.divmod(frequent, span)
    by_order = np.lexsort((term, -supports, cluster))  # per cluster: support descending, ties to the smaller id
    node = np.empty(len(frequent), dtype=np.int64)
    node[by_order] = np.arange(len(frequent), dtype=np.int64)
    # every pair of frequent terms of a record, as nodes (earlier, later)
    kept = np.flatnonzero(in_sorted(frequent, occ_key))
    record = occ_record[kept]
    sizes = np.bincount(record, minlength=len(record_sizes))
    term_node = node[search_sorted(frequent, occ_key[kept])]
    after = np.repeat(np.cumsum(sizes), sizes) - np.arange(len(kept), dtype=np.int64) - 1
    first = np.repeat(np.arange(len(kept), dtype=np.int64), after)
    second = concat_ranges(first[run_starts(first)] + 1, after[after > 0]) if len(first) else first
    a, b = term_node[first], term_node[second]
    pairs = sort_int(np.minimum(a, b) * len(frequent) + np.maximum(a, b))
    pair_starts = run_starts(pairs)
    conflicts = pairs[pair_starts[np.diff(np.r_[pair_starts, len(pairs)]) < k]]
    colour = first_fit_colours(len(frequent), *np.divmod(conflicts, max(len(frequent), 1)))
    # the chunks: by cluster, then colour, each domain's terms ascending
    chunk_order = np.lexsort((term, colour[node], cluster))
    chunk_key = cluster[chunk_order] * (int(colour.max(initial=0)) + 1) + colour[node][chunk_order]
    bounds = np.r_[run_starts(chunk_key), len(chunk_key)].tolist()
    owners = cluster[chunk_order][bounds[:-1]].tolist()
    ordered = term[chunk_order].tolist()
    out: list[list[tuple[int, ...]]] = [[] for _ in range(n_clusters)]
    for owner, lo, hi in zip(owners, bounds[:-1], bounds[1:], strict=True):
        out[owner].append(tuple(ordered[lo:hi]))
    return out


ORDERS = ("support", "random")
"""Orders VERPART may try the terms of a cluster in: the paper's (support
descending, ties to the smallest id) or a seeded shuffle per cluster."""


def random_order(seed: int, terms: ClusterTerms) -> np.ndarray:
    """The order (positions in ``terms``, ascending ids) in which a cluster
    tries its frequent terms under ``order="random"``: a shuffle drawn from the
    seed and a digest of the cluster's content (the supports of every pair of
    its frequent terms). It is the same on every executor and for whoever holds
    the data and the seed, but the release does not give it away even with the
    seed: pairs of terms of different chunks have no published support."""
    bits = terms.bits
    pairs = [(bits[i] & bits[j]).bit_count() for i in range(len(bits)) for j in range(i + 1, len(bits))]
    content = np.asarray([*terms.supports.tolist(), *pairs], dtype=np.int64).tobytes()
    digest = hashlib.sha256(content).hexdigest()
    return SeedSplitter(seed).rng("verpart-order", digest).permutation(len(bits))


def verpart_batch(
    unit: tuple[np.ndarray, np.ndarray, np.ndarray], k: int, m: int, order: str = "support", seed: int = 0
) -> list[ChunkedCluster]:
    """VERPART of consecutive clusters given as ``(cluster_sizes, record_sizes,
    items)`` (see :func:`cluster_terms`): the unit of work of ``ctx.map``.
    ``order`` is one of :data:`ORDERS` (``random`` draws from ``seed``, see
    :func:`random_order`)."""
    if order == "random":
        return [
            ChunkedCluster(greedy_chunks(terms, k, m, random_order(seed, terms).tolist()), tuple(terms.rare.tolist()))
            for terms in cluster_terms(*unit, k)
        ]
    # the paper's order for every cluster at once: by cluster, support descending, ties to the smaller id
    groups = term_groups(*unit, k)
    frequent = groups.frequent
    cluster, term = groups.cluster[frequent], groups.term[frequent]
    by_order = np.lexsort((term, -groups.support[frequent], cluster))
    ids = term[by_order].tolist()
    bits = [groups.bits[i] for i in by_order.tolist()]
    n_clusters = len(unit[0])
    bounds = np.searchsorted(cluster, np.arange(n_clusters + 1)).tolist()
    rare = groups.term[~frequent].tolist()
    rare_bounds = np.searchsorted(groups.cluster[~frequent], np.arange(n_clusters + 1)).tolist()
    return [
        ChunkedCluster(greedy_in_order(ids[lo:hi], bits[lo:hi], k, m), tuple(rare[r_lo:r_hi]))
        for lo, hi, r_lo, r_hi in zip(bounds[:-1], bounds[1:], rare_bounds[:-1], rare_bounds[1:], strict=True)
    ]


def verpart(
    record_sizes: np.ndarray, items: np.ndarray, k: int, m: int, order: str = "support", seed: int = 0
) -> ChunkedCluster:
    """VERPART of one cluster given as record sizes and concatenated item ids."""
    unit = (np.array([len(record_sizes)]), np.asarray(record_sizes), np.asarray(items))
    return verpart_batch(unit, k, m, order, seed)[0]
