"""Itemset queries shared by anonymizers and utility metrics: the top-K most
frequent itemsets of a dataset, the supports of all pairs of a set of items,
the supports of given itemsets, and every itemset of a given size that records
hold, with its support (numpy and bitsets, no Python per occurrence).

Itemsets are returned as tuples of labels in canonical order, so results from
datasets with different vocabularies (an original and a reconstruction) compare
directly. Mining uses pyfim's FP-growth (imported lazily). pyfim 6.28 leaves
out every itemset made only of items present in *every* record (ALGORITHM-NOTES,
section 8, saw it for singletons; it holds for larger sets too: on the records
``{1,2}, {1,2}`` it reports nothing), so one empty record is appended before
mining: no item is then universal and no absolute support changes.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from .arrays import bitsets, row_keys, run_starts
from .dataset import Dataset, label_sort_key
from .errors import MissingEvidence

Itemset = tuple[str, ...]


def pyfim_transactions(dataset: Dataset) -> list[list[int]]:
    """The records as id lists, plus the empty record that keeps pyfim exact."""
    flat, bounds = dataset.items.tolist(), dataset.indptr.tolist()
    return [flat[bounds[i] : bounds[i + 1]] for i in range(dataset.n_records)] + [[]]


def _canonical(dataset: Dataset, ids: Sequence[int]) -> Itemset:
    return tuple(sorted((dataset.labels[i] for i in ids), key=label_sort_key))


def itemsets_above(dataset: Dataset, threshold: int, min_size: int, max_size: int) -> dict[Itemset, int]:
    """Every itemset of ``min_size..max_size`` items with support >= ``threshold`` (>= 1)."""
    return _mine(dataset, pyfim_transactions(dataset), threshold, min_size, max_size)


def _mine(
    dataset: Dataset, transactions: list[list[int]], threshold: int, min_size: int, max_size: int
) -> dict[Itemset, int]:
    if not dataset.n_records:
        return {}
    import fim

    mined = fim.fpgrowth(transactions, target="s", supp=-threshold, zmin=min_size, zmax=max_size, report="a")
    return {_canonical(dataset, ids): int(support) for ids, support in mined}


MINING_BUDGET = 20_000_000
"""Most itemsets one mining pass may return (a few GB as Python objects)."""


def itemset_occurrences(dataset: Dataset, min_size: int, max_size: int) -> int:
    """How many (record, itemset of ``min_size..max_size`` items) pairs the
    dataset holds: ``sum_r sum_s C(|r|, s)``, exact (it is astronomic for
    records of hundreds of items)."""
    lengths, counts = np.unique(dataset.sizes, return_counts=True)
    return sum(
        int(n) * sum(math.comb(int(length), s) for s in range(min_size, max_size + 1))
        for length, n in zip(lengths.tolist(), counts.tolist(), strict=True)
    )


def top_itemsets(dataset: Dataset, count: int, min_size: int = 2, max_size: int = 4) -> list[tuple[Itemset, int]]:
    """The ``count`` most frequent itemsets of ``min_size..max_size`` items, by
    support descending, ties in canonical itemset order (fewer when the dataset
    has fewer itemsets of those sizes).

    The support threshold starts at the ``count``-th highest item support (a
    cheap first guess: an itemset is never more frequent than its items) and is
    lowered in 30% steps until ``count`` itemsets reach it, so that mining never
    enumerates far more itemsets than it returns on sparse data. It is never
    lowered below ``itemset_occurrences / MINING_BUDGET`` (at most that many
    itemsets reach it); when ``count`` itemsets do not reach that floor, long
    records would make mining enumerate more than the budget, and the answer is
    :class:`~privtool.errors.MissingEvidence` instead of the allocation.
    """
    if count < 1 or min_size > max_size:
        return []
    supports = np.sort(dataset.supports)[::-1]
    if not len(supports) or supports[0] == 0:
        return []
    floor = max(1, -(-itemset_occurrences(dataset, min_size, max_size) // MINING_BUDGET))
    threshold = max(floor, int(max(1, supports[min(count, len(supports)) - 1])))
    transactions = pyfim_transactions(dataset)
    while True:
        found = _mine(dataset, transactions, threshold, min_size, max_size)
        if len(found) >= count or threshold == 1:
            break
        if threshold == floor:
            raise MissingEvidence(
                f"finding the {count} most frequent itemsets of {min_size}..{max_size} items would enumerate more "
                f"than {MINING_BUDGET:,} itemsets (records of up to {int(dataset.sizes.max())} items); "
                "lower the itemset sizes or K."
            )
        threshold = max(floor, min(threshold - 1, int(threshold * 0.7)))
    ranked = sorted(found.items(), key=lambda kv: (-kv[1], [label_sort_key(x) for x in kv[0]]))
    return ranked[:count]


def pair_supports(dataset: Dataset, labels: Sequence[str]) -> np.ndarray:
    """``S[i, j]`` = number of records holding both ``labels[i]`` and ``labels[j]``
    (``S[i, i]`` the support of ``labels[i]``); labels not in the dataset count 0."""
    from scipy import sparse

    column = np.full(dataset.n_items, -1, dtype=np.int64)
    for position, label in enumerate(labels):
        try:
            column[dataset.id_of(label)] = position
        except KeyError:
            pass
    cols = column[dataset.items]
    keep = cols >= 0
    rows = dataset.record_of_occurrence[keep]
    matrix = sparse.csr_matrix(
        (np.ones(int(keep.sum()), dtype=np.int64), (rows, cols[keep])), shape=(dataset.n_records, len(labels))
    )
    return np.asarray((matrix.T @ matrix).todense(), dtype=np.int64)


def itemset_counts(indptr: np.ndarray, items: np.ndarray, size: int, base: int) -> tuple[np.ndarray, np.ndarray]:
    """Every itemset of ``size`` items held by some record, as rows of an
    ``(n, size)`` array in ascending order, with its support. Records are CSR
    rows of distinct ascending ints in ``[0, base)``. The subsets of the records
    of one length are one fancy index of a table of index combinations; they are
    kept as int64 keys (:func:`privtool.arrays.row_keys`) when those fit, so only
    the keys of all records are held at once (a row sort otherwise)."""
    blocks = []
    encoded = True
    sizes = np.diff(indptr)
    for length in np.unique(sizes[sizes >= size]).tolist():
        starts = indptr[:-1][sizes == length]
        members = items[starts[:, None] + np.arange(length)]  # the records of this length, one per row
        combos = np.array(list(itertools.combinations(range(length), size)), dtype=np.int64)
        subsets = members[:, combos].reshape(-1, size).astype(np.int64)
        key = row_keys(subsets, base)
        encoded = key is not None
        blocks.append(subsets if key is None else key)
    if not encoded:
        rows, counts = np.unique(np.concatenate(blocks), axis=0, return_counts=True)
        return rows, counts.astype(np.int64)
    keys = np.sort(np.concatenate(blocks) if blocks else np.zeros(0, dtype=np.int64))
    starts = run_starts(keys)
    counts = np.diff(np.r_[starts, len(keys)]).astype(np.int64)
    distinct = keys[starts]
    rows = np.empty((len(distinct), size), dtype=np.int64)
    for j in range(size - 1, -1, -1):
        rows[:, j] = distinct % base
        distinct //= base
    return rows, counts


def itemset_supports(dataset: Dataset, itemsets: Sequence[Sequence[str]]) -> np.ndarray:
    """The support of each itemset (labels) in ``dataset``; 0 when one of its
    labels does not occur, the number of records for the empty itemset.
    Per-item record bitsets over the labels the itemsets name (plus one row of
    every record, for padding), then, per block of itemsets, one AND per
    position and one popcount: no Python per itemset or per occurrence."""
    labels = sorted({label for itemset in itemsets for label in itemset}, key=label_sort_key)
    position = {label: i for i, label in enumerate(labels)}
    column = np.full(dataset.n_items, -1, dtype=np.int64)
    for label in labels:
        try:
            column[dataset.id_of(label)] = position[label]
        except KeyError:
            pass
    cols = column[dataset.items]
    keep = cols >= 0
    n = dataset.n_records
    owners = np.r_[cols[keep], np.full(n, len(labels), dtype=np.int64)]
    members = np.r_[dataset.record_of_occurrence[keep], np.arange(n, dtype=np.int64)]
    bits = bitsets(owners, members, len(labels) + 1, n)
    width = max((len(itemset) for itemset in itemsets), default=0)
    table = np.full((len(itemsets), max(width, 1)), len(labels), dtype=np.int64)
    for i, itemset in enumerate(itemsets):
        table[i, : len(itemset)] = [position[label] for label in itemset]
    out = np.zeros(len(itemsets), dtype=np.int64)
    for start in range(0, len(itemsets), _SUPPORT_BLOCK):
        block = table[start : start + _SUPPORT_BLOCK]
        words = bits[block[:, 0]]
        for j in range(1, block.shape[1]):
            words &= bits[block[:, j]]
        out[start : start + len(block)] = np.bitwise_count(words).sum(axis=1)
    return out


_SUPPORT_BLOCK = 256
"""Itemsets per block of :func:`itemset_supports` (bounds its memory to 256
bitsets of the records)."""
