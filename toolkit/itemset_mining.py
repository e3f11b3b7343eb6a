"""Frequent-itemset queries shared by utility metrics: the top-K most frequent
itemsets of a dataset and the supports of all pairs of a set of items.

Itemsets are returned as tuples of labels in canonical order, so results from
datasets with different vocabularies (an original and a reconstruction) compare
directly. Mining uses pyfim's FP-growth (imported lazily). pyfim 6.28 leaves
out every itemset made only of items present in *every* record (ALGORITHM-NOTES,
section 8, saw it for singletons; it holds for larger sets too: on the records
``{1,2}, {1,2}`` it reports nothing), so one empty record is appended before
mining: no item is then universal and no absolute support changes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

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
