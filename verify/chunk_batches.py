"""The chunks of a disassociated release as CSR batches for the executors
(issue 20: no Python object per item occurrence in the main process).

A :class:`ChunkBatch` is a run of consecutive chunks of a release's
:class:`~privtool.release_arrays.ReleaseArrays`: int32 codes and row/chunk
offsets rebased to the batch, the labels it uses, and per chunk its owner and
its index under the owner. It pickles as a few numpy arrays and one tuple of
labels, and a worker turns it into sub-records of labels
(:meth:`ChunkBatch.chunks`) only for the chunks it checks. :class:`ChunkBatches`
cuts a range of chunks into batches on demand, so a serial or Dask map holds
only the batches in flight.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import pairwise
from typing import Any

import numpy as np
import numpy.typing as npt

from privtool.arrays import concat_ranges, csr_positions, offsets_of, run_starts, slabs, unique_inverse
from privtool.lazy_sequence import LazySequence
from privtool.release import Release
from privtool.release_arrays import Codes, Ints, ReleaseArrays

from .chunks import ChunkShapes, chunk_shapes

Rows = tuple[tuple[str, ...], ...]


def release_arrays(release: Release) -> ReleaseArrays:
    """The release's arrays: its backing arrays (free), else converted once from
    its nested lists (an in-memory release)."""
    return release.backing_arrays or release.arrays


def label_rows(labels: Sequence[str], items: Codes, offsets: Ints) -> list[tuple[str, ...]]:
    """The rows ``items[offsets[i]:offsets[i + 1]]`` as tuples of labels: the
    occurrences looked up one by one when they are fewer than the labels (one
    chunk or cluster of a whole release's labels), else gathered through an
    object array of the labels (a batch's own labels)."""
    if len(items) > len(labels):
        flat = np.array(labels, dtype=object)[items].tolist()
    else:
        flat = [labels[code] for code in items.tolist()]
    return [tuple(flat[start:end]) for start, end in pairwise(offsets.tolist())]


def label_chunks(labels: Sequence[str], items: Codes, row_offsets: Ints, chunk_offsets: Ints) -> list[Rows]:
    """The chunks (rows cut by ``chunk_offsets``, both offsets relative to
    ``items``) as tuples of sub-records of labels."""
    rows = label_rows(labels, items, row_offsets)
    return [tuple(rows[start:end]) for start, end in pairwise(chunk_offsets.tolist())]


def chunk_location(arrays: ReleaseArrays, c: int) -> dict[str, Any]:
    """Where chunk ``c`` of the release is, as the verifiers' witnesses name it."""
    owner = int(arrays.chunk_owner[c])
    if arrays.chunk_is_shared[c]:
        first = int(arrays.owner_offsets[arrays.n_clusters + owner])
        return {"joint_cluster": arrays.joint_ids[owner], "shared_chunk": c - first}
    return {"cluster": arrays.cluster_ids[owner], "record_chunk": c - int(arrays.owner_offsets[owner])}


def chunk_slabs(arrays: ReleaseArrays, most: int) -> list[tuple[int, int]]:
    """``[first, last)`` ranges of consecutive chunks holding at most ``most`` item
    occurrences each (a larger chunk alone), covering every chunk."""
    return slabs(arrays.row_offsets[arrays.chunk_offsets[1:]], most)


@dataclass(frozen=True, eq=False)
class ChunkBatch:
    """Consecutive chunks of a release, self-contained (see the module doc).

    ``items`` are local codes into ``labels`` (ascending with the release's codes,
    so canonical order is kept); ``row_offsets`` cut them into sub-records and
    ``chunk_offsets`` the sub-records into chunks; per chunk, ``owner`` indexes
    ``owner_ids`` (a cluster id, or a joint cluster id when ``shared``) and
    ``index`` is the chunk's position among its owner's record or shared chunks;
    ``first`` is the release's index of the first chunk; ``codes`` holds the
    release's code of each local code."""

    first: int
    labels: tuple[str, ...]
    codes: Codes
    items: Codes
    row_offsets: Ints
    chunk_offsets: Ints
    owner_ids: tuple[str, ...]
    owner: Codes
    index: Codes
    shared: npt.NDArray[np.bool_]

    def __len__(self) -> int:
        return len(self.chunk_offsets) - 1

    def chunks(self) -> list[Rows]:
        """Every chunk's sub-records as tuples of labels."""
        return label_chunks(self.labels, self.items, self.row_offsets, self.chunk_offsets)

    def chunks_at(self, which: Sequence[int]) -> list[Rows]:
        """The sub-records of the chunks ``which``, in that order, as :meth:`chunks` gives them."""
        chosen = np.asarray(which, dtype=np.int64)
        counts = np.diff(self.chunk_offsets)[chosen]
        rows = concat_ranges(self.chunk_offsets[chosen], counts)
        items = self.items[csr_positions(self.row_offsets, rows)]
        return label_chunks(self.labels, items, offsets_of(np.diff(self.row_offsets)[rows]), offsets_of(counts))

    @cached_property
    def label_rank(self) -> np.ndarray:
        """Each local code's place in the sorted order of the labels
        (:class:`~privtool.verifiers.chunks.ChunkBits`' order of a chunk's items)."""
        rank = np.empty(len(self.labels), dtype=np.int64)
        rank[sorted(range(len(self.labels)), key=self.labels.__getitem__)] = np.arange(len(self.labels))
        return rank

    def shapes(self, k: int, m: int) -> ChunkShapes:
        """Every chunk's :class:`~privtool.verifiers.chunks.ChunkShapes`, its
        witnesses in the order of the labels (:attr:`label_rank`)."""
        return chunk_shapes(self.items, self.row_offsets, self.chunk_offsets, k, m, self.label_rank)

    def location(self, n: int) -> dict[str, Any]:
        """Where chunk ``n`` of the batch is, as the verifiers' witnesses name it."""
        owner, index = self.owner_ids[int(self.owner[n])], int(self.index[n])
        if self.shared[n]:
            return {"joint_cluster": owner, "shared_chunk": index}
        return {"cluster": owner, "record_chunk": index}

    def locations(self) -> list[dict[str, Any]]:
        return [self.location(n) for n in range(len(self))]


class ChunkBatches(LazySequence[ChunkBatch]):
    """Chunks ``start..stop-1`` of ``arrays`` cut into batches of ``size`` chunks,
    each built when it is asked for (indexing or slicing)."""

    def __init__(self, arrays: ReleaseArrays, start: int, stop: int, size: int) -> None:
        self.arrays, self.start, self.stop, self.size = arrays, start, stop, max(1, size)
        owners = np.diff(arrays.owner_offsets)
        first_of_owner = np.repeat(arrays.owner_offsets[:-1], owners)
        self._index = (np.arange(arrays.n_chunks, dtype=np.int64) - first_of_owner).astype(np.int32)
        self._owner_ids = (*arrays.cluster_ids, *arrays.joint_ids)  # as the keys of _build number the owners

    @classmethod
    def record_chunks(cls, arrays: ReleaseArrays, size: int) -> ChunkBatches:
        """Every cluster's record chunks, cluster after cluster."""
        return cls(arrays, 0, int(arrays.owner_offsets[arrays.n_clusters]), size)

    @classmethod
    def shared_chunks(cls, arrays: ReleaseArrays, size: int) -> ChunkBatches:
        """Every joint cluster's shared chunks, joint cluster after joint cluster."""
        return cls(arrays, int(arrays.owner_offsets[arrays.n_clusters]), arrays.n_chunks, size)

    @classmethod
    def all_chunks(cls, arrays: ReleaseArrays, size: int) -> ChunkBatches:
        """Every record chunk, then every shared chunk (the release's chunk order)."""
        return cls(arrays, 0, arrays.n_chunks, size)

    def __len__(self) -> int:
        return -(-(self.stop - self.start) // self.size)

    def _build(self, index: int) -> ChunkBatch:
        first = self.start + index * self.size
        last = min(self.stop, first + self.size)
        a = self.arrays
        row_cut = a.chunk_offsets[first : last + 1]
        item_cut = a.row_offsets[row_cut[0] : row_cut[-1] + 1]
        codes = a.items[item_cut[0] : item_cut[-1]]
        used, local = unique_inverse(codes, len(a.labels))
        shared = a.chunk_is_shared[first:last]
        keys = a.chunk_owner[first:last] + np.where(shared, a.n_clusters, 0)  # one key per owner, ascending
        starts = run_starts(keys)
        owner_local = np.zeros(len(keys), dtype=np.int32)
        owner_local[starts[1:]] = 1
        return ChunkBatch(
            first=first,
            labels=tuple(map(a.labels.__getitem__, used.tolist())),
            codes=used,
            items=local.astype(np.int32, copy=False),
            row_offsets=item_cut - item_cut[0],
            chunk_offsets=row_cut - row_cut[0],
            owner_ids=tuple(map(self._owner_ids.__getitem__, keys[starts].tolist())),
            owner=np.cumsum(owner_local, dtype=np.int32),
            index=self._index[first:last],
            shared=np.asarray(shared),
        )
