"""The sanitizer's release as CSR arrays: batches of owners for the executor,
and the sanitized release assembled from the input's arrays and the chunks that
changed (issue 20: no Python object per item occurrence in the driver).

An *owner* is a cluster (its record chunks) or a joint cluster (its shared
chunks), numbered as in :attr:`privtool.release_arrays.ReleaseArrays.owner_offsets`.
:class:`OwnerBatches` cuts consecutive owners of one kind into batches
(:class:`OwnerBatch`) of about ``unit_occurrences`` item occurrences (slices of
the release's arrays, rebased to 0): one opaque unit per executor task. A worker
builds label rows only for the chunks it must look at
(:meth:`OwnerBatch.chunks`); what comes back is the content of every repaired
chunk as a :class:`CodedChunk` (codes in canonical order) or ``None`` for a
removed chunk, and :func:`apply_changes` gathers the new arrays from the old
ones and those changes in a few vectorised passes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from privtool.arrays import concat_ranges, offsets_of
from privtool.attacks.cover import vulnerable_mask
from privtool.lazy_sequence import LazySequence
from privtool.release_arrays import Codes, Ints, ReleaseArrays


@dataclass(frozen=True, eq=False)
class CodedChunk:
    """One chunk as item codes in canonical order: ``items`` holds its
    sub-records one after the other (each ascending, the sub-records in
    lexicographic order), ``lengths`` their lengths."""

    items: Codes
    lengths: Ints

    @classmethod
    def of(cls, rows: Sequence[Sequence[str]], code: Mapping[str, int]) -> CodedChunk:
        """The chunk of label ``rows`` (items of a row distinct), in canonical order."""
        coded = sorted(tuple(sorted(code[label] for label in row)) for row in rows)
        items = np.fromiter((c for row in coded for c in row), dtype=np.int32, count=sum(map(len, coded)))
        return cls(items, np.fromiter(map(len, coded), dtype=np.int64, count=len(coded)))


class LabelChunks(LazySequence[list[list[str]]]):
    """The chunks of one owner of a :class:`OwnerBatch` as label rows, each
    built when asked for (fresh lists every time)."""

    def __init__(self, batch: OwnerBatch, owner: int, labels: np.ndarray) -> None:
        self._batch = batch
        self._first = int(batch.owner_offsets[owner])
        self._count = int(batch.owner_offsets[owner + 1]) - self._first
        self._labels = labels

    def __len__(self) -> int:
        return self._count

    def _build(self, index: int) -> list[list[str]]:
        chunk = self._first + index
        batch = self._batch
        a, b = int(batch.chunk_offsets[chunk]), int(batch.chunk_offsets[chunk + 1])
        cuts = batch.row_offsets[a : b + 1]
        flat = self._labels[batch.items[cuts[0] : cuts[-1]]].tolist()
        return [flat[start:end] for start, end in pairwise((cuts - cuts[0]).tolist())]


@dataclass(frozen=True, eq=False)
class OwnerBatch:
    """Consecutive owners of one ``kind`` as CSR arrays, each starting at 0:
    owner ``first + o`` (its id ``ids[o]``) has the chunks
    ``owner_offsets[o] .. owner_offsets[o + 1] - 1``, a chunk the rows cut by
    ``chunk_offsets``, a row the codes of ``items`` cut by ``row_offsets``.
    ``records[o]`` is the number of records the owner's chunks spread over (at
    least the rows of its largest chunk) and ``capacity[o]`` the bound on
    ``|R_C|`` before suppression (:class:`~.sanitizer.Limits`)."""

    kind: str
    first: int
    ids: tuple[str, ...]
    records: Ints
    capacity: Ints
    owner_offsets: Ints
    chunk_offsets: Ints
    row_offsets: Ints
    items: Codes

    def vulnerable(self) -> np.ndarray:
        """Per chunk, whether it has a covered item (:func:`~privtool.attacks.cover.vulnerable_mask`)."""
        return vulnerable_mask(self.items, self.row_offsets, self.chunk_offsets)

    def chunks(self, owner: int, labels: np.ndarray) -> LabelChunks:
        """The chunks of owner ``first + owner`` as label rows (``labels``: the
        release's labels as an object array, indexed by code)."""
        return LabelChunks(self, owner, labels)


def owner_of_chunk(arrays: ReleaseArrays) -> Ints:
    """Per chunk, its owner's position in ``owner_offsets`` (clusters, then joint clusters)."""
    n_owners = len(arrays.owner_offsets) - 1
    return np.repeat(np.arange(n_owners, dtype=np.int64), np.diff(arrays.owner_offsets))


def largest_chunks(owner_offsets: Ints, chunk_rows: Ints) -> Ints:
    """Per owner, the rows of its largest chunk (0 for an owner without chunks)."""
    out = np.zeros(len(owner_offsets) - 1, dtype=np.int64)
    owners = np.repeat(np.arange(len(out), dtype=np.int64), np.diff(owner_offsets))
    np.maximum.at(out, owners, chunk_rows)
    return out


class OwnerBatches(LazySequence[OwnerBatch]):
    """The ``owners`` of ``arrays`` (consecutive positions in ``owner_offsets``,
    all of ``kind``, with these ``ids``, ``records`` and ``capacity``) as
    batches of about ``unit_occurrences`` item occurrences each (a larger
    owner alone), each built when it is asked for: a map holds only the
    batches in flight."""

    def __init__(
        self,
        arrays: ReleaseArrays,
        kind: str,
        owners: range,
        ids: Sequence[str],
        records: Ints,
        capacity: Ints,
        unit_occurrences: int,
    ) -> None:
        self._arrays, self._kind, self._first = arrays, kind, owners.start
        self._ids, self._records, self._capacity = ids, records, capacity
        self._chunk_cut = arrays.owner_offsets[owners.start : owners.stop + 1]
        occurrence_cut = arrays.row_offsets[arrays.chunk_offsets[self._chunk_cut]]
        ends = occurrence_cut[1:] - occurrence_cut[0]
        targets = np.arange(unit_occurrences, int(ends[-1]) if len(ends) else 0, unit_occurrences)
        cuts = np.unique(np.r_[0, np.searchsorted(ends, targets, side="right"), len(owners)])
        self._cuts = cuts.tolist() if len(owners) else [0]

    def __len__(self) -> int:
        return len(self._cuts) - 1

    def _build(self, index: int) -> OwnerBatch:
        a, b = self._cuts[index], self._cuts[index + 1]
        arrays, chunk_cut = self._arrays, self._chunk_cut
        c0, c1 = int(chunk_cut[a]), int(chunk_cut[b])
        r0, r1 = int(arrays.chunk_offsets[c0]), int(arrays.chunk_offsets[c1])
        i0, i1 = int(arrays.row_offsets[r0]), int(arrays.row_offsets[r1])
        return OwnerBatch(
            self._kind,
            self._first + a,
            tuple(self._ids[a:b]),
            self._records[a:b],
            self._capacity[a:b],
            chunk_cut[a : b + 1] - c0,
            arrays.chunk_offsets[c0 : c1 + 1] - r0,
            arrays.row_offsets[r0 : r1 + 1] - i0,
            arrays.items[i0:i1],
        )


def rows_after(arrays: ReleaseArrays, changes: Mapping[int, CodedChunk | None]) -> Ints:
    """Per chunk, its number of rows once ``changes`` (chunk position -> new
    content, ``None``: removed) are applied (0 for a removed chunk)."""
    rows = arrays.chunk_rows.copy()
    for chunk, content in changes.items():
        rows[chunk] = 0 if content is None else len(content.lengths)
    return rows


SLAB = 1 << 22
"""Item occurrences of the input :func:`apply_changes` assembles per step (bounds its index arrays)."""


def apply_changes(
    arrays: ReleaseArrays, changes: Mapping[int, CodedChunk | None], canonical: bool = False, slab: int = SLAB
) -> ReleaseArrays:
    """The release's arrays with ``changes`` applied (chunk position -> new
    content, ``None``: the chunk is removed), each cluster's size grown to its
    largest chunk (ghost records) and the labels no longer published dropped.
    Term chunks, ids and joint members are kept. The rows are assembled a
    slab of about ``slab`` input occurrences at a time, so that the index
    arrays stay small whatever the release's size.

    Every order stays as it was in the kept chunks, a new content is in
    canonical order (:class:`CodedChunk`) and renumbering the labels keeps
    their order, so the result is canonical when ``arrays`` are: pass
    ``canonical=arrays.is_canonical()`` to have it marked so
    (:attr:`~privtool.release_arrays.ReleaseArrays.checked_canonical`)."""
    new = {chunk: content for chunk, content in changes.items() if content is not None}
    keep = np.ones(arrays.n_chunks, dtype=bool)
    keep[[chunk for chunk, content in changes.items() if content is None]] = False
    replaced = np.array(sorted(new), dtype=np.int64)
    chunk_rows = arrays.chunk_rows.copy()
    chunk_rows[replaced] = [len(new[chunk].lengths) for chunk in replaced.tolist()]
    ends = arrays.row_offsets[arrays.chunk_offsets[1:]]
    cuts = np.searchsorted(ends, np.arange(slab, int(ends[-1]) if len(ends) else 0, slab), side="right")
    item_parts: list[Codes] = [np.zeros(0, dtype=np.int32)]
    length_parts: list[Ints] = [np.zeros(0, dtype=np.int64)]
    for c0, c1 in pairwise(np.unique(np.r_[0, cuts, arrays.n_chunks]).tolist()):
        r0, r1 = int(arrays.chunk_offsets[c0]), int(arrays.chunk_offsets[c1])
        here = replaced[np.searchsorted(replaced, c0) : np.searchsorted(replaced, c1)]
        contents = [new[chunk] for chunk in here.tolist()]
        # this slab's rows, then the new rows of its replaced chunks
        lengths = np.concatenate([np.diff(arrays.row_offsets[r0 : r1 + 1]), *(c.lengths for c in contents)])
        occurrences = arrays.items[arrays.row_offsets[r0] : arrays.row_offsets[r1]]
        pool = np.concatenate([occurrences, *(c.items for c in contents)])
        starts = np.cumsum(lengths) - lengths
        first = arrays.chunk_offsets[c0:c1] - r0
        new_rows = chunk_rows[here]
        first[here - c0] = (r1 - r0) + np.cumsum(new_rows) - new_rows
        kept = keep[c0:c1]
        rows = concat_ranges(first[kept], chunk_rows[c0:c1][kept])
        length_parts.append(lengths[rows])
        item_parts.append(pool[concat_ranges(starts[rows], lengths[rows])])
    items = np.concatenate(item_parts)
    row_lengths = np.concatenate(length_parts)
    del item_parts, length_parts
    # the labels still published, renumbered (their canonical order is kept)
    used = np.zeros(len(arrays.labels), dtype=bool)
    used[items] = True
    used[arrays.term_items] = True
    code = (np.cumsum(used) - 1).astype(np.int32)
    labels = tuple(label for label, kept in zip(arrays.labels, used.tolist(), strict=True) if kept)
    owners = owner_of_chunk(arrays)[keep]
    owner_offsets = offsets_of(np.bincount(owners, minlength=len(arrays.owner_offsets) - 1))
    chunk_rows = chunk_rows[keep]
    largest = largest_chunks(owner_offsets, chunk_rows)[: arrays.n_clusters]
    return ReleaseArrays(
        labels=labels,
        items=read_only(code[items]),
        row_offsets=offsets_of(row_lengths),
        chunk_offsets=offsets_of(chunk_rows),
        owner_offsets=owner_offsets,
        term_items=read_only(code[arrays.term_items]),
        term_offsets=arrays.term_offsets,
        cluster_ids=arrays.cluster_ids,
        cluster_sizes=read_only(np.maximum(arrays.cluster_sizes, largest)),
        joint_ids=arrays.joint_ids,
        joint_members=arrays.joint_members,
        checked_canonical=canonical,
    )


def read_only(array: np.ndarray) -> np.ndarray:
    """``array``, made read-only (no copy)."""
    array.flags.writeable = False
    return array
