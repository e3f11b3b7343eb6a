"""The content of a release as numpy CSR arrays (issue 20: no Python object per
item occurrence).

:class:`ReleaseArrays` holds what a release publishes besides its envelope
(claims, params, provenance, stats, hierarchy):

* ``labels``: every distinct item label once, in canonical order
  (:func:`privtool.dataset.label_sort_key`), so an item *code* is the label's
  canonical rank and canonical order is integer order;
* rows: ``items`` (int32 codes of every item occurrence, row after row) cut by
  ``row_offsets``. In a ``disassociated`` release a row is a sub-record of a
  chunk; in a ``generalized`` or ``sanitized`` release a row is a record (and
  there are no chunks);
* chunks: ``chunk_offsets`` cut the rows into chunks; ``owner_offsets`` cut the
  chunks by owner: first every cluster's record chunks (owner ``c`` for
  cluster ``c``), then every joint cluster's shared chunks (owner
  ``n_clusters + j`` for joint cluster ``j``); :attr:`ReleaseArrays.chunk_owner`
  and :attr:`ReleaseArrays.chunk_is_shared` spell this out per chunk;
* term chunks: ``term_items`` cut by ``term_offsets`` (one per cluster);
* clusters: ``cluster_ids``, ``cluster_sizes``; joint clusters: ``joint_ids``
  and ``joint_members`` (member cluster ids; :attr:`ReleaseArrays.member_index`
  gives them as cluster positions in CSR form).

The arrays are read-only and may be shared between releases. Conversions from
and to the nested lists of :class:`privtool.release.Release` are
:meth:`ReleaseArrays.from_nested` and :meth:`ReleaseArrays.clusters` /
:meth:`ReleaseArrays.joint_clusters` / :meth:`ReleaseArrays.records`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain, pairwise, repeat
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from .arrays import concat_ranges, offsets_of
from .dataset import label_sort_key

if TYPE_CHECKING:
    from .release import Cluster, JointCluster

Ints = npt.NDArray[np.int64]
Codes = npt.NDArray[np.int32]


def frozen(values: npt.ArrayLike, dtype: type[np.integer]) -> npt.NDArray:
    """A read-only numpy array of ``values``."""
    array = np.array(values, dtype=dtype)
    array.flags.writeable = False
    return array


@dataclass(frozen=True, eq=False)
class ReleaseArrays:
    """The content of one release in CSR form (see the module doc for each field)."""

    labels: tuple[str, ...]
    items: Codes
    row_offsets: Ints
    chunk_offsets: Ints
    owner_offsets: Ints
    term_items: Codes
    term_offsets: Ints
    cluster_ids: tuple[str, ...]
    cluster_sizes: Ints
    joint_ids: tuple[str, ...]
    joint_members: tuple[tuple[str, ...], ...]
    checked_canonical: bool = field(default=False, repr=False)
    """Whether whoever made the arrays checked that every order is canonical
    (the fast reader does, :mod:`privtool.release_bytes`): then
    :meth:`is_canonical` need not look again."""

    # ------------------------------------------------------------- shape
    @property
    def n_rows(self) -> int:
        return len(self.row_offsets) - 1

    @property
    def n_chunks(self) -> int:
        return len(self.chunk_offsets) - 1

    @property
    def n_clusters(self) -> int:
        return len(self.cluster_ids)

    @property
    def n_joint_clusters(self) -> int:
        return len(self.joint_ids)

    @property
    def row_lengths(self) -> Ints:
        return np.diff(self.row_offsets)

    @property
    def chunk_rows(self) -> Ints:
        """Number of rows (sub-records) of each chunk."""
        return np.diff(self.chunk_offsets)

    @cached_property
    def chunk_owner(self) -> Codes:
        """Per chunk, its cluster's position (record chunk) or its joint cluster's
        position (shared chunk; see :attr:`chunk_is_shared`)."""
        owners = np.repeat(np.arange(len(self.owner_offsets) - 1, dtype=np.int32), np.diff(self.owner_offsets))
        owners[owners >= self.n_clusters] -= self.n_clusters
        owners.flags.writeable = False
        return owners

    @cached_property
    def chunk_is_shared(self) -> npt.NDArray[np.bool_]:
        """Per chunk, whether it is a shared chunk of a joint cluster."""
        shared = np.arange(self.n_chunks) >= self.owner_offsets[self.n_clusters]
        shared.flags.writeable = False
        return shared

    @cached_property
    def member_index(self) -> tuple[Codes, Ints]:
        """Joint clusters' members as cluster positions, CSR ``(members, offsets)``;
        -1 for an id no cluster has (only an in-memory release can hold one:
        reading refuses it)."""
        position = {cid: i for i, cid in enumerate(self.cluster_ids)}
        flat = list(chain.from_iterable(self.joint_members))
        members = frozen(list(map(position.get, flat, repeat(-1, len(flat)))), np.int32)
        return members, offsets_of(map(len, self.joint_members))

    # ------------------------------------------------------------- nested form
    @classmethod
    def from_nested(
        cls, clusters: Sequence[Cluster], joint_clusters: Sequence[JointCluster], records: Sequence[Sequence[str]]
    ) -> ReleaseArrays:
        """The arrays of a release's nested content, in the same orders (nothing
        is sorted or de-duplicated here; see :meth:`is_canonical`). For a
        ``generalized`` or ``sanitized`` release pass no clusters; for a
        ``disassociated`` one no records."""
        record_chunks = [chunk for c in clusters for chunk in c.record_chunks]
        shared_chunks = [chunk for j in joint_clusters for chunk in j.shared_chunks]
        rows: list[Sequence[str]] = [row for chunk in chain(record_chunks, shared_chunks) for row in chunk]
        rows.extend(records)
        terms = [c.term_chunk for c in clusters]
        labels = tuple(sorted(set(chain(chain.from_iterable(rows), chain.from_iterable(terms))), key=label_sort_key))
        code = {label: i for i, label in enumerate(labels)}.__getitem__

        def codes(groups: Sequence[Sequence[str]]) -> Codes:
            count = sum(map(len, groups))
            array = np.fromiter(map(code, chain.from_iterable(groups)), dtype=np.int32, count=count)
            array.flags.writeable = False
            return array

        return cls(
            labels=labels,
            items=codes(rows),
            row_offsets=offsets_of(map(len, rows)),
            chunk_offsets=offsets_of(map(len, chain(record_chunks, shared_chunks))),
            owner_offsets=offsets_of(
                chain((len(c.record_chunks) for c in clusters), (len(j.shared_chunks) for j in joint_clusters))
            ),
            term_items=codes(terms),
            term_offsets=offsets_of(map(len, terms)),
            cluster_ids=tuple(c.id for c in clusters),
            cluster_sizes=frozen([c.size for c in clusters], np.int64),
            joint_ids=tuple(j.id for j in joint_clusters),
            joint_members=tuple(tuple(j.members) for j in joint_clusters),
        )

    def _label_lists(self, items: Codes, offsets: Ints) -> list[list[str]]:
        """Groups of labels cut by ``offsets`` (fresh lists, labels shared)."""
        flat = np.array(self.labels, dtype=object)[items].tolist() if len(items) else []
        cuts = offsets.tolist()
        return [flat[start:end] for start, end in pairwise(cuts)]

    def _chunks_of_owners(self) -> list[list[list[list[str]]]]:
        rows = self._label_lists(self.items, self.row_offsets)
        cuts = self.chunk_offsets.tolist()
        chunks = [rows[start:end] for start, end in pairwise(cuts)]
        owners = self.owner_offsets.tolist()
        return [chunks[start:end] for start, end in pairwise(owners)]

    def clusters(self) -> list[Cluster]:
        """The nested clusters (fresh lists every call)."""
        from .release import Cluster

        chunks = self._chunks_of_owners()
        terms = self._label_lists(self.term_items, self.term_offsets)
        sizes = self.cluster_sizes.tolist()
        return [Cluster(cid, sizes[i], chunks[i], terms[i]) for i, cid in enumerate(self.cluster_ids)]

    def joint_clusters(self) -> list[JointCluster]:
        """The nested joint clusters (fresh lists every call)."""
        from .release import JointCluster

        chunks = self._chunks_of_owners()[self.n_clusters :]
        return [JointCluster(jid, list(self.joint_members[j]), chunks[j]) for j, jid in enumerate(self.joint_ids)]

    def records(self) -> list[list[str]]:
        """The rows as records (a ``generalized`` or ``sanitized`` release)."""
        if self.n_chunks:
            return []
        return self._label_lists(self.items, self.row_offsets)

    # ------------------------------------------------------------- canonical order
    def is_canonical(self) -> bool:
        """Whether every publishable order is canonical already: each row and term
        chunk strictly increasing (sorted, no repeats), the rows of each chunk
        (of the records, when there are no chunks) in lexicographic order."""
        if self.checked_canonical:
            return True
        groups = self.chunk_offsets if self.n_chunks else np.array([0, self.n_rows], dtype=np.int64)
        return (
            strictly_increasing_rows(self.items, self.row_offsets)
            and strictly_increasing_rows(self.term_items, self.term_offsets)
            and rows_in_order(self.items, self.row_offsets, groups)
        )


SLICE = 1 << 18
"""Pairs of items or of rows the order checks look at a time: their temporaries
stay small on releases of millions of rows."""


def _cut_at(offsets: Ints, first: int, last: int) -> Ints:
    """The values ``v`` of ``offsets`` (ascending) with ``first < v <= last``."""
    return offsets[np.searchsorted(offsets, first, side="right") : np.searchsorted(offsets, last, side="right")]


def strictly_increasing_rows(items: Codes, offsets: Ints) -> bool:
    """Whether the codes of every row (cut by ``offsets``) strictly increase
    (:data:`SLICE` pairs of neighbouring items at a time)."""
    for a in range(0, len(items) - 1, SLICE):
        b = min(a + SLICE, len(items) - 1)  # pairs (i, i + 1) for a <= i < b
        increasing = np.diff(items[a : b + 1]) > 0
        increasing[_cut_at(offsets, a, b) - 1 - a] = True  # a pair across two rows: nothing to check
        if not np.all(increasing):
            return False
    return True


def rows_in_order(items: Codes, row_offsets: Ints, group_offsets: Ints) -> bool:
    """Whether consecutive rows of each group (groups of rows cut by
    ``group_offsets``) are in lexicographic order (a prefix first; equal rows
    allowed); :data:`SLICE` pairs of neighbouring rows at a time."""
    n_rows = len(row_offsets) - 1
    for p in range(0, n_rows - 1, SLICE):
        q = min(p + SLICE, n_rows - 1)  # pairs of rows (r, r + 1) for p <= r < q
        pair = np.ones(q - p, dtype=bool)  # rows r and r + 1 are in one group
        pair[_cut_at(group_offsets, p, q) - 1 - p] = False
        starts = row_offsets[p : q + 1]
        lengths = np.diff(row_offsets[p : q + 2])
        # the first items decide every pair at once, but those of two rows longer than one item that tie
        head = np.take(items, starts, mode="clip") if len(items) else np.zeros(len(starts), dtype=items.dtype)
        x, y, la, lb = head[:-1], head[1:], lengths[:-1], lengths[1:]
        both = (la > 0) & (lb > 0)
        same_head = both & (x == y)
        short = (la <= 1) | (lb <= 1)
        if np.any(pair & both & (x > y)) or np.any(pair & (short & (same_head | ~both)) & (la > lb)):
            return False
        left = np.flatnonzero(pair & same_head & ~short)
        if not _pairs_in_order(items, starts[left] + 1, starts[left + 1] + 1, la[left] - 1, lb[left] - 1):
            return False
    return True


def _pairs_in_order(items: Codes, a: Ints, b: Ints, la: Ints, lb: Ints) -> bool:
    """Whether each row ``items[a:a + la]`` comes lexicographically no later
    than its row ``items[b:b + lb]``."""
    common = np.minimum(la, lb)
    at = concat_ranges(a, common)  # the compared positions of the first rows, pair after pair
    x = items[at]
    at += np.repeat(b - a, common)  # ... and of the second rows
    y = items[at]
    del at
    differ = np.flatnonzero(x != y)
    pair = np.searchsorted(np.cumsum(common), differ, side="right")  # the pair of each difference
    first = np.r_[True, pair[1:] != pair[:-1]] if len(differ) else np.zeros(0, dtype=bool)  # its first one
    decided = differ[first]
    if np.any(x[decided] > y[decided]):
        return False
    tied = np.ones(len(a), dtype=bool)
    tied[pair[first]] = False
    return bool(np.all(la[tied] <= lb[tied]))
