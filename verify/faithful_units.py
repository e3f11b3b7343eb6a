"""Faithfulness's content check on arrays, in units of clusters for the executors
(issue 20: no Python object per item occurrence, and the check off the driver).

:class:`ContentArrays` holds, once and in the driver, everything the check
needs as numpy arrays: the release's CSR (codes only), the original's CSR, the
release code of each of its labels, the occurrences the trail removed, the
published records grouped by cluster through the trail, and the trail's ghost
sub-records. A unit is a plain range of clusters (:func:`units`) and travels
as its own :class:`UnitArrays` (:class:`Units` builds one when the executor
asks for it): its clusters' chunks and records, their ghosts, and the shared
chunks' domains of the joint clusters above them, numbered within the unit, so
a task's payload and a worker's memory are bounded by the unit, not by the
data (session 10: sending the whole :class:`ContentArrays` to every worker
made the workers' peak and CPU per record grow with the data). A unit returns
its records' projections on the shared chunks, and :func:`bad_joints` compares
those with the shared chunks once, in the driver, a slab at a time (REFINE
nests joint clusters into trees that cover nearly the whole release, so units
cut by top joint cluster would be one unit).

:func:`check_unit` is exact but one-sided: what it passes is faithful exactly as
:func:`privtool.verifiers.faithfulness.check_disassociated_content`'s
per-cluster check would find it, with the same count of removed occurrences
(every chunk the multiset of its records' projections plus its ghosts,
compared item by item after pairing sub-records by a hash of their items, or,
with partial suppression, its ghosts published and its other sub-records each
from a distinct projection by removing items, :func:`_compared`; domains
disjoint; term chunks made of the records' items; sizes), and everything else
(any problem, or a hash collision it cannot settle) is returned as flagged for
that per-cluster check, which finds the witness.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import numpy.typing as npt

from privtool.arrays import (
    SLAB_OCCURRENCES,
    concat_ranges,
    csr_positions,
    in_sorted,
    lookup_sorted,
    offsets_of,
    pair_key,
    run_starts,
    unique_int,
)
from privtool.lazy_sequence import LazySequence
from privtool.release_arrays import Codes, Ints, ReleaseArrays

from .matching import unmatched_subsets

NONE = -2
"""Lookup result of an occurrence whose item the cluster publishes nowhere."""
TERM = -1
"""Lookup result of an occurrence whose item is in the cluster's term chunk."""
SHARED = -3
"""Lookup result ``SHARED - c`` of an occurrence whose item is in shared chunk ``c``."""
HASH_SEED = 0x5EED_F417
UNIT_OCCURRENCES = 1 << 19
"""Original item occurrences per unit (about; a larger cluster is a unit alone):
a worker's temporaries for one unit are about a hundred bytes per occurrence,
and its :class:`UnitArrays` about twenty, so a unit is full, and the worker's
peak and a task's payload the same, from about 100,000 records on."""


Subs = tuple[Ints, Ints, Codes]
"""Sub-records of some chunks: ``(chunk, offsets, codes)``, each sub-record's
chunk (a position in the chunks at hand) and its codes
``codes[offsets[i]:offsets[i + 1]]``, ascending."""


@dataclass(frozen=True, eq=False)
class ContentArrays:
    """What :func:`unit_arrays` cuts the units from, in the driver (see the
    module doc). Owners are the clusters (``0..n_clusters-1``) then the joint
    clusters (``n_clusters + j``), as in
    :attr:`privtool.release_arrays.ReleaseArrays.owner_offsets`."""

    n_clusters: int
    n_labels: int
    items: Codes
    row_offsets: Ints
    chunk_offsets: Ints
    owner_offsets: Ints
    term_items: Codes
    term_offsets: Ints
    sizes: Ints
    owner_parent: Ints
    """Per owner, the owner index of its parent joint cluster, or -1."""
    indptr: Ints
    original_items: Codes
    """The original's items (its own label codes)."""
    release_code: Codes
    """Per original label, its release code (-1: the release never publishes it)."""
    removed: Ints
    """Positions in ``original_items`` of the occurrences the trail removed, ascending."""
    members: Ints
    """Original record positions grouped by cluster, ascending within a cluster."""
    member_offsets: Ints
    ghost_chunk: Ints
    """Release chunk index of every ghost sub-record, ascending."""
    ghost_offsets: Ints
    ghost_items: Codes
    """Each ghost's items in release codes, ascending (-1 for a label the release lacks)."""
    ghost_counts: Ints
    """Per cluster, the ghost sub-records the trail adds to it."""
    joint_keys: Ints
    """``owner * (n_labels + 1) + item`` of every item of every shared chunk, ascending."""
    joint_chunks: Ints
    """The release chunk index holding each of ``joint_keys``."""


@dataclass(frozen=True, eq=False)
class UnitArrays:
    """One unit's payload for :func:`check_unit`. Its owners are its clusters
    (``0..len(clusters)-1``) then every joint cluster above them, in release
    order; its chunks are its clusters' record chunks, numbered from 0 in the
    order of its clusters; shared chunks keep their release index."""

    clusters: Ints
    """The release positions of the unit's clusters."""
    n_labels: int
    cluster_chunks: Ints
    """Per cluster, its record chunks."""
    published: Subs
    """The rows of those chunks (:data:`Subs`, each row's codes ascending)."""
    term_counts: Ints
    term_items: Codes
    sizes: Ints
    ghost_counts: Ints
    owner_parent: Ints
    """Per owner of the unit, the unit's owner index of its parent joint cluster, or -1."""
    record_counts: Ints
    """Per cluster, its original records (published through the trail)."""
    record_lengths: Ints
    """Per record, in cluster order, its occurrences the trail did not remove."""
    codes: Codes
    """Those occurrences in release codes (-1: the release never publishes the item)."""
    ghosts: Subs
    """The trail's ghost sub-records of the unit's chunks."""
    joint_keys: Ints
    """``owner * (n_labels + 1) + item`` of every item of every shared chunk of the unit's joint owners, ascending."""
    joint_chunks: Ints

    @property
    def nbytes(self) -> int:
        """The bytes of its arrays (what a task carries; :func:`privtool.executors.batches`)."""
        arrays: list[np.ndarray] = [*self.published, *self.ghosts]
        arrays += [value for value in vars(self).values() if isinstance(value, np.ndarray)]
        return sum(array.nbytes for array in arrays)


@dataclass(frozen=True)
class UnitResult:
    """``silent``: item occurrences removed without a trail entry (published
    nowhere, or partially suppressed) in the unit's clusters that were not
    flagged; ``clusters``: positions flagged for the per-cluster check;
    the records' projections on shared chunks (release chunk index, length,
    codes), for :func:`bad_joints`."""

    silent: int
    clusters: Ints
    shared_chunk: Ints
    shared_lengths: Ints
    shared_codes: Codes


def units(occurrences: Ints, most: int = UNIT_OCCURRENCES) -> list[tuple[int, int]]:
    """Ranges of clusters with about ``most`` original occurrences each
    (``occurrences`` per cluster; a larger cluster alone)."""
    if not len(occurrences):
        return []
    done = np.cumsum(occurrences)
    cuts = np.searchsorted(done, np.arange(most, int(done[-1]) + 1, most), side="right") + 1
    bounds = [0, *sorted({min(int(c), len(occurrences)) for c in cuts.tolist()}), len(occurrences)]
    return [(a, b) for a, b in pairwise(bounds) if a < b]


def ancestors(owner_parent: Ints, owners: Ints) -> Ints:
    """Every distinct owner strictly above any of ``owners``, ascending."""
    found = []
    up = owner_parent[owners]
    while True:
        up = unique_int(up[up >= 0])
        if not len(up):
            break
        found.append(up)
        up = owner_parent[up]
    return unique_int(np.concatenate(found)) if found else np.zeros(0, dtype=np.int64)


def _hash_prefix(words: npt.NDArray[np.uint64], codes: Codes) -> npt.NDArray[np.uint64]:
    """Prefix sums (wrapping) of each code's word; a set's hash is a difference of two."""
    out = np.zeros(len(codes) + 1, dtype=np.uint64)
    np.cumsum(words[codes], out=out[1:])
    return out


def _bad_chunks(
    words: npt.NDArray[np.uint64],
    n_chunks: int,
    a_chunk: Ints,
    a_offsets: Ints,
    a_codes: Codes,
    b_chunk: Ints,
    b_offsets: Ints,
    b_codes: Codes,
) -> npt.NDArray[np.bool_]:
    """Per local chunk, whether its sub-records on side a (offsets into
    ``a_codes``, each ascending) and side b differ as multisets (or may: a hash
    collision flags a chunk that is equal, never passes one that is not).
    ``words`` holds a random word per code, the last one for code -1."""
    bad = np.bincount(a_chunk, minlength=n_chunks) != np.bincount(b_chunk, minlength=n_chunks)
    sides = []
    for chunk, offsets, codes in ((a_chunk, a_offsets, a_codes), (b_chunk, b_offsets, b_codes)):
        prefix = _hash_prefix(words, codes)
        hashes = prefix[offsets[1:]] - prefix[offsets[:-1]]
        lengths = np.diff(offsets)
        keep = np.flatnonzero(~bad[chunk])
        ordered = keep[np.lexsort((lengths[keep], hashes[keep], chunk[keep]))]
        sides.append((chunk[ordered], offsets[ordered], lengths[ordered], hashes[ordered], codes))
    (chunk, a_start, a_len, a_hash, _), (_, b_start, b_len, b_hash, _) = sides
    differ = (a_len != b_len) | (a_hash != b_hash)
    bad[chunk[differ]] = True
    same = np.flatnonzero(~differ)
    x = a_codes[concat_ranges(a_start[same], a_len[same])]
    y = b_codes[concat_ranges(b_start[same], a_len[same])]
    bad[chunk[same[np.repeat(np.arange(len(same)), a_len[same])[x != y]]]] = True
    return bad


def _joined(x: Subs, y: Subs) -> Subs:
    """The sub-records of ``x`` then of ``y``."""
    return (
        np.concatenate([x[0], y[0]]),
        offsets_of(np.concatenate([np.diff(x[1]), np.diff(y[1])])),
        np.concatenate([x[2], y[2]]),
    )


def _picked(subs: Subs, keep: npt.NDArray[np.bool_]) -> Subs:
    """The sub-records of ``subs`` whose chunk ``keep`` holds."""
    chunk, offsets, codes = subs
    chosen = np.flatnonzero(keep[chunk])
    lengths = offsets[chosen + 1] - offsets[chosen]
    return chunk[chosen], offsets_of(lengths), codes[concat_ranges(offsets[chosen], lengths)]


def _compared(
    words: npt.NDArray[np.uint64], n_chunks: int, projections: Subs, ghosts: Subs, published: Subs
) -> tuple[npt.NDArray[np.bool_], Ints]:
    """Per local chunk, whether it fails the per-cluster check's chunk rule
    (:func:`privtool.verifiers.faithfulness._chunk_removals`) or may (a hash
    collision), and the item occurrences removed from it without a trail entry
    when it passes. A chunk passes when it is its records' projections plus
    its ghosts, or, after its ghosts are taken out, each of its other
    sub-records comes from a distinct projection by removing items (partial
    suppression): equal ones paired first, the rest matched exactly
    (:func:`privtool.verifiers.matching.unmatched_subsets`, on the few
    sub-records left)."""
    bad = _bad_chunks(words, n_chunks, *_joined(projections, ghosts), *published)
    removed = np.zeros(n_chunks, dtype=np.int64)
    if not bad.any():
        return bad, removed
    sides = [_picked(subs, bad) for subs in (projections, ghosts, published)]
    chunk, offsets, codes = _joined(_joined(sides[0], sides[1]), sides[2])
    side = np.repeat(np.arange(3), [len(s[0]) for s in sides])
    key, first, uncertain = _keys(words, chunk, offsets, codes)
    n_keys = len(first)
    count = np.bincount(key * 3 + side, minlength=3 * n_keys).reshape(n_keys, 3)
    projected, ghost, shown = count[:, 0], count[:, 1], count[:, 2]
    key_chunk, key_length = chunk[first], offsets[first + 1] - offsets[first]
    still = np.zeros(n_chunks, dtype=bool)
    still[chunk[uncertain]] = True
    still[key_chunk[ghost > shown]] = True  # a ghost of the trail not published
    rest = np.maximum(shown - ghost, 0)
    paired = np.minimum(rest, projected)
    removed = np.bincount(key_chunk, weights=key_length * (projected - rest), minlength=n_chunks).astype(np.int64)
    extra, spare = (rest - paired).tolist(), (projected - paired).tolist()
    starts, bounds = offsets[first].tolist(), offsets[first + 1].tolist()
    keys_of = np.searchsorted(key_chunk, np.arange(n_chunks + 1)).tolist()  # keys are in chunk order
    for c in unique_int(key_chunk[(rest > paired) & ~still[key_chunk]]).tolist():
        wanted: list[tuple[str, ...]] = []
        offered: list[tuple[str, ...]] = []
        for k in range(keys_of[c], keys_of[c + 1]):
            if extra[k] or spare[k]:
                sub = tuple(map(str, codes[starts[k] : bounds[k]].tolist()))
                wanted += [sub] * extra[k]
                offered += [sub] * spare[k]
        if unmatched_subsets(wanted, offered):
            still[c] = True
    removed[still] = 0
    return still, removed


def _keys(words: npt.NDArray[np.uint64], chunk: Ints, offsets: Ints, codes: Codes) -> tuple[Ints, Ints, Ints]:
    """One key per distinct (chunk, sub-record): each sub-record's key, each
    key's first sub-record, and the sub-records that may not equal their key's
    first one (a hash collision; their chunks cannot be decided here)."""
    prefix = _hash_prefix(words, codes)
    hashes = prefix[offsets[1:]] - prefix[offsets[:-1]]
    lengths = np.diff(offsets)
    order = np.lexsort((hashes, lengths, chunk))
    new = np.ones(len(order), dtype=bool)
    new[1:] = (
        (chunk[order][1:] != chunk[order][:-1])
        | (lengths[order][1:] != lengths[order][:-1])
        | (hashes[order][1:] != hashes[order][:-1])
    )
    key = np.empty(len(order), dtype=np.int64)
    key[order] = np.cumsum(new) - 1
    first = order[new]
    rep = first[key]
    x = codes[concat_ranges(offsets[:-1], lengths)]
    y = codes[concat_ranges(offsets[rep], lengths)]
    uncertain = unique_int(np.repeat(np.arange(len(lengths)), lengths)[x != y])
    return key, first, uncertain


def _words(wide: int) -> npt.NDArray[np.uint64]:
    """A random word per code (``wide - 1`` codes; the last word for code -1)."""
    return np.random.default_rng(HASH_SEED).integers(0, 2**63, size=wide, dtype=np.uint64)


def tree_order(owner_parent: Ints, n_clusters: int) -> Ints:
    """The clusters in an order where the clusters under any joint cluster are
    consecutive (depth first through the joint clusters, release order among
    siblings): a run of clusters then has few joint clusters above it that
    reach outside it (at most those above its first and last cluster), so a
    unit carries the shared chunks of about its own joint clusters, not of
    most of the release's (REFINE's trees cover nearly all of it)."""
    path = []  # path[i]: each cluster's joint cluster i levels up, or -1
    up = owner_parent[:n_clusters].copy()
    while np.any(up >= 0):
        path.append(up.copy())
        up[up >= 0] = owner_parent[up[up >= 0]]
    depth = np.sum([level >= 0 for level in path], axis=0) if path else np.zeros(n_clusters, dtype=np.int64)
    from_root = np.full((len(path), n_clusters), -1, dtype=np.int64)  # row k: the ancestor k below the root
    for i, level in enumerate(path):
        has = np.flatnonzero(level >= 0)
        from_root[depth[has] - 1 - i, has] = level[has]
    return np.lexsort((np.arange(n_clusters), *from_root[::-1]))


def unit_arrays(d: ContentArrays, clusters: Ints) -> UnitArrays:
    """The payload of the unit of ``clusters`` (release positions): their chunks,
    rows, term chunks and ghosts, the shared chunks' domains of the joint
    clusters above them, and their records' occurrences gathered from the
    original (the trail's removed occurrences left out) in release codes."""
    joints = ancestors(d.owner_parent, clusters)
    parent = d.owner_parent[np.concatenate([clusters, joints])]  # a parent is a joint cluster
    wide = d.n_labels + 1
    cluster_chunks = d.owner_offsets[clusters + 1] - d.owner_offsets[clusters]
    chunks = concat_ranges(d.owner_offsets[clusters], cluster_chunks)
    term_counts = d.term_offsets[clusters + 1] - d.term_offsets[clusters]
    first = np.searchsorted(d.joint_keys, joints * wide)
    taken = concat_ranges(first, np.searchsorted(d.joint_keys, (joints + 1) * wide) - first)
    keys = d.joint_keys[taken]
    record_counts = d.member_offsets[clusters + 1] - d.member_offsets[clusters]
    positions = d.members[concat_ranges(d.member_offsets[clusters], record_counts)]
    occurrences = csr_positions(d.indptr, positions)
    lengths = d.indptr[positions + 1] - d.indptr[positions]
    if len(d.removed):
        gone = in_sorted(d.removed, occurrences)
        occurrences = occurrences[~gone]
        lengths -= np.bincount(np.repeat(np.arange(len(positions)), lengths)[gone], minlength=len(positions))
    return UnitArrays(
        clusters=clusters,
        n_labels=d.n_labels,
        cluster_chunks=cluster_chunks,
        published=_rows(d, chunks),
        term_counts=term_counts,
        term_items=d.term_items[concat_ranges(d.term_offsets[clusters], term_counts)],
        sizes=d.sizes[clusters],
        ghost_counts=d.ghost_counts[clusters],
        owner_parent=np.where(parent >= 0, len(clusters) + np.searchsorted(joints, parent), -1),
        record_counts=record_counts,
        record_lengths=lengths,
        codes=d.release_code[d.original_items[occurrences]],
        ghosts=_ghosts(d, chunks),
        joint_keys=(len(clusters) + np.searchsorted(joints, keys // wide)) * wide + keys % wide,
        joint_chunks=d.joint_chunks[taken],
    )


class Units(LazySequence[UnitArrays]):
    """The payload of each unit (:func:`unit_arrays`), built when the executor
    takes it, so the driver holds only the units in flight: runs of about
    :data:`UNIT_OCCURRENCES` original occurrences of the clusters in
    :func:`tree_order` (``occurrences`` per cluster)."""

    def __init__(self, data: ContentArrays, occurrences: Ints) -> None:
        self.data = data
        self.order = tree_order(data.owner_parent, data.n_clusters)
        self.spans = units(occurrences[self.order], UNIT_OCCURRENCES)

    def __len__(self) -> int:
        return len(self.spans)

    def _build(self, index: int) -> UnitArrays:
        a, b = self.spans[index]
        return unit_arrays(self.data, self.order[a:b])


def check_unit(u: UnitArrays) -> UnitResult:
    """Check the unit's clusters (see the module doc); their records'
    projections on shared chunks are returned for :func:`bad_joints`."""
    n_clusters = len(u.clusters)
    clusters = np.arange(n_clusters, dtype=np.int64)
    n_owners = len(u.owner_parent)
    wide = u.n_labels + 1

    # Published side: the clusters' record chunks, rows and items.
    n_chunks = int(u.cluster_chunks.sum())
    chunk_owner = np.repeat(clusters, u.cluster_chunks)
    row_chunk, row_offsets, row_codes = u.published
    row_of = np.repeat(np.arange(len(row_chunk)), np.diff(row_offsets))

    # Domains: (owner, item) -> where; an item twice in one view is a problem.
    chunk_item = unique_int(pair_key(row_chunk[row_of], row_codes))
    term_keys = unique_int(np.repeat(clusters, u.term_counts) * wide + u.term_items)
    entry_keys = np.concatenate(
        [chunk_owner[chunk_item >> 32] * wide + (chunk_item & 0xFFFFFFFF), term_keys, u.joint_keys]
    )
    entry_target = np.concatenate(
        [chunk_item >> 32, np.full(len(term_keys), TERM, dtype=np.int64), SHARED - u.joint_chunks]
    )
    sorter = np.argsort(entry_keys, kind="stable")
    keys, target_of = entry_keys[sorter], entry_target[sorter]
    view_bad = np.zeros(n_owners, dtype=bool)  # a problem in the view of every cluster under it
    twice = np.flatnonzero(keys[1:] == keys[:-1])
    view_bad[keys[twice] // wide] = True
    entry_owner, entry_item = keys // wide, keys % wide
    up = u.owner_parent[entry_owner]
    while np.any(up >= 0):
        has = np.flatnonzero(up >= 0)
        view_bad[entry_owner[has[in_sorted(keys, up[has] * wide + entry_item[has])]]] = True
        up[has] = u.owner_parent[up[has]]

    # The clusters' records, item by item, looked up in the view of their cluster.
    counts = u.record_counts
    n_records = len(u.record_lengths)
    record_cluster = np.repeat(clusters, counts)
    codes = u.codes
    record = np.repeat(np.arange(n_records), u.record_lengths)
    at = np.full(len(codes), NONE, dtype=np.int64)
    hit_entry = np.zeros(len(keys), dtype=bool)
    owner = record_cluster[record]
    pending = np.flatnonzero(codes >= 0)
    while len(pending) and len(keys):
        wanted = owner[pending] * wide + codes[pending]
        spot, hit = lookup_sorted(keys, wanted)
        at[pending[hit]] = target_of[spot[hit]]
        hit_entry[spot[hit]] = True
        miss = pending[~hit]
        owner[miss] = u.owner_parent[owner[miss]]
        pending = miss[owner[miss] >= 0]

    cluster_bad = np.zeros(n_owners, dtype=bool)
    cluster_bad[clusters[(counts > u.sizes) | (u.sizes > counts + u.ghost_counts)]] = True
    invented = (target_of == TERM) & ~hit_entry
    cluster_bad[entry_owner[invented]] = True

    # Projections (one sub-record per record and chunk it meets): on record
    # chunks, with the ghosts, against the rows; on shared chunks, returned.
    meets = np.flatnonzero((at >= 0) | (at <= SHARED))
    ordered = meets[np.lexsort((codes[meets], record[meets], at[meets]))]
    group = at[ordered] * (n_records + 1) + record[ordered]
    starts = run_starts(group)
    sub_chunk, sub_lengths = at[ordered[starts]], np.diff(np.r_[starts, len(ordered)])
    sub_codes = codes[ordered]
    shared = sub_chunk <= SHARED
    in_shared = np.repeat(shared, sub_lengths)
    projections = (sub_chunk[~shared], offsets_of(sub_lengths[~shared]), sub_codes[~in_shared])
    bad, removed = _compared(_words(wide), n_chunks, projections, u.ghosts, u.published)
    cluster_bad[chunk_owner[bad]] = True

    # A cluster is flagged when its own checks or any view above it failed.
    flagged = cluster_bad[clusters] | view_bad[clusters]
    above = u.owner_parent[clusters]
    while np.any(above >= 0):
        has = np.flatnonzero(above >= 0)
        flagged[has] |= view_bad[above[has]]
        above[has] = u.owner_parent[above[has]]
    lost = np.bincount(record_cluster[record[at == NONE]], minlength=n_clusters)
    lost += np.bincount(chunk_owner, weights=removed, minlength=n_clusters).astype(np.int64)
    return UnitResult(
        int(lost[~flagged].sum()),
        u.clusters[flagged],
        SHARED - sub_chunk[shared],
        sub_lengths[shared],
        sub_codes[in_shared],
    )


def _rows(d: ContentArrays, chunks: Ints) -> tuple[Ints, Ints, Codes]:
    """The rows of these chunks: each row's position in ``chunks``, offsets, and
    codes (ascending within each row)."""
    per_chunk = d.chunk_offsets[chunks + 1] - d.chunk_offsets[chunks]
    rows = concat_ranges(d.chunk_offsets[chunks], per_chunk)
    row_chunk = np.repeat(np.arange(len(chunks)), per_chunk)
    row_codes, row_lengths = d.items[csr_positions(d.row_offsets, rows)], d.row_offsets[rows + 1] - d.row_offsets[rows]
    row_offsets = offsets_of(row_lengths)
    row_of = np.repeat(np.arange(len(rows)), row_lengths)
    if len(row_codes) > 1 and np.any((np.diff(row_codes) <= 0) & (row_of[1:] == row_of[:-1])):
        row_codes = row_codes[np.lexsort((row_codes, row_of))]  # rows as sets, ascending
    return row_chunk, row_offsets, row_codes


def _ghosts(d: ContentArrays, chunks: Ints) -> Subs:
    """The trail's ghost sub-records of these chunks (their positions in ``chunks``)."""
    first_ghost = np.searchsorted(d.ghost_chunk, chunks)
    ghosts_of = np.searchsorted(d.ghost_chunk, chunks, side="right") - first_ghost
    ghosts = concat_ranges(first_ghost, ghosts_of)
    return (
        np.repeat(np.arange(len(chunks)), ghosts_of),
        offsets_of(d.ghost_offsets[ghosts + 1] - d.ghost_offsets[ghosts]),
        d.ghost_items[csr_positions(d.ghost_offsets, ghosts)],
    )


def joint_domains(arrays: ReleaseArrays, wide: int) -> tuple[Ints, Ints]:
    """Every distinct item of every shared chunk as ``owner * wide + item``,
    ascending, and the release chunk index holding it."""
    first = int(arrays.owner_offsets[arrays.n_clusters])
    start = int(arrays.row_offsets[arrays.chunk_offsets[first]])
    rows_per_chunk = np.diff(arrays.chunk_offsets[first:])
    chunk_of_row = np.repeat(np.arange(first, arrays.n_chunks, dtype=np.int64), rows_per_chunk)
    chunk_of_code = np.repeat(chunk_of_row, np.diff(arrays.row_offsets[arrays.chunk_offsets[first] :]))
    pairs = unique_int(pair_key(chunk_of_code, arrays.items[start:]))
    chunks, items = pairs >> 32, pairs & 0xFFFFFFFF
    keys = (np.searchsorted(arrays.owner_offsets, chunks, side="right") - 1) * wide + items
    order = np.argsort(keys, kind="stable")
    return keys[order], chunks[order]


def bad_joints(data: ContentArrays, results: list[UnitResult]) -> tuple[Ints, int]:
    """The joint clusters (positions) whose shared chunks are not the
    projections the units returned plus their ghosts, nor that with items
    removed (:func:`_compared`), and the item occurrences removed from the
    other joint clusters' shared chunks without a trail entry. Compared a slab
    of shared chunks (about :data:`privtool.arrays.SLAB_OCCURRENCES` published occurrences)
    at a time so that the driver's temporaries stay bounded (at 5M records all
    the shared chunks at once took 1.9 GB)."""
    d = data
    first = int(d.owner_offsets[d.n_clusters])
    empty = np.zeros(0, dtype=np.int64)
    sub_chunk = np.concatenate([r.shared_chunk for r in results] or [empty]) - first
    lengths = np.concatenate([r.shared_lengths for r in results] or [empty])
    codes = np.concatenate([r.shared_codes for r in results] or [np.zeros(0, dtype=np.int32)])
    starts = offsets_of(lengths)[:-1]
    by_chunk = np.argsort(sub_chunk, kind="stable")  # each chunk's sub-records in the units' order
    sorted_chunk = sub_chunk[by_chunk]
    row_bounds = d.row_offsets[d.chunk_offsets[first:]]
    words = _words(d.n_labels + 1)
    found, removals = [empty], [empty]
    for lo, hi in units(np.diff(row_bounds), SLAB_OCCURRENCES):
        chunks = np.arange(first + lo, first + hi, dtype=np.int64)
        a, b = np.searchsorted(sorted_chunk, [lo, hi])
        picked = by_chunk[a:b]
        projections = (
            sorted_chunk[a:b] - lo,
            offsets_of(lengths[picked]),
            codes[concat_ranges(starts[picked], lengths[picked])],
        )
        bad, removed = _compared(words, len(chunks), projections, _ghosts(d, chunks), _rows(d, chunks))
        found.append(chunks[bad])
        removals.append(removed)
    owner_of_chunk = np.searchsorted(d.owner_offsets, np.arange(first, len(d.chunk_offsets) - 1), side="right") - 1
    flagged = unique_int(np.searchsorted(d.owner_offsets, np.concatenate(found), side="right") - 1)
    counted = ~np.isin(owner_of_chunk, flagged)
    return flagged - d.n_clusters, int(np.concatenate(removals)[counted].sum())
