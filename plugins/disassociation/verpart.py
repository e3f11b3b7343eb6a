"""Vertical partitioning (VERPART) with per-term record bitsets.

Source: Terrovitis et al., PVLDB 2012, Algorithm VERPART (transcribed in
``papers/disassociation-horpart-verpart-refine.txt`` §3.2, Figure 5): terms with
support below k go to the term chunk; the others, in descending support, are
added greedily to the current record chunk whenever the chunk stays
k^m-anonymous; each pass makes one chunk, until every term is placed.

Each term's records are one Python int (bit r = record r of the group), so the
support of an itemset is the popcount of an AND. Adding term t to a chunk that
is already k^m-anonymous only needs the itemsets that contain t: every
``{t} ∪ S`` with S a subset of the chunk of at most m-1 terms whose support is
not zero (a zero intersection prunes all its supersets). Ties in support go to
the smallest item id. The same greedy builds REFINE's shared chunks.
"""

from __future__ import annotations

import numpy as np

from .model import ChunkedCluster


def term_bitsets(items: np.ndarray, rows: np.ndarray, n_rows: int) -> tuple[np.ndarray, list[int], np.ndarray]:
    """Distinct ids of ``items`` (ascending), the bitset of each (bit r set when
    row r holds it; ``rows`` gives the row of each occurrence) and their supports.
    Built vectorised: one Python int per distinct term, none per occurrence."""
    ids, inverse = np.unique(items, return_inverse=True)
    words = max(1, (n_rows + 63) // 64)
    grid = np.zeros((len(ids), words), dtype=np.uint64)
    rows = np.asarray(rows, dtype=np.int64)
    np.add.at(grid, (inverse, rows >> 6), np.left_shift(np.uint64(1), (rows & 63).astype(np.uint64)))
    raw = grid.astype("<u8", copy=False).tobytes()
    width = words * 8
    bits = [int.from_bytes(raw[i * width : (i + 1) * width], "little") for i in range(len(ids))]
    supports = np.bincount(inverse, minlength=len(ids))
    return ids, bits, supports


def fits(bits: int, chunk: list[int], k: int, m: int) -> bool:
    """Whether a k^m-anonymous chunk (the bitsets ``chunk``) stays k^m-anonymous
    when a term with records ``bits`` (support >= k) joins it."""
    if m < 2:
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


def greedy_chunks(ids: np.ndarray, bits: list[int], supports: np.ndarray, k: int, m: int) -> list[tuple[int, ...]]:
    """Term domains of k^m-anonymous chunks covering every term with support >= k
    (VERPART lines 6-15), each domain as ascending ids."""
    order = [int(i) for i in np.lexsort((ids, -supports)) if supports[i] >= k]
    chunks: list[tuple[int, ...]] = []
    while order:
        members: list[int] = []
        member_bits: list[int] = []
        rest: list[int] = []
        for i in order:
            if fits(bits[i], member_bits, k, m):
                members.append(i)
                member_bits.append(bits[i])
            else:
                rest.append(i)
        chunks.append(tuple(sorted(int(ids[i]) for i in members)))
        order = rest
    return chunks


def verpart(sizes: np.ndarray, items: np.ndarray, k: int, m: int) -> ChunkedCluster:
    """VERPART of one cluster given as record sizes and concatenated item ids."""
    rows = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
    ids, bits, supports = term_bitsets(items, rows, len(sizes))
    chunks = greedy_chunks(ids, bits, supports, k, m)
    term_chunk = tuple(int(t) for t in ids[supports < k])
    return ChunkedCluster(tuple(chunks), term_chunk)


def verpart_unit(unit: tuple[np.ndarray, np.ndarray], k: int, m: int) -> ChunkedCluster:
    """:func:`verpart` on a ``(sizes, items)`` pair: the per-cluster unit of ``ctx.map``."""
    return verpart(unit[0], unit[1], k, m)
