"""Horizontal partitioning: HORPART and the three small-cluster strategies.

Sources: Terrovitis et al., PVLDB 2012, Algorithm HORPART (transcribed in
``papers/disassociation-horpart-verpart-refine.txt`` §3.1) and the strategies
paper (``papers/disassociation-horizontal-strategies.txt``, Algorithms 1-4,
§4-5). Every variant is the same depth-first split loop; they differ only in
what happens to a part with fewer than k records:

* ``horpart`` (the original as the strategies paper describes it, §4): a split
  leaving a side with fewer than k records is abandoned and the undivided
  cluster is returned;
* ``suppression`` (Algorithm 2): the small part is suppressed;
* ``adding`` (Algorithm 3): the small part joins the next part waiting on the
  queue (which is split later), or the last saved cluster when none waits;
* ``remaining-list`` (Algorithm 4, reconstructed from the prose): small parts
  go to a list that is partitioned again, from scratch, once the queue is empty;
  a list smaller than k (or one that a round could not shrink) joins the last
  saved cluster.

Choices where the papers are silent or contradict themselves (all documented in
``docs/algorithms/disassociation.md``):

* a part is final when it has at most ``max_cluster_size`` records (the
  strategies paper's prose and worked example; Algorithm 1's line 1 writes
  ``|D| < maxClusterSize``);
* the split term is the most frequent term not yet used on the path from the
  root (``ignore`` is per branch, as in Algorithm 1); ties go to the smallest
  item id, i.e. the canonical label order;
* a "split" whose term occurs in every record is no split: the part continues
  with that term ignored;
* the queue is a stack (the recursion order of Algorithm 1: the records with
  the term first); "the second cluster on Q" is the next part on the stack.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from privtool.components import Partitioning
from privtool.dataset import Dataset

STRATEGIES = ("horpart", "suppression", "adding", "remaining-list")


@dataclass
class _Part:
    rows: np.ndarray
    ignore: tuple[int, ...]


def occurrences(dataset: Dataset, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Item ids of the records ``rows`` and, for each, its position in ``rows``."""
    sizes = dataset.sizes[rows]
    total = int(sizes.sum())
    local = np.repeat(np.arange(len(rows), dtype=np.int64), sizes)
    ends = np.cumsum(sizes)
    offsets = np.arange(total, dtype=np.int64) - np.repeat(ends - sizes, sizes)
    items = dataset.items[np.repeat(dataset.indptr[rows], sizes) + offsets]
    return items, local


def most_frequent_term(items: np.ndarray, ignore: tuple[int, ...], n_items: int) -> int:
    """The most frequent id in ``items`` outside ``ignore`` (smallest id on ties),
    or -1 when there is none."""
    if len(items) == 0:
        return -1
    if len(items) * 8 < n_items:
        ids, counts = np.unique(items, return_counts=True)
        if ignore:
            counts[np.isin(ids, np.asarray(ignore, dtype=ids.dtype))] = 0
        best = int(np.argmax(counts))
        return int(ids[best]) if counts[best] > 0 else -1
    counts = np.bincount(items, minlength=n_items)
    if ignore:
        counts[list(ignore)] = 0
    best = int(np.argmax(counts))
    return best if counts[best] > 0 else -1


def _split(dataset: Dataset, part: _Part) -> tuple[int, np.ndarray, np.ndarray]:
    """(term, records with it, records without it); term -1 when no term is left."""
    items, local = occurrences(dataset, part.rows)
    term = most_frequent_term(items, part.ignore, dataset.n_items)
    if term < 0:
        return term, part.rows, part.rows[:0]
    has = np.zeros(len(part.rows), dtype=bool)
    has[local[items == term]] = True
    return term, part.rows[has], part.rows[~has]


def partition(dataset: Dataset, k: int, max_cluster_size: int, strategy: str) -> Partitioning:
    """Partition the records of ``dataset`` with ``strategy`` (one of :data:`STRATEGIES`).

    Returns clusters (record positions, ascending within each cluster) in the
    order the split loop saves them, and the suppressed positions.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}")
    saved: list[np.ndarray] = []
    suppressed: list[np.ndarray] = []
    remaining: list[np.ndarray] = []
    rounds = 0
    round_size = dataset.n_records  # records the current remaining-list round started from
    stack = [_Part(np.arange(dataset.n_records, dtype=np.int64), ())]
    while stack:
        part = stack.pop()
        if len(part.rows) <= max_cluster_size:
            if len(part.rows) >= k or strategy == "horpart":
                saved.append(part.rows)
            elif strategy == "suppression":
                suppressed.append(part.rows)
            elif strategy == "adding":
                if stack:
                    stack[-1] = _Part(np.concatenate([stack[-1].rows, part.rows]), stack[-1].ignore)
                elif saved:
                    saved[-1] = np.concatenate([saved[-1], part.rows])
                else:
                    saved.append(part.rows)
            else:
                remaining.append(part.rows)
        else:
            term, with_term, without = _split(dataset, part)
            ignore = part.ignore + (term,)
            if term < 0:
                saved.append(part.rows)
            elif len(without) == 0:
                stack.append(_Part(with_term, ignore))
            elif strategy == "horpart" and (len(with_term) < k or len(without) < k):
                saved.append(part.rows)
            else:
                stack.append(_Part(without, ignore))
                stack.append(_Part(with_term, ignore))
        if not stack and remaining:
            rest = np.concatenate(remaining)
            remaining = []
            if len(rest) >= k and len(rest) < round_size:
                rounds += 1
                round_size = len(rest)
                stack.append(_Part(rest, ()))
            elif saved:
                saved[-1] = np.concatenate([saved[-1], rest])
            else:
                saved.append(rest)
    clusters = [np.sort(rows) for rows in saved]
    gone = np.sort(np.concatenate(suppressed)) if suppressed else np.zeros(0, dtype=np.int64)
    notes = {"remaining_list_rounds": rounds} if strategy == "remaining-list" else {}
    return Partitioning(clusters=clusters, suppressed=gone, notes=notes)
