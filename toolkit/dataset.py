"""The transaction dataset: interned items in compressed sparse row form.

A :class:`Dataset` is immutable. Item labels (strings) are interned to ``int32``
ids ``0..n_items-1`` through the vocabulary ``labels``; ids follow
:func:`label_sort_key` order, so id order is the canonical label order. Record
``i`` holds ``items[indptr[i]:indptr[i+1]]``, sorted ascending and without
duplicates. Support counting is vectorised: nothing here creates a Python object
per item occurrence.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np


@functools.cache
def label_sort_key(label: str) -> tuple[int, int, str]:
    """Canonical order of item labels: integers numerically first, then text.

    Used everywhere an order is published (vocabulary ids, sub-records, term
    chunks), so that ``"9"`` sorts before ``"10"``. Cached: canonical
    ordering of a release calls it once per published item occurrence.
    """
    if label.isascii() and label.isdigit():
        return (0, int(label), "")
    return (1, 0, label)


@dataclass(frozen=True, eq=False)
class Dataset:
    """Records over an interned vocabulary, in CSR form.

    ``indptr`` has ``n_records + 1`` non-decreasing ``int64`` offsets into
    ``items`` (``int32`` ids into ``labels``). Build one with
    :meth:`from_records` or :meth:`from_csr`, which check the invariants.
    """

    indptr: np.ndarray
    items: np.ndarray
    labels: tuple[str, ...]
    _index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {label: i for i, label in enumerate(self.labels)})
        for array in (self.indptr, self.items):
            array.setflags(write=False)

    # ------------------------------------------------------------------ build
    @classmethod
    def from_records(cls, records: Iterable[Iterable[str]], labels: Sequence[str] | None = None) -> Dataset:
        """Intern label records. Duplicated items within a record are merged.

        ``labels`` fixes the vocabulary (and its order); by default it is every
        label seen, in :func:`label_sort_key` order.
        """
        rows = [list(r) for r in records]
        if labels is None:
            seen = {label for record in rows for label in record}
            labels = sorted(seen, key=label_sort_key)
        index = {label: i for i, label in enumerate(labels)}
        lengths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
        flat = np.fromiter((index[label] for r in rows for label in r), dtype=np.int32, count=int(lengths.sum()))
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        return cls.from_csr(indptr, flat, tuple(labels), normalise=True)

    @classmethod
    def from_csr(cls, indptr: np.ndarray, items: np.ndarray, labels: Sequence[str], normalise: bool = True) -> Dataset:
        """Wrap CSR arrays. With ``normalise`` each record is sorted and de-duplicated."""
        indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        items = np.ascontiguousarray(items, dtype=np.int32)
        if indptr.ndim != 1 or len(indptr) == 0 or indptr[0] != 0 or indptr[-1] != len(items):
            raise ValueError("indptr must start at 0 and end at len(items)")
        if np.any(np.diff(indptr) < 0):
            raise ValueError("indptr must be non-decreasing")
        if len(items) and (items.min() < 0 or items.max() >= len(labels)):
            raise ValueError("item id outside the vocabulary")
        if normalise and len(items):
            indptr, items = _sort_dedup(indptr, items)
        return cls(indptr, items, tuple(labels))

    # ------------------------------------------------------------- accessors
    @property
    def n_records(self) -> int:
        return len(self.indptr) - 1

    @property
    def n_items(self) -> int:
        """Size of the vocabulary (items that occur at least once after reading)."""
        return len(self.labels)

    @property
    def n_occurrences(self) -> int:
        return len(self.items)

    @cached_property
    def sizes(self) -> np.ndarray:
        """Number of items of each record."""
        return np.diff(self.indptr)

    @cached_property
    def supports(self) -> np.ndarray:
        """Support (number of records) of every item id."""
        return np.bincount(self.items, minlength=self.n_items).astype(np.int64)

    @cached_property
    def record_of_occurrence(self) -> np.ndarray:
        """For each position of ``items``, the record it belongs to."""
        return np.repeat(np.arange(self.n_records, dtype=np.int64), self.sizes)

    @cached_property
    def item_index(self) -> tuple[np.ndarray, np.ndarray]:
        """The transpose (CSC): ``(item_ptr, records)``; the records holding item
        ``j`` are ``records[item_ptr[j]:item_ptr[j+1]]``, ascending."""
        order = np.argsort(self.items, kind="stable")
        records = self.record_of_occurrence[order]
        item_ptr = np.zeros(self.n_items + 1, dtype=np.int64)
        np.cumsum(self.supports, out=item_ptr[1:])
        return item_ptr, records

    def record(self, i: int) -> np.ndarray:
        """Item ids of record ``i`` (a read-only view)."""
        return self.items[self.indptr[i] : self.indptr[i + 1]]

    def record_labels(self, i: int) -> list[str]:
        return [self.labels[j] for j in self.record(i)]

    def records_with(self, item: int) -> np.ndarray:
        """Ids of the records that contain ``item``."""
        item_ptr, records = self.item_index
        return records[item_ptr[item] : item_ptr[item + 1]]

    def id_of(self, label: str) -> int:
        """The id of ``label``; ``KeyError`` when the label is not in the vocabulary."""
        return self._index[label]

    def ids_of(self, labels: Iterable[str]) -> np.ndarray:
        return np.array([self._index[label] for label in labels], dtype=np.int32)

    def support(self, itemset: Iterable[int]) -> int:
        """Number of records that contain every item of ``itemset`` (ids)."""
        ids = sorted(set(int(i) for i in itemset))
        if not ids:
            return self.n_records
        common = self.records_with(ids[0])
        for item in ids[1:]:
            common = np.intersect1d(common, self.records_with(item), assume_unique=True)
            if len(common) == 0:
                break
        return len(common)

    def support_of_labels(self, labels: Iterable[str]) -> int:
        """:meth:`support` of an itemset given by labels; 0 when a label is not
        in the vocabulary (no record holds it)."""
        try:
            return self.support(self.ids_of(labels))
        except KeyError:
            return 0

    def to_label_records(self) -> list[list[str]]:
        """All records as lists of labels (for writers and small data)."""
        labels = self.labels
        flat = [labels[j] for j in self.items.tolist()]
        bounds = self.indptr.tolist()
        return [flat[bounds[i] : bounds[i + 1]] for i in range(self.n_records)]

    def subset(self, rows: Sequence[int] | np.ndarray) -> Dataset:
        """The records ``rows`` (in that order) over the same vocabulary."""
        rows = np.asarray(rows, dtype=np.int64)
        sizes = self.sizes[rows]
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(sizes, out=indptr[1:])
        if len(rows):
            starts = self.indptr[rows]
            offsets = np.arange(indptr[-1], dtype=np.int64) - np.repeat(indptr[:-1], sizes)
            items = self.items[np.repeat(starts, sizes) + offsets]
        else:
            items = np.zeros(0, dtype=np.int32)
        return Dataset(indptr, items, self.labels)

    def compact(self) -> Dataset:
        """The same records over only the labels that occur (ids renumbered)."""
        used = np.flatnonzero(self.supports > 0)
        if len(used) == self.n_items:
            return self
        remap = np.full(self.n_items, -1, dtype=np.int32)
        remap[used] = np.arange(len(used), dtype=np.int32)
        return Dataset(self.indptr, remap[self.items], tuple(self.labels[j] for j in used))

    def content_sha256(self) -> str:
        """SHA-256 of the canonical FIMI-like text of the records (labels, one
        record a line, items in canonical order): independent of the file format.
        Computed once per dataset (it is immutable)."""
        return self._content_sha256

    @cached_property
    def _content_sha256(self) -> str:
        digest = hashlib.sha256()
        for record in self.to_label_records():
            digest.update((" ".join(record) + "\n").encode("utf-8"))
        return digest.hexdigest()

    def __len__(self) -> int:
        return self.n_records

    def __eq__(self, other: object) -> bool:
        """Equal when the records hold the same labels in the same order."""
        if not isinstance(other, Dataset):
            return NotImplemented
        return self.to_label_records() == other.to_label_records()

    __hash__ = None  # type: ignore[assignment]


def _sort_dedup(indptr: np.ndarray, items: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sort items within each record and drop repeats, vectorised."""
    n = len(indptr) - 1
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    order = np.lexsort((items, rows))
    rows, items = rows[order], items[order]
    keep = np.ones(len(items), dtype=bool)
    keep[1:] = (rows[1:] != rows[:-1]) | (items[1:] != items[:-1])
    rows, items = rows[keep], items[keep]
    new_indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=new_indptr[1:])
    return new_indptr, np.ascontiguousarray(items, dtype=np.int32)
