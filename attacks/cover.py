"""Cover-problem detection in disassociated releases.

Implements definition 3 of Awad, Al Bouna, Couchot, Philippe, "Safe
disassociation of set-valued datasets" (section 3.3). For a chunk ``R_C`` (a
record chunk, or a shared chunk of a joint cluster) let ``I`` be the set of all
items that occur in it. An item ``z`` of ``I`` is **covered** when

    s(I, R_C) = s({z}, R_C)                                   (equation 2)

i.e. every sub-record that holds ``z`` holds the whole of ``I``. The items of
``I`` that are not covered are the **covering** items. A chunk with a covered
item is **vulnerable** (section 5.1.1 counts these for PEM).

Choice where the paper is silent: a chunk with a single item (``|I| = 1``,
such as the ``{e, e}`` chunk of the paper's Figure 1) satisfies equation 2
trivially, but then ``z`` implies nothing besides itself, and partial
suppression cannot change the equality (``card = 1`` and the two ghost
sub-records give back ``z``). The paper does not count such chunks as
vulnerable (its Figure 1 calls only ``c`` and ``d`` covered), so a chunk is
vulnerable here only when ``|I| >= 2``, and single-item chunks have no covered
item.

Because ``I`` is the union of the chunk's sub-records, a sub-record contains
``I`` exactly when it equals ``I``, so ``s(I, R_C)`` is the number of
sub-records as wide as ``I``: the whole analysis is one counting pass over the
chunk's occurrences. :func:`item_bitsets` gives per-item row bitsets (Python
ints, bit ``r`` = sub-record ``r``) for the implication tests of the
cover-linkage attack.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from privtool.arrays import pair_key, run_starts
from privtool.dataset import label_sort_key
from privtool.release import Release

RECORD = "record"
SHARED = "shared"


@dataclass(frozen=True)
class ChunkRef:
    """Where a chunk sits: ``owner`` is the cluster id (record chunks) or the
    joint-cluster id (shared chunks), ``index`` its position in that list."""

    owner: str
    kind: str
    index: int

    def __str__(self) -> str:
        return f"{self.owner}/{self.kind}[{self.index}]"


@dataclass(frozen=True)
class ChunkCover:
    """Definition 3 evaluated on one chunk.

    ``itemset`` is ``I`` (canonical order), ``rows`` the number of non-empty
    sub-records, ``itemset_support`` is ``s(I, R_C)``, ``supports`` the support
    of each item of ``I`` (same order), ``covered`` the items ``L`` and
    ``covering`` the items ``I \\ L``.
    """

    ref: ChunkRef
    itemset: tuple[str, ...]
    rows: int
    itemset_support: int
    supports: tuple[int, ...]
    covered: tuple[str, ...]
    covering: tuple[str, ...]

    @property
    def vulnerable(self) -> bool:
        return bool(self.covered)

    @property
    def occurrences(self) -> int:
        return sum(self.supports)

    def to_json(self) -> dict:
        return {
            "chunk": str(self.ref),
            "itemset": list(self.itemset),
            "itemset_support": self.itemset_support,
            "supports": dict(zip(self.itemset, self.supports, strict=False)),
            "covered": list(self.covered),
            "covering": list(self.covering),
        }


def analyse_chunk(rows: Sequence[Sequence[str]], ref: ChunkRef = ChunkRef("", RECORD, 0)) -> ChunkCover:
    """Covered and covering items of one chunk given as its non-empty sub-records
    (each without repeated items)."""
    counts = Counter(label for row in rows for label in row)
    itemset = tuple(sorted(counts, key=label_sort_key))
    width = len(itemset)
    full = sum(1 for row in rows if len(row) == width) if width else 0
    supports = tuple(counts[x] for x in itemset)
    if width >= 2:
        covered = tuple(x for x, s in zip(itemset, supports, strict=False) if s == full)
    else:
        covered = ()
    covering = tuple(x for x in itemset if x not in covered)
    return ChunkCover(ref, itemset, len(rows), full, supports, covered, covering)


def vulnerable_mask(items: np.ndarray, row_offsets: np.ndarray, chunk_offsets: np.ndarray) -> np.ndarray:
    """Per chunk of a CSR slice, whether :func:`analyse_chunk` finds it
    vulnerable, computed in one vectorised pass: ``items`` holds the item codes
    (non-negative ints below 2**32) of every sub-record, cut into sub-records by
    ``row_offsets`` and into chunks by ``chunk_offsets`` (both start at 0).

    Sorting the (chunk, item) pairs gives each item's support and each chunk's
    width ``|I|``; ``s(I)`` counts the sub-records as wide as ``I``; a chunk is
    vulnerable when it has two items or more and one of them has support
    ``s(I)`` (definition 3, as in :func:`analyse_chunk`)."""
    n_chunks = len(chunk_offsets) - 1
    row_length = np.diff(row_offsets)
    chunk_of_row = np.repeat(np.arange(n_chunks, dtype=np.int64), np.diff(chunk_offsets))
    keys = np.sort(pair_key(np.repeat(chunk_of_row, row_length), items))
    starts = run_starts(keys)
    support = np.diff(np.r_[starts, len(keys)])
    chunk_of_run = keys[starts] >> 32
    width = np.bincount(chunk_of_run, minlength=n_chunks)
    full = np.bincount(chunk_of_row[row_length == width[chunk_of_row]], minlength=n_chunks)
    vulnerable = np.zeros(n_chunks, dtype=bool)
    vulnerable[chunk_of_run[support == full[chunk_of_run]]] = True
    return vulnerable & (width >= 2)


def iter_chunks(release: Release, shared: bool = True) -> Iterator[tuple[ChunkRef, list[list[str]]]]:
    """Every record chunk (and, with ``shared``, every shared chunk) of a
    disassociated release, in release order."""
    for cluster in release.clusters:
        for index, chunk in enumerate(cluster.record_chunks):
            yield ChunkRef(cluster.id, RECORD, index), chunk
    if shared:
        for joint in release.joint_clusters:
            for index, chunk in enumerate(joint.shared_chunks):
                yield ChunkRef(joint.id, SHARED, index), chunk


def chunk_covers(release: Release, shared: bool = True) -> list[ChunkCover]:
    """Definition 3 on every chunk of ``release`` (see :func:`iter_chunks`)."""
    return [analyse_chunk(rows, ref) for ref, rows in iter_chunks(release, shared)]


def vulnerable_chunks(release: Release, shared: bool = True) -> list[ChunkCover]:
    """The chunks of ``release`` that suffer from the cover problem."""
    return [cover for cover in chunk_covers(release, shared) if cover.vulnerable]


def item_bitsets(rows: Sequence[Sequence[str]]) -> dict[str, int]:
    """Per item, the set of sub-records holding it as a Python-int bitset
    (bit ``r`` set when sub-record ``r`` holds the item)."""
    bits: dict[str, int] = {}
    for r, row in enumerate(rows):
        flag = 1 << r
        for label in row:
            bits[label] = bits.get(label, 0) | flag
    return bits
