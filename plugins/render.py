"""Vectorised writing of line-per-record text (FIMI, SPMF).

Writing record by record in Python costs one string operation per item
occurrence. Here the output is described as a sequence of *pieces*, indices
into a small vocabulary (every label, and the four separators of a
:class:`Layout`); every record contributes ``2 * size + 1`` pieces (each item
followed by its separator, then the record's end) and the bytes are gathered
from a padded table of the pieces' bytes with numpy, :data:`BLOCK_RECORDS`
records at a time, so temporaries stay bounded.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from privtool.dataset import Dataset

BLOCK_RECORDS = 1 << 15


@dataclass(frozen=True)
class Layout:
    """What follows each item but the last of a record (``after_item``), the
    last one (``after_last``), and what ends a record with items (``end``) or
    without (``end_empty``)."""

    after_item: str
    after_last: str
    end: str
    end_empty: str


def render(dataset: Dataset, layout: Layout) -> Iterator[str]:
    """The text of ``dataset`` in ``layout``, in chunks of whole records."""
    vocabulary = [label.encode("utf-8") for label in dataset.labels]
    separators = [layout.after_item, layout.after_last, layout.end, layout.end_empty]
    vocabulary += [text.encode("utf-8") for text in separators]
    after_item, after_last, end, end_empty = range(dataset.n_items, dataset.n_items + 4)
    lengths = np.array([len(piece) for piece in vocabulary], dtype=np.int64)
    table = np.zeros((len(vocabulary), max(int(lengths.max()), 1)), dtype=np.uint8)
    for i, piece in enumerate(vocabulary):
        table[i, : len(piece)] = np.frombuffer(piece, dtype=np.uint8)
    for first in range(0, dataset.n_records, BLOCK_RECORDS):
        last = min(first + BLOCK_RECORDS, dataset.n_records)
        pieces = _pieces(dataset, first, last, (after_item, after_last, end, end_empty))
        yield _gather(table, lengths, pieces).decode("utf-8")


def _pieces(dataset: Dataset, first: int, last: int, codes: tuple[int, int, int, int]) -> np.ndarray:
    """Piece ids of records ``first..last-1``: item, separator, ..., record end."""
    after_item, after_last, end, end_empty = codes
    sizes = dataset.sizes[first:last]
    counts = 2 * sizes + 1
    starts = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    pieces = np.empty(int(starts[-1]), dtype=np.int64)
    items = dataset.items[dataset.indptr[first] : dataset.indptr[last]]
    within = np.arange(len(items), dtype=np.int64) - np.repeat(dataset.indptr[first:last] - dataset.indptr[first], sizes)
    item_at = np.repeat(starts[:-1], sizes) + 2 * within
    pieces[item_at] = items
    pieces[item_at + 1] = np.where(within == np.repeat(sizes, sizes) - 1, after_last, after_item)
    pieces[starts[1:] - 1] = np.where(sizes > 0, end, end_empty)
    return pieces


def _gather(table: np.ndarray, lengths: np.ndarray, pieces: np.ndarray) -> bytes:
    """Concatenate the bytes of ``pieces`` (rows of ``table``, ``lengths`` long)."""
    piece_lengths = lengths[pieces]
    offsets = np.zeros(len(pieces), dtype=np.int64)
    np.cumsum(piece_lengths[:-1], out=offsets[1:])
    total = int(piece_lengths.sum())
    column = np.arange(total, dtype=np.int64) - np.repeat(offsets, piece_lengths)
    return table[np.repeat(pieces, piece_lengths), column].tobytes()
