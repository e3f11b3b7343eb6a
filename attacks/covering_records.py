"""How many published records cover a known itemset, for many itemsets at once.

Used by the ``linkage`` attack on ``generalized`` and ``sanitized`` releases
(:mod:`privtool.attacks.linkage`). A published record **covers** an original
item when one of its labels is the item or an ancestor of it in the release's
hierarchy (``generalized``, docs/formats.md: a record may hold a node and one of
its descendants, and either covers the item), or when it holds the item
(``sanitized``). The count of an itemset ``Q`` is the number of published
records, with multiplicity, that cover every item of ``Q``.

How it is counted, with no Python work per record or per item occurrence:

* The distinct published records become the rows of a 0/1 matrix over the
  **leaves** (the hierarchy's leaves, or the sanitized release's labels), row
  ``r`` marking the leaves that record covers, with the record's multiplicity
  ``w_r`` as its weight. A label covers a contiguous range of leaves (hierarchy
  nodes are numbered in preorder), so the matrix is built from ranges.
* Leaves whose columns are equal (covered by exactly the same records) answer
  every query the same way: they are merged into **classes**. A coarse
  generalization has few classes (1,704 of 3,340 leaves for an ``lgr`` k = 5
  release of bms-webview-2).
* The count of an itemset of one or two classes ``{a, b}`` is the entry
  ``G[a, b]`` of the weighted Gram matrix ``G = Mᵀ diag(w) M`` of the class
  matrix ``M`` (``G[a, a]`` for one class). ``G`` is computed once: with dense
  BLAS in blocks of records when the class matrix is dense (generalized
  releases, whose records cover hundreds of leaves each), else as a sparse
  product (sanitized releases, short records); the sparse ``G`` is looked up by
  sorted keys. Float sums of integer weights are exact below 2**53 and float32
  ones below 2**24; the precision is chosen from the total weight.
* An itemset of three or more classes intersects the classes' sorted record
  lists (one query at a time; the default adversary knows at most ``m = 2``).

An item that no published record covers (not a leaf, or never published) has
count 0. A published label missing from the hierarchy is an
:class:`~privtool.errors.InputError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from privtool.arrays import concat_ranges, lookup_sorted

DENSE_ENTRIES = 1 << 25
"""Largest class matrix (records x classes) counted with dense BLAS."""
DENSE_CLASSES = 4096
"""Most classes for a dense Gram matrix (its size is the square of this)."""
BLAS_SPEEDUP = 64
"""The dense product is used when it does fewer than this many times the sparse
product's multiply-adds. Measured on the lgr k = 5 release of bms-webview-2:
23 times the work, 0.5 s dense against 2.9 s sparse (about 140 times faster per
multiply-add); the threshold leaves a margin."""
BLOCK_ENTRIES = 1 << 22
"""Entries of one block of records of the dense class matrix."""
FLOAT32_EXACT = 1 << 24


class CoveringRecordCounter:
    """``counter(query)`` / ``counter.many(queries)``: the number of published
    records (with multiplicity) covering every item of each query (module
    docstring). Picklable; built once, answered anywhere."""

    def __init__(self, records: Sequence[Sequence[str]], hierarchy: dict[str, Any] | None = None) -> None:
        from scipy import sparse

        distinct: dict[tuple[str, ...], int] = {}
        for record in records:
            key = tuple(record)
            distinct[key] = distinct.get(key, 0) + 1
        weights = np.fromiter(distinct.values(), dtype=np.int64, count=len(distinct))
        covered, leaf_labels = _covered_leaves(list(distinct), hierarchy)
        columns = covered.tocsc()
        columns.sort_indices()
        class_of_leaf, representatives = _leaf_classes(columns)
        self.class_of = {label: int(c) for label, c in zip(leaf_labels, class_of_leaf, strict=False) if c >= 0}
        classes = sparse.csc_matrix(columns[:, representatives])
        self.n_classes = classes.shape[1]
        self.weights = weights
        self.class_rows = [
            classes.indices[classes.indptr[c] : classes.indptr[c + 1]].astype(np.int64) for c in range(self.n_classes)
        ]
        self._gram(classes.tocsr(), weights)

    def _gram(self, classes: Any, weights: np.ndarray) -> None:
        """``G = Mᵀ diag(w) M``: a dense array (:attr:`dense`) or sorted keys
        ``a * n_classes + b`` with their values (:attr:`keys`, :attr:`values`)."""
        n, c = classes.shape
        row_nnz = np.diff(classes.indptr)
        sparse_work = int((row_nnz.astype(np.int64) ** 2).sum())
        self.dense: np.ndarray | None = None
        if n * c <= DENSE_ENTRIES and c <= DENSE_CLASSES and n * c * c < BLAS_SPEEDUP * sparse_work:
            dtype = np.float32 if weights.sum() < FLOAT32_EXACT else np.float64
            gram = np.zeros((c, c), dtype=dtype)
            step = max(1, BLOCK_ENTRIES // max(c, 1))
            for start in range(0, n, step):
                block = classes[start : start + step].toarray().astype(dtype)
                gram += (block * weights[start : start + step, None].astype(dtype)).T @ block
            self.dense = np.rint(gram).astype(np.int64)
            return
        from scipy import sparse

        weighted = sparse.csr_matrix(classes.multiply(weights[:, None]), dtype=np.int64)
        gram = (weighted.T.tocsr() @ sparse.csr_matrix(classes, dtype=np.int64)).tocoo()
        keys = gram.row.astype(np.int64) * c + gram.col
        order = np.argsort(keys)
        self.keys, self.values = keys[order], gram.data[order].astype(np.int64)

    def _pair_counts(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``G[a, b]`` for arrays of class ids."""
        if self.dense is not None:
            return self.dense[a, b]
        keys = a * self.n_classes + b
        if not len(self.keys):
            return np.zeros(len(keys), dtype=np.int64)
        at, found = lookup_sorted(self.keys, keys)
        return np.where(found, self.values[at], 0)

    def many(self, queries: Sequence[Sequence[str]]) -> list[int]:
        """The count of each query (a non-empty sequence of item labels), in order."""
        class_of = self.class_of
        first = np.empty(len(queries), dtype=np.int64)
        second = np.empty(len(queries), dtype=np.int64)
        wide: list[int] = []
        for i, query in enumerate(queries):
            if len(query) <= 2:
                first[i] = class_of.get(query[0], -1)
                second[i] = class_of.get(query[-1], -1)
            else:
                first[i] = second[i] = -1
                wide.append(i)
        known = (first >= 0) & (second >= 0)
        counts = np.zeros(len(queries), dtype=np.int64)
        counts[known] = self._pair_counts(first[known], second[known])
        for i in wide:
            counts[i] = self._wide_count(queries[i])
        return counts.tolist()

    def _wide_count(self, query: Sequence[str]) -> int:
        """The count of a query of three or more items: intersect its classes' records."""
        ids = {self.class_of.get(item, -1) for item in query}
        if -1 in ids:
            return 0
        lists = sorted((self.class_rows[c] for c in ids), key=len)
        common = lists[0]
        for other in lists[1:]:
            common = np.intersect1d(common, other, assume_unique=True)
        return int(self.weights[common].sum())

    def __call__(self, query: Sequence[str]) -> int:
        return self.many([query])[0]


def _leaf_classes(columns: Any) -> tuple[np.ndarray, np.ndarray]:
    """Leaves (columns of a CSC matrix with sorted indices) grouped by equal
    columns: the class of each leaf (-1 for a leaf no record covers) and the
    first leaf of each class."""
    class_of_leaf = np.full(columns.shape[1], -1, dtype=np.int64)
    class_of_rows: dict[bytes, int] = {}
    representatives: list[int] = []
    for leaf in range(columns.shape[1]):
        rows = columns.indices[columns.indptr[leaf] : columns.indptr[leaf + 1]]
        if len(rows):
            class_of_leaf[leaf] = class_of_rows.setdefault(rows.tobytes(), len(class_of_rows))
            if class_of_leaf[leaf] == len(representatives):
                representatives.append(leaf)
    return class_of_leaf, np.array(representatives, dtype=np.int64)


def _covered_leaves(records: list[tuple[str, ...]], hierarchy: dict[str, Any] | None) -> tuple[Any, list[str]]:
    """The 0/1 matrix (records x leaves, scipy CSR) of the leaves each record
    covers, and the leaves' labels. Without a hierarchy every label is a leaf
    covering itself."""
    from scipy import sparse

    label_ids: dict[str, int] = {}
    rows = np.repeat(np.arange(len(records), dtype=np.int64), [len(r) for r in records])
    labels = np.fromiter(
        (label_ids.setdefault(label, len(label_ids)) for r in records for label in r), dtype=np.int64, count=len(rows)
    )
    if hierarchy is None:
        leaf_labels = list(label_ids)
        start, stop = np.arange(len(label_ids), dtype=np.int64), np.arange(1, len(label_ids) + 1, dtype=np.int64)
    else:
        from privtool.hierarchy import Hierarchy

        tree = Hierarchy.from_json(hierarchy)
        leaves_before = np.concatenate([[0], np.cumsum(tree.is_leaf)])  # leaves preceding each node in preorder
        nodes = np.fromiter((tree.node_id(label) for label in label_ids), dtype=np.int64, count=len(label_ids))
        start, stop = leaves_before[nodes], leaves_before[tree.last[nodes] + 1]
        leaf_labels = list(tree.leaf_labels)
    length = (stop - start)[labels]
    cols = concat_ranges(start[labels], length)
    matrix = sparse.csr_matrix(
        (np.ones(len(cols), dtype=np.int8), (np.repeat(rows, length), cols)), shape=(len(records), len(leaf_labels))
    )
    matrix.sum_duplicates()
    matrix.data[:] = 1  # a record holding a node and its descendant covers the descendant once
    return matrix, leaf_labels
