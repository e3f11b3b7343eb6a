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
sort of the (cluster, term) keys); only the terms with support >= k get a
bitset, one Python int each, none per item occurrence.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from privtool.arrays import concat_ranges, run_starts
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


def cluster_terms(cluster_sizes: np.ndarray, record_sizes: np.ndarray, items: np.ndarray, k: int) -> list[ClusterTerms]:
    """Term supports and bitsets of consecutive clusters: cluster c has
    ``cluster_sizes[c]`` records, record r ``record_sizes[r]`` items, and
    ``items`` concatenates the records' (ascending) item ids."""
    n_clusters = len(cluster_sizes)
    record_cluster = np.repeat(np.arange(n_clusters, dtype=np.int64), cluster_sizes)
    cluster_start = np.cumsum(cluster_sizes) - cluster_sizes
    local_row = np.arange(len(record_sizes), dtype=np.int64) - np.repeat(cluster_start, cluster_sizes)
    occ_cluster = np.repeat(record_cluster, record_sizes)
    occ_row = np.repeat(local_row, record_sizes)
    span = int(items.max()) + 1 if len(items) else 1
    keys = occ_cluster * span + items
    order = np.argsort(keys, kind="stable")  # within a key, rows stay ascending
    keys, occ_row = keys[order], occ_row[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if len(keys) else np.zeros(0, dtype=np.int64)
    supports = np.diff(np.r_[starts, len(keys)])
    group_cluster, group_item = keys[starts] // span, keys[starts] % span
    frequent = supports >= k
    # one bitset word per (frequent group, 64-row block); keys2 ascend already
    occ_group = np.repeat(np.arange(len(starts), dtype=np.int64), supports)
    chosen = frequent[occ_group]
    rows, groups = occ_row[chosen], occ_group[chosen]
    blocks = int(cluster_sizes.max() + 63) // 64 if n_clusters else 1
    keys2 = groups * blocks + (rows >> 6)
    word_starts = np.flatnonzero(np.r_[True, keys2[1:] != keys2[:-1]]) if len(keys2) else np.zeros(0, dtype=np.int64)
    bit = np.left_shift(np.uint64(1), (rows & 63).astype(np.uint64))
    words = np.bitwise_or.reduceat(bit, word_starts) if len(bit) else np.zeros(0, dtype=np.uint64)
    word_group = keys2[word_starts] // blocks
    word_shift = (keys2[word_starts] % blocks) * 64
    # one bitset per frequent group, in group order: most are one word of the first block
    bits = words.tolist()
    if blocks > 1:
        for w, shift in zip(np.flatnonzero(word_shift).tolist(), word_shift[word_shift > 0].tolist(), strict=True):
            bits[w] <<= shift
        first_word = np.flatnonzero(np.r_[True, word_group[1:] != word_group[:-1]]) if len(word_group) else word_group
        ends = np.r_[first_word[1:], len(word_group)]
        for start, end in zip(first_word.tolist(), ends.tolist(), strict=True):
            for w in range(start + 1, end):
                bits[start] |= bits[w]
        bits = [bits[i] for i in first_word.tolist()]
    bounds = np.searchsorted(group_cluster, np.arange(n_clusters + 1))
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
    else:
        order = list(order)
    bits = terms.bits
    chunks: list[tuple[int, ...]] = []
    while order:
        members: list[int] = []
        member_bits: list[int] = []
        rest: list[int] = []
        for i in order:
            if m == 2:  # fits() inlined: pairs only, the common case
                mine = bits[i]
                for other in member_bits:
                    both = mine & other
                    if both and both.bit_count() < k:
                        rest.append(i)
                        break
                else:
                    members.append(i)
                    member_bits.append(mine)
            elif fits(bits[i], member_bits, k, m):
                members.append(i)
                member_bits.append(bits[i])
            else:
                rest.append(i)
        chunks.append(tuple(sorted(ids[i] for i in members)))
        order = rest
    return tuple(chunks)


def pair_greedy_chunks(
    cluster_sizes: np.ndarray, record_sizes: np.ndarray, items: np.ndarray, k: int
) -> list[list[tuple[int, ...]]]:
    """For m = 2 and the paper's order, what :func:`greedy_chunks` makes of every
    cluster of :func:`cluster_terms`' input (its frequent terms' chunk domains),
    from pair counts instead of bitsets.

    With m = 2 a term fits a chunk unless it shares between 1 and k - 1 records
    with a member, and those counts are the pairs' co-occurrences: every pair
    of items of every record counted with one sort. Only the pairs below k
    reach Python (as sets of partners), so a cluster whose records seldom hold
    two of its terms (REFINE's shared chunks) costs little more than its terms."""
    n_clusters = len(cluster_sizes)
    span = int(items.max()) + 1 if len(items) else 1
    record_cluster = np.repeat(np.arange(n_clusters, dtype=np.int64), cluster_sizes)
    occ_cluster = np.repeat(record_cluster, record_sizes)
    keys = np.sort(occ_cluster * span + items)
    starts = run_starts(keys)
    supports = np.diff(np.r_[starts, len(keys)])
    frequent = supports >= k
    cluster, term = np.divmod(keys[starts[frequent]], span)
    supports = supports[frequent]
    by_order = np.lexsort((term, -supports, cluster))  # per cluster: support descending, ties to the smaller id
    bounds = np.searchsorted(cluster[by_order], np.arange(n_clusters + 1)).tolist()
    ordered = term[by_order].tolist()
    # every pair (earlier, later) of items of a record, by position in ``items``
    offsets = np.r_[0, np.cumsum(record_sizes)].astype(np.int64)
    after = np.repeat(offsets[1:], record_sizes) - np.arange(len(items), dtype=np.int64) - 1
    first = np.repeat(np.arange(len(items), dtype=np.int64), after)
    second = concat_ranges(first[run_starts(first)] + 1, after[after > 0]) if len(first) else first
    pairs = np.sort((occ_cluster[first] * span + items[first]) * span + items[second])
    pair_starts = run_starts(pairs)
    rare = pair_starts[np.diff(np.r_[pair_starts, len(pairs)]) < k]
    owner, low, high = *np.divmod(pairs[rare] // span, span), pairs[rare] % span
    # each term's partners below k, both ways round: one set per (cluster, term), built from a slice
    both = np.sort(np.r_[(owner * span + low) * span + high, (owner * span + high) * span + low])
    holders = run_starts(both // span)
    ends = np.r_[holders[1:], len(both)][: len(holders)]
    partner = (both % span).tolist()
    holder_cluster, holder_term = np.divmod(both[holders] // span, span)
    partners: list[dict[int, set[int]]] = [{} for _ in range(n_clusters)]
    for c, t, a, b in zip(holder_cluster.tolist(), holder_term.tolist(), holders.tolist(), ends.tolist(), strict=True):
        partners[c][t] = set(partner[a:b])
    out: list[list[tuple[int, ...]]] = []
    for c in range(n_clusters):
        order, bad = ordered[bounds[c] : bounds[c + 1]], partners[c]
        chunks: list[tuple[int, ...]] = []
        while order:
            members: set[int] = set()
            rest: list[int] = []
            for t in order:
                if t in bad and not bad[t].isdisjoint(members):
                    rest.append(t)
                else:
                    members.add(t)
            chunks.append(tuple(sorted(members)))
            order = rest
        out.append(chunks)
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
    out = []
    for terms in cluster_terms(*unit, k):
        shuffle = random_order(seed, terms).tolist() if order == "random" else None
        out.append(ChunkedCluster(greedy_chunks(terms, k, m, shuffle), tuple(terms.rare.tolist())))
    return out


def verpart(
    record_sizes: np.ndarray, items: np.ndarray, k: int, m: int, order: str = "support", seed: int = 0
) -> ChunkedCluster:
    """VERPART of one cluster given as record sizes and concatenated item ids."""
    unit = (np.array([len(record_sizes)]), np.asarray(record_sizes), np.asarray(items))
    return verpart_batch(unit, k, m, order, seed)[0]
