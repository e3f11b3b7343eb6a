"""Small numpy helpers for grouping integer arrays: runs found by sorting,
and CSR groups (:func:`offsets_of` is the one place that turns group lengths
into offsets).

``np.unique`` on large int64 arrays may take a hash-based path that is slower
than a plain sort here; these helpers sort once and mark run boundaries.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import numpy as np
import numpy.typing as npt

SLAB_OCCURRENCES = 1 << 18
"""Item occurrences one bounded numpy pass over a release handles at a time
(the verifiers' and the sanitizer's slabs; their temporaries are a few int64
arrays of that length, tens of MiB). Small enough that the slab is full, and
so the same size, from a few hundred thousand records on: a stage's peak then
grows with the data in proportion, not with a slab that fills up between 1M and
2M records (docs/results/scale.md, "The fixed base"); smaller slabs cost no more CPU."""


def run_starts(sorted_values: np.ndarray) -> np.ndarray:
    """Positions where a new run of equal values starts in a sorted 1-D array."""
    if len(sorted_values) == 0:
        return np.zeros(0, dtype=np.int64)
    first = np.ones(len(sorted_values), dtype=bool)  # not np.r_, which costs tens of microseconds a call
    np.not_equal(sorted_values[1:], sorted_values[:-1], out=first[1:])
    return np.flatnonzero(first)


def sort_int(values: np.ndarray, runs: bool = False) -> np.ndarray:
    """The values of an integer array, ascending, in its dtype: sorted as
    uint32 when they are non-negative and fit it (numpy sorts 32-bit ints
    about twice as fast as 64-bit ones).

    ``runs``: the values come mostly in ascending runs, as keys ``group * span
    + x`` listed group by group do; numpy's stable sort (a merge of the runs it
    finds) then takes a half to a tenth of the time of its default sort, which
    is twice as fast on values in random order (bms-webview-2's REFINE keys,
    176,000 of them: 2.9 against 5.9 ms)."""
    values = np.asarray(values)
    kind: Literal["stable"] | None = "stable" if runs else None
    if values.dtype.itemsize > 4 and len(values) and int(values.min()) >= 0 and int(values.max()) < 1 << 32:
        return np.sort(values.astype(np.uint32), kind=kind).astype(values.dtype)
    return np.sort(values, kind=kind)


def unique_int(values: np.ndarray, runs: bool = False) -> np.ndarray:
    """The distinct values of an integer array, ascending, in its dtype: marked
    in a table of one byte per value between the smallest and the largest when
    that table is small enough (:data:`DENSE_LOOKUP_CELLS`, at most
    :data:`DENSE_LOOKUP_PER_VALUE` cells per value; no sort), else sorted
    (``runs``: as for :func:`sort_int`)."""
    values = np.asarray(values)
    if len(values):
        low = int(values.min())
        marked = byte_table(values, low, int(values.max()), len(values))
        if marked is not None:
            return (np.flatnonzero(marked) + low).astype(values.dtype, copy=False)
    ordered = sort_int(values, runs)
    return ordered[run_starts(ordered)]


def unique_inverse(values: np.ndarray, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)`` of non-negative ints below
    ``bound``, as ``values``' dtype and int32 (int64 from 2**31 values): the distinct values ascending
    and each value's position among them, found without sorting ``values``.

    Each value writes its position into a table of ``bound`` cells (allocated,
    not filled: only the cells the values name are touched); the one position
    per value read back is the distinct values, and only they are sorted. With
    a few hundred distinct codes among a few thousand occurrences (a chunk
    batch of a release) this is a quarter of ``np.unique``'s time."""
    values = np.asarray(values)
    dtype = np.int32 if len(values) < 1 << 31 else np.int64
    slot = np.empty(bound, dtype=dtype)
    positions = np.arange(len(values), dtype=dtype)
    slot[values] = positions  # some position of each value is the one written; which one does not matter
    distinct = values[slot[values] == positions]
    distinct.sort()
    slot[distinct] = np.arange(len(distinct), dtype=dtype)
    return distinct, slot[values]


SEARCH_SORTS_KEYS_ABOVE = 1 << 20
"""Table length above which :func:`search_sorted` looks its keys up in ascending order.

Below it the table (8 MiB of int64) stays in cache, and keys that are already
near each other in order (grouped by cluster, as faithfulness's are) cost less
searched as they come than sorted: with 2^16, faithfulness spent 2.4 of its
7.5 CPU s on 0.5M records sorting such keys (docs/results/scale.md, session 9)."""


def search_sorted(table: np.ndarray, keys: np.ndarray, side: Literal["left", "right"] = "left") -> np.ndarray:
    """``np.searchsorted(table, keys, side)`` for a 1-D ``keys``, the same positions,
    found with the keys in ascending order once ``table`` has more than
    :data:`SEARCH_SORTS_KEYS_ABOVE` entries (and the keys are not ascending already).

    A binary search per key in random order misses the cache at each of its
    late steps once the table outgrows it, so its cost per key grows with the
    table (0.26 us a key at 1M int64 entries, 1.2 us at 4M, 1.65 us at 16M on
    the scale machine); ascending keys walk the table in order (0.1 to 0.13 us
    a key, the sort included). docs/results/scale.md, "Where a record costs more at 5M"."""
    keys = np.asarray(keys)
    if len(table) <= SEARCH_SORTS_KEYS_ABOVE or len(keys) < 2 or bool(np.all(keys[1:] >= keys[:-1])):
        return np.searchsorted(table, keys, side=side)
    order = np.argsort(keys)
    out = np.empty(len(keys), dtype=np.intp)
    out[order] = np.searchsorted(table, keys[order], side=side)
    return out


DENSE_LOOKUP_CELLS = 1 << 24
""":func:`in_sorted` (and :func:`unique_int`) marks the table's values in a
table of one byte per value between its smallest and largest while there are
at most this many, and at most :data:`DENSE_LOOKUP_PER_VALUE` per value looked
up or marked."""

DENSE_LOOKUP_PER_VALUE = 64


def byte_table(values: np.ndarray, low: int, high: int, work: int) -> np.ndarray | None:
    """One bool per integer from ``low`` to ``high`` (the bounds of ``values``),
    True where ``values`` holds it; None when that table would have more than
    :data:`DENSE_LOOKUP_CELLS` cells, or more than :data:`DENSE_LOOKUP_PER_VALUE`
    per value of ``work`` (the values marked and looked up), where a sort is cheaper."""
    cells = high - low + 1
    if cells > min(DENSE_LOOKUP_CELLS, DENSE_LOOKUP_PER_VALUE * work):
        return None
    marked = np.zeros(cells, dtype=bool)
    marked[values - low] = True
    return marked


def in_sorted(table: np.ndarray, keys: np.ndarray, keys_sorted: bool = False) -> np.ndarray:
    """Whether each of ``keys`` occurs in the ascending integer array ``table``.

    When the table's values span few enough integers (:data:`DENSE_LOOKUP_CELLS`),
    a lookup in a table of bytes; else binary searches: with ``keys_sorted``
    (``keys`` ascending too) and a shorter table, the table's values are
    looked up in ``keys`` (binary searches on the shorter side) and the runs
    of ``keys`` they hit marked; otherwise each key is looked up in the table
    (:func:`search_sorted`)."""
    if not len(table) or not len(keys):
        return np.zeros(len(keys), dtype=bool)
    low, high = int(table[0]), int(table[-1])
    marked = byte_table(table, low, high, len(table) + len(keys))
    if marked is not None:
        inside = (keys >= low) & (keys <= high)
        out = np.zeros(len(keys), dtype=bool)
        out[inside] = marked[keys[inside] - low]
        return out
    if keys_sorted and len(table) < len(keys):
        lo, hi = np.searchsorted(keys, table, "left"), np.searchsorted(keys, table, "right")
        return np.cumsum(np.bincount(lo, minlength=len(keys) + 1) - np.bincount(hi, minlength=len(keys) + 1))[:-1] > 0
    return lookup_sorted(table, keys)[1]


def lookup_sorted(table: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each of ``keys`` is in the ascending, non-empty ``table``
    (:func:`search_sorted`, clipped to the last entry) and whether it is there:
    ``(positions, found)``, ``table[positions[i]] == keys[i]`` where ``found[i]``."""
    positions = np.minimum(search_sorted(table, keys), len(table) - 1)
    return positions, table[positions] == keys


def pair_key(high: np.ndarray, low: np.ndarray) -> np.ndarray:
    """One int64 per pair of non-negative ints (``low`` < 2**32), ordered like
    the pairs; :func:`split_pair_key` undoes it."""
    return high.astype(np.int64) * (1 << 32) + low.astype(np.int64)


def split_pair_key(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return keys >> 32, keys & 0xFFFFFFFF


def concat_ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The integers ``starts[i] .. starts[i] + lengths[i] - 1`` of every range
    ``i``, concatenated in order (int64)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    offsets = offsets_of(lengths)
    return np.arange(int(offsets[-1]), dtype=np.int64) - np.repeat(
        offsets[:-1] - np.asarray(starts, dtype=np.int64), lengths
    )


def rank_in_runs(run_start: np.ndarray, n: int) -> np.ndarray:
    """The position of each of ``n`` grouped elements within its run, given the
    runs' first positions (:func:`run_starts`)."""
    return concat_ranges(np.zeros(len(run_start), dtype=np.int64), np.diff(np.r_[run_start, n]))


def offsets_of(lengths: Iterable[int] | npt.NDArray[np.integer]) -> npt.NDArray[np.int64]:
    """CSR offsets (length n + 1, starting at 0, read-only) of consecutive
    groups of these lengths (an array is taken as it is, not item by item)."""
    sizes = lengths.astype(np.int64, copy=False) if isinstance(lengths, np.ndarray) else np.fromiter(lengths, np.int64)
    out = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=out[1:])
    out.flags.writeable = False
    return out


def csr_positions(indptr: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Positions ``indptr[r]..indptr[r+1]-1`` of every row in ``rows``, concatenated."""
    return concat_ranges(indptr[rows], indptr[rows + 1] - indptr[rows])


def slabs(ends: np.ndarray, most: int) -> list[tuple[int, int]]:
    """``[first, last)`` ranges of consecutive groups holding at most ``most``
    elements each (a larger group alone), covering every group; ``ends[g]``
    is the number of elements up to the end of group ``g`` (ascending)."""
    ranges, first, done = [], 0, 0
    while first < len(ends):
        last = max(first + 1, int(np.searchsorted(ends, done + most, side="right")))
        ranges.append((first, last))
        first, done = last, int(ends[last - 1])
    return ranges


def distinct_in_groups(bounds: np.ndarray, values: np.ndarray, span: int, most: int = SLAB_OCCURRENCES) -> np.ndarray:
    """``g * span + v`` for every distinct pair of a group ``g`` and a value
    ``v`` in it (``values[bounds[g]:bounds[g + 1]]``, non-negative ints below
    ``span``), ascending. Worked out :func:`slabs` of about ``most`` values at
    a time, so that no temporary grows with ``values``."""
    parts = [np.zeros(0, dtype=np.int64)]
    for first, last in slabs(np.asarray(bounds[1:]) - int(bounds[0]), most):
        lo, hi = int(bounds[first]), int(bounds[last])
        group = np.repeat(np.arange(first, last, dtype=np.int64), np.diff(bounds[first : last + 1]))
        parts.append(unique_int(group * span + values[lo:hi], runs=True))
    return np.concatenate(parts)


def csr_distinct(indptr: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CSR rows ``values[indptr[i]:indptr[i+1]]`` (non-negative ints below 2**32)
    reduced to their distinct values, ascending: the new ``(indptr, values)``."""
    n = len(indptr) - 1
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    row, value = split_pair_key(unique_int(pair_key(rows, values)))
    return offsets_of(np.bincount(row, minlength=n)), value


def row_keys(rows: np.ndarray, base: int) -> np.ndarray | None:
    """One int64 per row of a 2-D array of ints in ``[0, base)``: the row read
    as digits in ``base``, so that keys order like the rows; None when
    ``base ** width`` does not fit in an int64."""
    if base ** rows.shape[1] >= 2**63:
        return None
    key = np.zeros(len(rows), dtype=np.int64)
    for j in range(rows.shape[1]):
        key = key * base + rows[:, j]
    return key


def unique_rows(rows: np.ndarray, base: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a 2-D array of ints in ``[0, base)``, ascending, and
    for each row the position of its distinct row (one int64 sort when
    :func:`row_keys` fits, a row sort otherwise)."""
    key = row_keys(rows, base)
    if key is None:
        distinct, inverse = np.unique(rows, axis=0, return_inverse=True)
        return distinct, inverse.ravel()
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    return rows[first], inverse.ravel()


def bitsets(owners: np.ndarray, members: np.ndarray, n_owners: int, n_members: int) -> np.ndarray:
    """``bits[o]``: the set ``{members[i] : owners[i] == o}`` as ``uint64`` words
    (bit ``j % 64`` of word ``j // 64`` for member ``j``), one row per owner.
    One sort and one ``reduceat``: no Python per pair."""
    words = max(1, -(-n_members // 64))
    out = np.zeros((n_owners, words), dtype=np.uint64)
    members = np.asarray(members, dtype=np.int64)
    key = np.asarray(owners, dtype=np.int64) * words + (members >> 6)
    order = np.argsort(key, kind="stable")
    key = key[order]
    starts = run_starts(key)
    if len(starts):
        bit = np.left_shift(np.uint64(1), (members[order] & 63).astype(np.uint64))
        out.reshape(-1)[key[starts]] = np.bitwise_or.reduceat(bit, starts)
    return out


def int_bincount(index: np.ndarray, weights: np.ndarray, minlength: int = 0) -> np.ndarray:
    """``np.bincount(index, weights)`` of integer weights, summed exactly as int64.

    ``np.bincount`` adds weights in float64, which is exact while every partial
    sum stays below 2**53; that is checked, and ``np.add.at`` on int64 (slower)
    is used otherwise.
    """
    weights = np.asarray(weights, dtype=np.int64)
    if len(weights) == 0 or int(np.abs(weights).max()) * len(weights) < 2**53:
        return np.bincount(index, weights=weights, minlength=minlength).astype(np.int64)
    out = np.zeros(max(minlength, int(index.max()) + 1), dtype=np.int64)
    np.add.at(out, index, weights)
    return out


def stable_order(values: np.ndarray, bound: int) -> np.ndarray:
    """The stable argsort of non-negative ints below ``bound``: a radix sort
    when they fit 16 bits, as uint32 when they fit 32 (numpy's stable argsort
    of 32-bit ints takes about half the time of 64-bit ones)."""
    if bound <= 1 << 16:
        return np.argsort(values.astype(np.uint16), kind="stable")
    return np.argsort(values.astype(np.uint32) if bound <= 1 << 32 else values, kind="stable")


def lexicographic_order(lead: np.ndarray, items: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The stable order of the rows ``i`` by ``(lead[i], items[offsets[i]:offsets[i + 1]])``:
    by ``lead``, then by the rows' items as sequences compared element by
    element, a proper prefix first (the order of Python tuples). ``lead`` and
    ``items`` are non-negative ints.

    One stable sort of int64 keys that pack ``lead`` and the first items of
    each row (``item + 1``, 0 past a row's end: as many items as fit 63 bits),
    then :func:`_tied_order` on the rows that tie on their key and go on (a
    row that ends within its key ties only with equal rows). About half the
    time of :func:`_tied_order` alone on sub-records of bms-webview-2."""
    lengths = np.diff(offsets)
    if len(lead) == 0 or len(items) == 0:
        return _tied_order(lead, items, offsets)
    item_bits = (int(items.max()) + 1).bit_length()
    depth = min((63 - int(lead.max()).bit_length()) // item_bits, int(lengths.max()))
    if depth < 1:
        return _tied_order(lead, items, offsets)
    starts = np.asarray(offsets[:-1], dtype=np.int64)
    key = np.asarray(lead, dtype=np.int64).copy()
    for d in range(depth):
        inside = lengths > d
        key <<= item_bits
        key |= np.where(inside, np.asarray(items[np.where(inside, starts + d, 0)], dtype=np.int64) + 1, 0)
    order = np.argsort(key, kind="stable")
    longer = lengths[order] > depth
    if not np.any(longer):
        return order
    ordered = key[order]
    group = np.cumsum(np.r_[False, ordered[1:] != ordered[:-1]])
    goes_on = np.zeros(int(group[-1]) + 1, dtype=bool)
    goes_on[group[longer]] = True
    at = np.flatnonzero(goes_on[group])  # every row of such a group is longer than ``depth`` or as long
    rows = order[at]
    rest = lengths[rows] - depth
    order[at] = rows[_tied_order(group[at], items[concat_ranges(starts[rows] + depth, rest)], offsets_of(rest))]
    return order


def _tied_order(lead: np.ndarray, items: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """:func:`lexicographic_order`, vectorised: one sort by ``(lead, first
    item)``, then, while rows tie on everything compared so far, one sort of
    the tied rows only by their next item (-1 past a row's end: rows that
    ended tie for good, being equal). No Python object per row."""
    n = len(lead)
    lengths = np.diff(offsets).astype(np.int64)
    starts = np.asarray(offsets[:-1], dtype=np.int64)
    items = np.asarray(items, dtype=np.int64)
    base = (int(items.max()) if len(items) else 0) + 2

    def column(rows: np.ndarray, depth: int) -> np.ndarray:
        """Item ``depth`` of each of ``rows``, or -1 past its end."""
        inside = lengths[rows] > depth
        return np.where(inside, items[np.where(inside, starts[rows] + depth, 0)] if len(items) else -1, -1)

    lead = np.asarray(lead, dtype=np.int64)
    order = stable_order(lead, (int(lead.max()) + 1) if n else 0)
    key = lead[order]
    # the positions of ``order`` still tied with a neighbour, and each one's tied group (first position)
    tied = np.arange(n, dtype=np.int64)
    depth = 0
    while len(tied) > 1:
        same = key[1:] == key[:-1]
        in_group = np.zeros(len(key), dtype=bool)
        in_group[1:] = same
        in_group[:-1] |= same
        tied, key = tied[in_group], key[in_group]
        if not len(tied):
            break
        first = np.ones(len(key), dtype=bool)
        np.not_equal(key[1:], key[:-1], out=first[1:])
        group = np.maximum.accumulate(np.where(first, np.arange(len(tied)), 0))
        col = column(order[tied], depth)
        # rows that ended tie with the others that ended (equal rows): their group is settled
        live = col >= 0
        sub = stable_order(group * base + (col + 1), len(tied) * base)
        order[tied] = order[tied][sub]
        tied, group, col, live = tied, group[sub], col[sub], live[sub]
        tied, key = tied[live], (group * base + col + 1)[live]
        depth += 1
    return order
