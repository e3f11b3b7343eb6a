"""Faithfulness's content check on arrays, in units of clusters for the executors
(issue 20: no Python object per item occurrence, and the check off the driver).

:class:`ContentArrays` holds, once, everything the check needs as numpy arrays:
the release's CSR (codes only), the original records in the release's codes
(the trail's removed occurrences left out, labels the release never publishes
as -1) grouped by cluster through the trail, and the trail's ghost
sub-records. A unit is a plain range of clusters (:func:`units`); it returns
its records' projections on the shared chunks, and :func:`bad_joints` compares
those with the shared chunks once, in the driver (REFINE nests joint clusters
into trees that cover nearly the whole release, so units cut by top joint
cluster would be one unit). The driver cuts no per-cluster data:
:func:`check_unit` slices what its unit needs from the shared arrays, on a
worker when the arrays were sent there once.

:func:`check_unit` is exact but one-sided: what it passes is faithful exactly as
:func:`privtool.verifiers.faithfulness.check_disassociated_content`'s
per-cluster check would find it (every chunk the multiset of its records'
projections plus its ghosts, compared item by item after pairing sub-records
by a hash of their items; domains disjoint; term chunks made of the records'
items; sizes), and everything else (a pair that does not match, partial
suppression, any problem) is returned as flagged for that per-cluster check,
which finds the witness or counts the removals.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import numpy.typing as npt

from privtool.arrays import concat_ranges, csr_positions, offsets_of, pair_key, unique_int
from privtool.release_arrays import Codes, Ints, ReleaseArrays

NONE = -2
"""Lookup result of an occurrence whose item the cluster publishes nowhere."""
TERM = -1
"""Lookup result of an occurrence whose item is in the cluster's term chunk."""
SHARED = -3
"""Lookup result ``SHARED - c`` of an occurrence whose item is in shared chunk ``c``."""
REMOVED = -2
"""Code of an original occurrence the trail removed (``ContentArrays.codes``)."""
HASH_SEED = 0x5EED_F417
UNIT_OCCURRENCES = 1 << 21
"""Original item occurrences per unit (about; a larger cluster is a unit alone)."""
SLAB_OCCURRENCES = 1 << 22
"""Published shared-chunk occurrences :func:`bad_joints` compares at a time (about)."""


@dataclass(frozen=True, eq=False)
class ContentArrays:
    """What :func:`check_unit` reads (see the module doc). Owners are the clusters
    (``0..n_clusters-1``) then the joint clusters (``n_clusters + j``), as in
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
    codes: Codes
    """The original's items in release codes (-1: not published, :data:`REMOVED`)."""
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


@dataclass(frozen=True)
class UnitResult:
    """``silent``: item occurrences published nowhere in the unit's clusters that
    were not flagged; ``clusters``: positions flagged for the per-cluster check;
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


def _words(wide: int) -> npt.NDArray[np.uint64]:
    """A random word per code (``wide - 1`` codes; the last word for code -1)."""
    return np.random.default_rng(HASH_SEED).integers(0, 2**63, size=wide, dtype=np.uint64)


def check_unit(data: ContentArrays, span: tuple[int, int]) -> UnitResult:
    """Check clusters ``span[0]..span[1]-1`` (see the module doc); their
    records' projections on shared chunks are returned for :func:`bad_joints`."""
    d = data
    clusters = np.arange(span[0], span[1], dtype=np.int64)
    joints = ancestors(d.owner_parent, clusters)
    n_owners = len(d.owner_offsets) - 1
    wide = d.n_labels + 1

    # Published side: the clusters' record chunks, rows and items (local chunk numbers).
    per_owner = d.owner_offsets[clusters + 1] - d.owner_offsets[clusters]
    chunks = concat_ranges(d.owner_offsets[clusters], per_owner)
    chunk_owner = np.repeat(clusters, per_owner)
    row_chunk, row_offsets, row_codes = _rows(d, chunks)
    row_of = np.repeat(np.arange(len(row_chunk)), np.diff(row_offsets))

    # Domains: (owner, item) -> where; an item twice in one view is a problem.
    chunk_item = unique_int(pair_key(row_chunk[row_of], row_codes))
    per_term = d.term_offsets[clusters + 1] - d.term_offsets[clusters]
    term_codes = d.term_items[concat_ranges(d.term_offsets[clusters], per_term)]
    term_keys = unique_int(np.repeat(clusters, per_term) * wide + term_codes)
    first = np.searchsorted(d.joint_keys, joints * wide)
    taken = concat_ranges(first, np.searchsorted(d.joint_keys, (joints + 1) * wide) - first)
    entry_keys = np.concatenate(
        [chunk_owner[chunk_item >> 32] * wide + (chunk_item & 0xFFFFFFFF), term_keys, d.joint_keys[taken]]
    )
    entry_target = np.concatenate(
        [chunk_item >> 32, np.full(len(term_keys), TERM, dtype=np.int64), SHARED - d.joint_chunks[taken]]
    )
    sorter = np.argsort(entry_keys, kind="stable")
    keys, target_of = entry_keys[sorter], entry_target[sorter]
    view_bad = np.zeros(n_owners, dtype=bool)  # a problem in the view of every cluster under it
    twice = np.flatnonzero(keys[1:] == keys[:-1])
    view_bad[keys[twice] // wide] = True
    entry_owner, entry_item = keys // wide, keys % wide
    up = d.owner_parent[entry_owner]
    while np.any(up >= 0):
        has = np.flatnonzero(up >= 0)
        view_bad[entry_owner[has[_found(keys, up[has] * wide + entry_item[has])]]] = True
        up[has] = d.owner_parent[up[has]]

    # The clusters' records, item by item, looked up in the view of their cluster.
    counts = d.member_offsets[clusters + 1] - d.member_offsets[clusters]
    positions = d.members[concat_ranges(d.member_offsets[clusters], counts)]
    record_cluster = np.repeat(clusters, counts)
    lengths = d.indptr[positions + 1] - d.indptr[positions]
    codes = d.codes[concat_ranges(d.indptr[positions], lengths)]
    record = np.repeat(np.arange(len(positions)), lengths)
    kept = codes != REMOVED
    codes, record = codes[kept], record[kept]
    at = np.full(len(codes), NONE, dtype=np.int64)
    hit_entry = np.zeros(len(keys), dtype=bool)
    owner = record_cluster[record]
    pending = np.flatnonzero(codes >= 0)
    while len(pending) and len(keys):
        wanted = owner[pending] * wide + codes[pending]
        spot = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
        hit = keys[spot] == wanted
        at[pending[hit]] = target_of[spot[hit]]
        hit_entry[spot[hit]] = True
        miss = pending[~hit]
        owner[miss] = d.owner_parent[owner[miss]]
        pending = miss[owner[miss] >= 0]

    cluster_bad = np.zeros(n_owners, dtype=bool)
    cluster_bad[clusters[(counts > d.sizes[clusters]) | (d.sizes[clusters] > counts + d.ghost_counts[clusters])]] = True
    invented = (target_of == TERM) & ~hit_entry
    cluster_bad[entry_owner[invented]] = True

    # Projections (one sub-record per record and chunk it meets): on record
    # chunks, with the ghosts, against the rows; on shared chunks, returned.
    meets = np.flatnonzero((at >= 0) | (at <= SHARED))
    ordered = meets[np.lexsort((codes[meets], record[meets], at[meets]))]
    group = at[ordered] * (len(positions) + 1) + record[ordered]
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]]) if len(group) else np.zeros(0, dtype=np.int64)
    sub_chunk, sub_lengths = at[ordered[starts]], np.diff(np.r_[starts, len(ordered)])
    sub_codes = codes[ordered]
    shared = sub_chunk <= SHARED
    in_shared = np.repeat(shared, sub_lengths)
    a_chunk, a_offsets, a_codes = _with_ghosts(
        d, chunks, sub_chunk[~shared], sub_lengths[~shared], sub_codes[~in_shared]
    )
    bad = _bad_chunks(_words(wide), len(chunks), a_chunk, a_offsets, a_codes, row_chunk, row_offsets, row_codes)
    cluster_bad[chunk_owner[bad]] = True

    # A cluster is flagged when its own checks or any view above it failed.
    flagged = cluster_bad[clusters] | view_bad[clusters]
    above = d.owner_parent[clusters]
    while np.any(above >= 0):
        has = np.flatnonzero(above >= 0)
        flagged[has] |= view_bad[above[has]]
        above[has] = d.owner_parent[above[has]]
    lost = np.bincount(record_cluster[record[at == NONE]] - span[0], minlength=len(clusters))
    return UnitResult(
        int(lost[~flagged].sum()),
        clusters[flagged],
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


def _with_ghosts(
    d: ContentArrays, chunks: Ints, sub_chunk: Ints, lengths: Ints, codes: Codes
) -> tuple[Ints, Ints, Codes]:
    """Sub-records (``sub_chunk`` indexes ``chunks``) and the trail's ghosts of
    those chunks together: (chunk, offsets, codes)."""
    first_ghost = np.searchsorted(d.ghost_chunk, chunks)
    ghosts_of = np.searchsorted(d.ghost_chunk, chunks, side="right") - first_ghost
    ghosts = concat_ranges(first_ghost, ghosts_of)
    all_lengths = np.concatenate([lengths, d.ghost_offsets[ghosts + 1] - d.ghost_offsets[ghosts]])
    offsets = offsets_of(all_lengths)
    all_codes = np.concatenate([codes, d.ghost_items[csr_positions(d.ghost_offsets, ghosts)]])
    return np.concatenate([sub_chunk, np.repeat(np.arange(len(chunks)), ghosts_of)]), offsets, all_codes


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


def bad_joints(data: ContentArrays, results: list[UnitResult]) -> Ints:
    """The joint clusters (positions) whose shared chunks are not exactly the
    projections the units returned plus their ghosts, compared a slab of
    shared chunks (about :data:`SLAB_OCCURRENCES` published occurrences) at a
    time so that the driver's temporaries stay bounded (at 5M records all the
    shared chunks at once took 1.9 GB)."""
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
    found = [empty]
    for lo, hi in units(np.diff(row_bounds), SLAB_OCCURRENCES):
        chunks = np.arange(first + lo, first + hi, dtype=np.int64)
        row_chunk, row_offsets, row_codes = _rows(d, chunks)
        a, b = np.searchsorted(sorted_chunk, [lo, hi])
        picked = by_chunk[a:b]
        a_chunk, a_offsets, a_codes = _with_ghosts(
            d, chunks, sorted_chunk[a:b] - lo, lengths[picked], codes[concat_ranges(starts[picked], lengths[picked])]
        )
        bad = _bad_chunks(words, len(chunks), a_chunk, a_offsets, a_codes, row_chunk, row_offsets, row_codes)
        found.append(chunks[bad])
    owners = np.searchsorted(d.owner_offsets, np.concatenate(found), side="right") - 1
    return unique_int(owners) - d.n_clusters


def _found(keys: Ints, wanted: Ints) -> npt.NDArray[np.bool_]:
    """Whether each of ``wanted`` is in the sorted ``keys``."""
    if not len(keys):
        return np.zeros(len(wanted), dtype=bool)
    spot = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    return keys[spot] == wanted
