"""Horizontal partitioning: HORPART and the small-cluster strategies.

Sources: Terrovitis et al., PVLDB 2012, Algorithm HORPART (as transcribed in
``papers/disassociation-horpart-verpart-refine.txt`` §3.1) and the strategies
paper (``papers/disassociation-horizontal-strategies.txt``, Algorithms 1-4,
§4-5). Every variant is the same depth-first split loop; they differ only in
what happens to a part with fewer than k records:

* ``horpart`` (the *abandon* rule: the original algorithm as the strategies
  paper describes and runs it, §4, Tables 5-6): a split leaving a side with
  fewer than k records is abandoned and the undivided part is a cluster;
* ``horpart-literal`` (Terrovitis's Algorithm HORPART as printed, which has no
  k in it): every split is made; a part with fewer than k records is a cluster
  of its own;
* ``suppression`` (Algorithm 2): the small part is suppressed;
* ``adding`` (Algorithm 3): the small part joins the next part waiting on the
  queue (which is split later), or the last saved cluster when none waits. A
  part carved off with its term (processed first) has its own remainder, its
  sibling, as the next part on the queue;
* ``adding-skip-sibling`` (another reading of Algorithm 3, line 8, "the second
  cluster in Q"): a part carved off with its term skips its sibling and joins
  the part waiting after it;
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

import itertools

import numpy as np

from privtool.arrays import offsets_of, sort_int, stable_order
from privtool.components import Partitioning
from privtool.dataset import Dataset

STRATEGIES = ("horpart", "horpart-literal", "suppression", "adding", "adding-skip-sibling", "remaining-list")
KEEP_SMALL = ("horpart", "horpart-literal")
"""Strategies that publish a part with fewer than k records as a cluster."""


OWN_INDEX_ABOVE = 1.0
"""A part looks a term's holders up in its own transpose, built once, as soon as
the dataset's transpose lists more than this many holders of the term per
occurrence in the part, :data:`OWN_INDEX_BASE` occurrences added (tests set 0
and infinity to force either way)."""

OWN_INDEX_BASE = 4096
"""What building a part's transpose costs besides its occurrences, in holders
looked up in the dataset's transpose: a small part (tens of records, a few
carves left) saves less than that by having its own. bms-webview-2 partition
CPU about 5% less than with none; no change at 1M records (scale.md,
"Session 12: HORPART and VERPART")."""


class _Part:
    """A group of records waiting on the stack: the records of ``rows`` whose
    ``owner`` is its ``id``. ``rows`` also lists records carved off into a
    child part since, which may come back: the stack is a chain of parts each
    carved from the one below, so whatever joins a part (a small part added back
    under ADDING) comes from ``rows``. ``counts`` holds the support of every term
    in the part, zero for the terms in ``ignore``; ``index``, once built, is the
    part's own transpose over ``rows`` (:func:`transpose_of`)."""

    __slots__ = ("counts", "id", "ignore", "index", "rows", "size")

    def __init__(self, pid: int, rows: np.ndarray, counts: np.ndarray, ignore: tuple[int, ...]) -> None:
        self.id, self.rows, self.size, self.counts, self.ignore = pid, rows, len(rows), counts, ignore
        self.index: tuple[np.ndarray, np.ndarray] | None = None


def items_of(dataset: Dataset, rows: np.ndarray) -> np.ndarray:
    """The item ids of the records ``rows``, concatenated in that order."""
    sizes = dataset.sizes[rows]
    ends = sizes.cumsum()  # array methods: this runs once per carve, and numpy's functions add a call each
    total = int(ends[-1]) if len(ends) else 0
    return dataset.items[np.arange(total, dtype=np.int64) + (dataset.indptr[rows] - (ends - sizes)).repeat(sizes)]


def occurrences(dataset: Dataset, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Item ids of the records ``rows`` and, for each, its position in ``rows``."""
    return items_of(dataset, rows), np.repeat(np.arange(len(rows), dtype=np.int64), dataset.sizes[rows])


SLAB_RECORDS = 1 << 16
"""Records that :func:`item_counts` and :func:`transpose_of` handle in one
numpy pass: a larger part goes in slabs of this many, so that their
temporaries (a few int64 arrays per occurrence) do not grow with the part. A
temporary past glibc's largest mmap threshold (32 MiB) is a fresh mapping,
faulted in and zeroed anew each time: at 5M records the parts near the root
make a few of them per split (docs/results/scale.md, "Session 11:
disassociate's growth")."""


WHOLE_TRANSPOSE_OCCURRENCES = 1 << 20
"""The split loop transposes a dataset of at most this many item occurrences
in one pass (:meth:`Dataset.transpose`: items in place, a few int64
temporaries of 8 MiB at most), a larger one :data:`SLAB_RECORDS` records at a
time (:func:`transpose_of`: about three times the CPU on bms-webview-2, which
has more than :data:`SLAB_RECORDS` records)."""


def item_counts(dataset: Dataset, rows: np.ndarray) -> np.ndarray:
    """The support of every item id in the records ``rows`` (int64),
    :data:`SLAB_RECORDS` records at a time."""
    most = SLAB_RECORDS
    if len(rows) <= most:
        return np.bincount(items_of(dataset, rows), minlength=dataset.n_items).astype(np.int64, copy=False)
    counts = np.zeros(dataset.n_items, dtype=np.int64)
    for first in range(0, len(rows), most):
        counts += np.bincount(items_of(dataset, rows[first : first + most]), minlength=dataset.n_items)
    return counts


def transpose_of(dataset: Dataset, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The transpose of the records ``rows``: ``(item_ptr, holders)``, the
    records of ``rows`` holding item ``j`` being ``holders[item_ptr[j]:item_ptr[j + 1]]``
    (in the order of ``rows``).

    :data:`SLAB_RECORDS` records at a time: each slab's holders, in order
    within each item, written after those of the slabs before it; only the
    result grows with ``rows``."""
    most = SLAB_RECORDS
    if len(rows) <= most:
        items, local = occurrences(dataset, rows)
        item_ptr = offsets_of(np.bincount(items, minlength=dataset.n_items))
        return item_ptr, rows[local[stable_order(items, dataset.n_items)]]
    item_ptr = offsets_of(item_counts(dataset, rows))
    holders = np.empty(int(item_ptr[-1]), dtype=rows.dtype)
    cursor = item_ptr[:-1].copy()  # where the slab's first holder of each item goes
    for first in range(0, len(rows), most):
        slab = rows[first : first + most]
        items, local = occurrences(dataset, slab)
        order = stable_order(items, dataset.n_items)
        counts = np.bincount(items, minlength=dataset.n_items)
        by_item = items[order]
        # each occurrence's rank among the slab's holders of its item:
        rank = np.arange(len(order), dtype=np.int64) - offsets_of(counts)[by_item]
        holders[cursor[by_item] + rank] = slab[local[order]]
        cursor += counts
    return item_ptr, holders


class _Splitter:
    """The split loop's state: which part owns each record, and the parts."""

    def __init__(self, dataset: Dataset) -> None:
        self.dataset = dataset
        self.owner = np.zeros(dataset.n_records, dtype=np.int64)
        # not cached on the dataset: freed with the splitter
        whole = len(dataset.items) <= WHOLE_TRANSPOSE_OCCURRENCES
        rows = np.arange(dataset.n_records, dtype=np.int64)
        item_ptr, self.item_rows = dataset.transpose() if whole else transpose_of(dataset, rows)
        self.item_ptr: list[int] = item_ptr.tolist()
        self.next_id = 0

    def counts(self, rows: np.ndarray, ignore: tuple[int, ...]) -> np.ndarray:
        """Term supports in ``rows``, zero on ``ignore``."""
        counts = item_counts(self.dataset, rows)
        if ignore:
            counts[list(ignore)] = 0
        return counts

    def part(self, rows: np.ndarray, ignore: tuple[int, ...], counts: np.ndarray | None = None) -> _Part:
        """A new part owning ``rows``."""
        self.next_id += 1
        self.owner[rows] = self.next_id
        return _Part(self.next_id, rows, self.counts(rows, ignore) if counts is None else counts, ignore)

    def rows(self, part: _Part) -> np.ndarray:
        """The records the part owns."""
        return part.rows[self.owner[part.rows] == part.id]

    def add(self, part: _Part, rows: np.ndarray) -> None:
        """Give ``part`` the records ``rows`` (of ``part.rows``: see :class:`_Part`)."""
        part.counts += self.counts(rows, part.ignore)
        part.size += len(rows)
        self.owner[rows] = part.id

    def holders(self, part: _Part, term: int) -> np.ndarray:
        """Records of ``part.rows`` (and maybe others) holding ``term``: from the
        dataset's transpose while it lists few enough of them (:data:`OWN_INDEX_ABOVE`),
        else from the part's own transpose, built once (by then
        no child of the part is on the stack, so whatever joins it later is of
        its records now: ``rows`` shrinks to them)."""
        if part.index is None:
            holders = self.item_rows[self.item_ptr[term] : self.item_ptr[term + 1]]
            few = OWN_INDEX_ABOVE * OWN_INDEX_BASE  # as few as that: no need to count the part's occurrences
            if len(holders) <= few or len(holders) <= OWN_INDEX_ABOVE * (int(part.counts.sum()) + OWN_INDEX_BASE):
                return holders
            part.rows = self.rows(part)
            part.index = transpose_of(self.dataset, part.rows)
        item_ptr, holders = part.index
        return holders[item_ptr[term] : item_ptr[term + 1]]

    def carve(self, part: _Part, term: int) -> tuple[np.ndarray, np.ndarray]:
        """Take the records holding ``term`` out of ``part``, which keeps the rest
        and ignores ``term`` from now on; returns their rows and term counts
        (zero on the part's ignore set and ``term``).

        The taken records hold each term the part counts at most as often as
        the part, and the part counts zero of the terms it ignores: their
        counts are the minimum of their raw counts and the part's, with no
        lookup of the ignore set."""
        holders = self.holders(part, term)
        taken = holders[self.owner[holders] == part.id]
        counts = np.minimum(item_counts(self.dataset, taken), part.counts)
        part.counts -= counts
        counts[term] = 0
        part.size -= len(taken)
        part.ignore = (*part.ignore, term)
        self.owner[taken] = 0
        return taken, counts


def sorted_clusters(saved: list[np.ndarray], n_records: int) -> list[np.ndarray]:
    """Each cluster's record positions in ascending order: one sort of
    ``cluster * n_records + row`` over all of them instead of one per cluster."""
    if not saved:
        return []
    sizes = np.fromiter(map(len, saved), dtype=np.int64, count=len(saved))
    keys = np.repeat(np.arange(len(saved), dtype=np.int64) * n_records, sizes) + np.concatenate(saved)
    rows = sort_int(keys, runs=True) % n_records
    return [rows[a:b] for a, b in itertools.pairwise(offsets_of(sizes).tolist())]  # np.split: 8x the time


def partition(dataset: Dataset, k: int, max_cluster_size: int, strategy: str) -> Partitioning:
    """Partition the records of ``dataset`` with ``strategy`` (one of :data:`STRATEGIES`).

    Returns clusters (record positions, ascending within each cluster) in the
    order the split loop saves them, and the suppressed positions.

    Three shortcuts give the loop's result without walking it: once the most
    frequent term of a part has support below k, HORPART abandons every further
    split and ADDING adds every carved part straight back (it is the next part on
    the stack), so the part is final as it is; the other strategies dispose of
    such a carved part at once instead of pushing it (HORPART-LITERAL saves it,
    ADDING-SKIP-SIBLING adds it to the part waiting under its sibling); and a
    carved part of k to ``max_cluster_size`` records, which would be popped
    next and saved as it is, is saved at once (most carves on
    bms-webview-2: no part, owner or count bookkeeping for it).
    ``notes["low_support_records"]`` counts the records of the parts made final
    by the first shortcut (more than ``max_cluster_size`` records, most
    frequent unused term below k): on those parts HORPART and ADDING agree.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}")
    split = _Splitter(dataset)
    saved: list[np.ndarray] = []
    suppressed: list[np.ndarray] = []
    remaining: list[np.ndarray] = []
    rounds = 0
    round_size = dataset.n_records  # records the current remaining-list round started from
    root = np.arange(dataset.n_records, dtype=np.int64)
    stack = [split.part(root, (), dataset.supports.astype(np.int64))]

    def dispose_small(rows: np.ndarray) -> None:
        if strategy == "horpart-literal":
            saved.append(rows)
        elif strategy == "suppression":
            suppressed.append(rows)
        elif strategy == "remaining-list":
            remaining.append(rows)
        elif stack:  # adding: into the next part on the stack
            split.add(stack[-1], rows)
        elif saved:  # adding, nothing waits: into the last saved cluster
            saved[-1] = np.concatenate([saved[-1], rows])
        else:
            saved.append(rows)

    low_support = 0
    while stack:
        part = stack.pop()
        final = True
        while part.size > max_cluster_size and len(part.counts):
            term = int(part.counts.argmax())
            support = int(part.counts[term])
            if support == 0:
                break
            if support == part.size:  # every record holds it: not a split
                part.counts[term] = 0
                part.ignore = (*part.ignore, term)
                continue
            if strategy in ("horpart", "adding") and support < k:
                low_support += part.size
                break
            if strategy == "horpart" and part.size - support < k:
                break
            taken, counts = split.carve(part, term)
            if support < k:
                dispose_small(taken)
                continue
            if support <= max_cluster_size:  # final at once: saved as it would be once pushed and popped
                saved.append(taken)
                continue
            stack.append(part)
            stack.append(split.part(taken, part.ignore, counts))
            final = False
            break
        if final:
            rows = split.rows(part)
            if len(rows) >= k or strategy in KEEP_SMALL:
                saved.append(rows)
            else:
                dispose_small(rows)
        if not stack and remaining:
            rest = np.concatenate(remaining)
            remaining = []
            if len(rest) >= k and len(rest) < round_size:
                rounds += 1
                round_size = len(rest)
                stack.append(split.part(rest, ()))
            elif saved:
                saved[-1] = np.concatenate([saved[-1], rest])
            else:
                saved.append(rest)
    clusters = sorted_clusters(saved, dataset.n_records)
    gone = np.sort(np.concatenate(suppressed)) if suppressed else np.zeros(0, dtype=np.int64)
    notes: dict[str, int] = {"remaining_list_rounds": rounds} if strategy == "remaining-list" else {}
    if strategy in ("horpart", "adding"):
        notes["low_support_records"] = low_support
    return Partitioning(clusters=clusters, suppressed=gone, notes=notes)
