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
import itertools
import operator
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from .arrays import concat_ranges, offsets_of, stable_order

TEXT_BLOCK_BYTES = 1 << 24
"""Bytes of byte table gathered per block of :meth:`Dataset.content_text` (and of the hash)."""

Item = str | int
"""An item as :meth:`Dataset.from_records` takes it: a label, or an integer
(``int`` or a numpy integer) that stands for its decimal text."""


@functools.cache
def label_sort_key(label: str) -> tuple[int, int, str]:
    """Canonical order of item labels: integers numerically first, then text.

    Used everywhere an order is published (vocabulary ids, sub-records, term
    chunks), so that ``"9"`` sorts before ``"10"``. The order is total:
    ``"7"`` and ``"007"`` tie on their value and are then ordered as text, so no
    order ever falls back on the input's. Cached: canonical ordering of a
    release calls it once per published item occurrence.
    """
    if label.isascii() and label.isdigit():
        return (0, int(label), label)
    return (1, 0, label)


def record_lists(records: Iterable[Iterable[Item]]) -> list[list[Item]]:
    """Every record as a list, refusing input whose iteration would silently
    mean something else: a string or a DataFrame where the records are expected
    (characters, column names), a string or a dict where a record is expected."""
    if isinstance(records, (str, bytes, bytearray)):
        raise TypeError(f"expected an iterable of records, each an iterable of items, not {describe_value(records)}.")
    if type(records).__module__.partition(".")[0] == "pandas" and hasattr(records, "columns"):
        raise TypeError(
            "from_records got a pandas DataFrame, whose iteration yields its column names; use "
            "Dataset.from_pandas(frame, transaction=..., item=...) for a long frame or "
            "Dataset.from_pandas(frame) for a one-hot frame."
        )
    rows = []
    for position, record in enumerate(records):
        if isinstance(record, (str, bytes, bytearray, dict)):
            hint = f"; write [{record!r}] for a record of one item" if isinstance(record, str) else ""
            raise TypeError(f"record {position} is {describe_value(record)}, not a collection of items{hint}.")
        try:
            rows.append(list(record))
        except TypeError:
            raise TypeError(f"record {position} is {describe_value(record)}, not a collection of items.") from None
    return rows


def item_labels(rows: Sequence[Sequence[Item]]) -> dict[Item, str]:
    """The label of every distinct item of ``rows``: a string is its own label,
    an integer its decimal text.

    Items must all be strings or all integers; the first item that is neither
    (or that mixes the two kinds), an empty label or one that is not valid
    Unicode raises naming its record. Checks run over the types and the
    distinct items, not over every occurrence in Python."""
    kinds = set(map(type, itertools.chain.from_iterable(rows)))
    bad = [kind for kind in kinds if not (issubclass(kind, str) or _is_integer_type(kind))]
    if bad:
        position, item = _first(rows, lambda x: type(x) in bad)
        raise TypeError(f"record {position} holds {describe_value(item)}; items must be strings or integers.")
    texts = [kind for kind in kinds if issubclass(kind, str)]
    if texts and len(texts) < len(kinds):
        position, item = _first(rows, lambda x: not isinstance(x, str))
        raise TypeError(
            f"record {position} holds the integer {item!r} among string items; give every item as a string "
            "or every item as an integer."
        )
    distinct = set(itertools.chain.from_iterable(rows))
    if not texts:
        return {item: str(int(item)) for item in distinct}
    label_of = {item: str(item) for item in distinct}
    for item, label in label_of.items():
        if not label:
            raise ValueError(
                f"record {_first(rows, functools.partial(operator.eq, item))[0]} holds an empty item label."
            )
        if not label.isascii():
            try:
                label.encode("utf-8")
            except UnicodeEncodeError:
                position = _first(rows, functools.partial(operator.eq, item))[0]
                raise ValueError(
                    f"record {position} holds the item {label!r}, which is not valid Unicode text (a lone surrogate)."
                ) from None
    return label_of


def _is_integer_type(kind: type) -> bool:
    return issubclass(kind, (int, np.integer)) and not issubclass(kind, bool)


def _first(rows: Sequence[Sequence[Item]], wanted: Callable[[Any], bool]) -> tuple[int, Any]:
    """The position of the first record holding a ``wanted`` item, and that item."""
    for position, row in enumerate(rows):
        for item in row:
            if wanted(item):
                return position, item
    raise AssertionError("no record holds the item")  # callers only ask for items they have seen


def describe_value(value: object) -> str:
    """A few words naming ``value`` and its kind, for error sentences
    (``"the float nan"``, ``"None (a missing value)"``)."""
    if value is None:
        return "None (a missing value)"
    if isinstance(value, (bool, np.bool_)):
        return f"the bool {bool(value)}"
    if isinstance(value, (float, np.floating)):
        return f"the float {float(value)!r}"
    if isinstance(value, (bytes, bytearray)):
        return f"the bytes {bytes(value)[:40]!r} (decode them to str first)"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    if isinstance(value, (list, tuple, set, frozenset, np.ndarray)):
        return f"a {type(value).__name__}"
    return f"{repr(value)[:40]} of type {type(value).__name__}"


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

    def __post_init__(self) -> None:
        for array in (self.indptr, self.items):
            array.setflags(write=False)

    @cached_property
    def _index(self) -> dict[str, int]:
        """Label -> id, built on first use: most datasets (one cluster of a
        partitioning, a subset) never look a label up."""
        return {label: i for i, label in enumerate(self.labels)}

    # ------------------------------------------------------------------ build
    @classmethod
    def from_records(cls, records: Iterable[Iterable[Item]], labels: Sequence[str] | None = None) -> Dataset:
        """Intern records of items. Duplicated items within a record are merged.

        Items are all strings (labels) or all integers (``int`` or numpy
        integers, labelled by their decimal text: ``7`` becomes ``"7"``, and
        reading the labels back gives ``"7"``). Anything that could be mangled
        silently raises instead, in one sentence naming the record: a string or
        a pandas DataFrame where the records are expected, a string where a
        record is expected, a float, ``None``, a bool, bytes, a nested
        collection, an empty label, or strings mixed with integers
        (:class:`TypeError`, or :class:`ValueError` for a bad value of a good
        type). ``labels`` fixes the vocabulary (and its order); by default it
        is every label seen, in :func:`label_sort_key` order.
        """
        rows = record_lists(records)
        label_of = item_labels(rows)
        if labels is None:
            labels = sorted(set(label_of.values()), key=label_sort_key)
        index = {label: i for i, label in enumerate(labels)}
        unknown = {item for item, label in label_of.items() if label not in index}
        if unknown:
            position, item = _first(rows, unknown.__contains__)
            raise ValueError(f"record {position} holds the item {item!r}, which is not in the given labels.")
        lookup = {item: index[label] for item, label in label_of.items()}
        lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
        flat = np.fromiter(
            map(lookup.__getitem__, itertools.chain.from_iterable(rows)), dtype=np.int32, count=int(lengths.sum())
        )
        return cls.from_csr(offsets_of(lengths), flat, tuple(labels), normalise=True)

    @classmethod
    def from_pandas(cls, frame: Any, transaction: Hashable | None = None, item: Hashable | None = None) -> Dataset:
        """A dataset from a pandas DataFrame (pandas is an optional extra,
        ``pip install 'privtool[pandas]'``).

        * Long format, ``Dataset.from_pandas(frame, transaction="basket",
          item="product")``: one row per item occurrence; the records are the
          groups of ``transaction`` in order of first appearance, their items
          the ``item`` values (strings, or integers labelled by their decimal
          text). Repeated ``(transaction, item)`` rows are merged.
        * One-hot, ``Dataset.from_pandas(frame)``: every column boolean (numpy
          ``bool``, pandas ``boolean`` without missing values, or sparse
          boolean); one record per row, in frame order, holding the labels of
          its true columns (column names that are strings or integers).

        Anything else (a frame that is neither, missing values, float or mixed
        item columns, an unknown column) raises :class:`TypeError` or
        :class:`ValueError` in one sentence. See :mod:`privtool.frames`.
        """
        from .frames import dataset_from_frame

        return dataset_from_frame(frame, transaction, item)

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
        """:meth:`transpose`, computed once (it lives as long as the dataset)."""
        return self.transpose()

    def transpose(self) -> tuple[np.ndarray, np.ndarray]:
        """The transpose (CSC): ``(item_ptr, records)``; the records holding item
        ``j`` are ``records[item_ptr[j]:item_ptr[j+1]]``, ascending. Computed
        afresh, and nothing is kept on the dataset: a caller that needs it for
        a while (HORPART) drops it when done."""
        order = stable_order(self.items, self.n_items)
        records = np.repeat(np.arange(self.n_records, dtype=np.int64), self.sizes)[order]
        return offsets_of(self.supports), records

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
        indptr = offsets_of(sizes)
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
        for block in self._text_blocks():
            digest.update(block)
        return digest.hexdigest()

    def content_text(self) -> bytes:
        """The UTF-8 text :meth:`content_sha256` hashes: for each record, its
        labels (in stored order) joined by spaces, then a newline (an empty
        record is a lone newline)."""
        return b"".join(self._text_blocks())

    def _text_blocks(self) -> Iterator[bytes]:
        """:meth:`content_text` in pieces of whole records, about
        :data:`TEXT_BLOCK_BYTES` of work each, built without a Python object
        per item occurrence: each label with a space after it is one row of a
        byte table as wide as the longest, each occurrence its label's row,
        and a mask keeps the bytes that are there; the space after a record's
        last item becomes a newline, and an empty record is one."""
        encoded = [label.encode("utf-8") for label in self.labels]
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        width = int(lengths.max(initial=0)) + 1
        table = np.zeros((len(encoded), width), dtype=np.uint8)
        flat = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        table[
            np.repeat(np.arange(len(encoded)), lengths), concat_ranges(np.zeros(len(lengths), dtype=np.int64), lengths)
        ] = flat
        table[np.arange(len(encoded)), lengths] = ord(" ")
        per_block = max(1, TEXT_BLOCK_BYTES // width)  # occurrences
        first = 0
        while first < self.n_records:
            last = max(int(np.searchsorted(self.indptr, self.indptr[first] + per_block, side="right")) - 1, first + 1)
            items = self.items[self.indptr[first] : self.indptr[last]]
            sizes = self.sizes[first:last]
            occupied = lengths[items] + 1
            text = table[items][np.arange(width) < occupied[:, None]]
            ends = np.cumsum(occupied)  # bytes up to the end of each occurrence
            record_ends = np.cumsum(sizes)
            text[ends[record_ends[sizes > 0] - 1] - 1] = ord("\n")
            empty = np.flatnonzero(sizes == 0)
            if len(empty):
                text = np.insert(text, np.r_[0, ends][record_ends[empty]], ord("\n"))
            yield text.tobytes()
            first = last

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
    return offsets_of(np.bincount(rows, minlength=n)), np.ascontiguousarray(items, dtype=np.int32)
