"""Turn a :class:`~privtool.chain.Disassociation` into the published release and its trail.

Release layout (docs/design.md, "Release format"): cluster ``c<i>`` for the i-th
cluster, joint cluster ``j<n>`` for the n-th joint plan, whose ``members`` list
every simple cluster under it: a joint plan nested in a later one is flattened
(the later joint lists the earlier one's clusters too, which is what its shared
chunks cover; the member sets are laminar, which ``privtool verify`` checks, and
readers such as the reconstruction sampler need no tree walk); record and shared
chunks list their non-empty sub-records; a member's term chunk loses the terms
that a joint cluster publishes in a shared chunk. The trail maps each input
record to its cluster id (``None`` when suppressed).

The content is built directly in canonical order (:meth:`privtool.release.Release.canonical`:
items of a sub-record by label, the sub-records of a chunk in lexicographic
order, term chunks by label), vectorised: the clusters are laid out so that
each joint plan's clusters are consecutive (:func:`cluster_layout`), every
record is read once and every chunk's occurrences found as slices of its
records' occurrences sorted by (term, position) (:func:`project`), and the
sub-records are ordered by integer sorts (:func:`canonical_chunks`): no Python
object per item occurrence or per sub-record, so nothing here follows input
order into the file. A record under many nested joint clusters is not read
again for each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np

from privtool.arrays import (
    SLAB_OCCURRENCES,
    concat_ranges,
    int_bincount,
    lexicographic_order,
    offsets_of,
    rank_in_runs,
    run_starts,
    search_sorted,
    slabs,
    sort_int,
    stable_order,
    unique_int,
)
from privtool.chain import Disassociation, JointPlan
from privtool.components import Outcome
from privtool.dataset import Dataset, label_sort_key
from privtool.record_clusters import RecordClusters
from privtool.release import Release
from privtool.release_arrays import ReleaseArrays, frozen
from privtool.trail import Trail

from .horpart import occurrences


def simple_members(plans: list[JointPlan]) -> list[list[int]]:
    """For every joint plan, the indexes of the simple clusters under it
    (nested joints resolved; a plan names only earlier plans), ascending."""
    out: list[list[int]] = []
    for plan in plans:
        members: list[int] = []
        for kind, index in plan.members:
            members.extend(out[index] if kind == "j" else (index,))
        out.append(sorted(members))
    return out


def canonical_ranks(dataset: Dataset) -> np.ndarray:
    """``rank[id]``: the position of item ``id``'s label in canonical label order
    (:func:`privtool.dataset.label_sort_key`; the identity for a dataset whose
    vocabulary is in that order, as read from a file)."""
    labels = dataset.labels
    order = sorted(range(len(labels)), key=lambda i: label_sort_key(labels[i]))
    rank = np.empty(len(labels), dtype=np.int64)
    rank[np.asarray(order, dtype=np.int64)] = np.arange(len(labels), dtype=np.int64)
    return rank


@dataclass
class Layout:
    """The clusters laid out so that the clusters under each joint plan sit
    together: ``order`` lists the clusters in layout order and ``position`` is
    each cluster's place in it; the clusters under joint plan ``runs_joint[i]``
    include the positions ``runs_lo[i]`` to ``runs_hi[i] - 1``, and those runs
    cover them exactly, one run per plan when the plans' sets of clusters nest."""

    order: np.ndarray
    position: np.ndarray
    runs_joint: np.ndarray
    runs_lo: np.ndarray
    runs_hi: np.ndarray

    def joint_entries(self, joint: np.ndarray, term: np.ndarray, chunk: np.ndarray) -> np.ndarray:
        """Rows ``(lo, hi, term, chunk)`` for :func:`project`: the terms
        ``term`` of joint plans ``joint``, of chunks ``chunk``, once per run of
        the plan's clusters."""
        runs = np.argsort(self.runs_joint, kind="stable")
        bounds = np.searchsorted(self.runs_joint[runs], np.arange(int(joint.max(initial=-1)) + 2))
        per_entry = (bounds[1:] - bounds[:-1])[joint]
        run = runs[concat_ranges(bounds[:-1][joint], per_entry)]
        return np.stack(
            [self.runs_lo[run], self.runs_hi[run], np.repeat(term, per_entry), np.repeat(chunk, per_entry)], axis=1
        ).reshape(-1, 4)


def cluster_layout(n_clusters: int, joint_members: list[list[int]]) -> Layout:
    """The :class:`Layout` of ``n_clusters`` clusters under joint plans whose
    simple clusters are ``joint_members`` (:func:`simple_members`).

    Clusters are ordered by their chains of plans, outermost first (a plan over
    more clusters is outer; over the same clusters, the later one). When the
    plans' sets nest (REFINE's form a tree), every cluster under a plan has the
    same chain down to it, so each plan's clusters are consecutive; sets that
    cross take several runs."""
    n_joints = len(joint_members)
    sizes = np.fromiter(map(len, joint_members), dtype=np.int64, count=n_joints)
    clusters = np.fromiter(chain.from_iterable(joint_members), dtype=np.int64, count=int(sizes.sum()))
    joints = np.repeat(np.arange(n_joints, dtype=np.int64), sizes)
    pairs = unique_int(joints * max(n_clusters, 1) + clusters, runs=True)  # a cluster listed twice counts once
    joints, clusters = np.divmod(pairs, max(n_clusters, 1))
    width = np.bincount(joints, minlength=n_joints)
    outer = np.lexsort((-np.arange(n_joints), -width))  # outermost first
    level = np.empty(n_joints, dtype=np.int64)
    level[outer] = np.arange(n_joints, dtype=np.int64)
    chains = unique_int(clusters * max(n_joints, 1) + level[joints])  # by cluster, outermost first
    holder, links = np.divmod(chains, max(n_joints, 1))
    starts = run_starts(holder)
    depth = rank_in_runs(starts, len(holder))
    table = np.full((n_clusters, int(depth.max()) + 1 if len(depth) else 0), -1, dtype=np.int64)
    table[holder, depth] = links
    order = np.lexsort(table.T[::-1]) if table.shape[1] else np.arange(n_clusters, dtype=np.int64)
    position = np.empty(n_clusters, dtype=np.int64)
    position[order] = np.arange(n_clusters, dtype=np.int64)
    placed = np.sort(joints * (n_clusters + 1) + position[clusters])  # a gap between two joints' positions
    run_start = np.flatnonzero(np.r_[True, placed[1:] != placed[:-1] + 1]) if len(placed) else placed
    run_end = np.r_[run_start[1:], len(placed)]
    runs_joint, runs_lo = np.divmod(placed[run_start], n_clusters + 1)
    return Layout(order, position, runs_joint, runs_lo, runs_lo + (run_end - run_start))


def domain_table(domains: Sequence[Sequence[tuple[int, ...]]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every term of every domain as ``(owner, term, chunk)``: owner ``g`` of
    ``domains[g]``, chunks numbered in order across the owners. (Flattened
    one level at a time: a generator nested in a generator costs several
    times as much a term.)"""
    flat = list(chain.from_iterable(domains))
    sizes = list(map(len, flat))
    owner = np.repeat(np.arange(len(domains), dtype=np.int64), list(map(len, domains)))
    terms = np.fromiter(chain.from_iterable(flat), dtype=np.int64, count=sum(sizes))
    chunk = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
    return owner[chunk], terms, chunk


PROJECT_BATCH_ROWS = 200_000
"""Records read per vectorised step of :func:`project` (a larger cluster alone)."""


def project(
    dataset: Dataset, rank: np.ndarray, clusters: list[np.ndarray], layout: Layout, entries: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The sub-records of every chunk: the non-empty projections of the records
    of the clusters at positions ``lo`` to ``hi - 1`` of ``layout`` on the
    chunk's domain, for each row ``(lo, hi, term, chunk)`` of ``entries``.
    Returns ``(chunk, items, offsets)``: each sub-record's chunk and its items
    as canonical ranks (``rank``: :func:`canonical_ranks`), both int32, ascending, cut by
    ``offsets``; sub-records of a chunk are together, in no particular order.

    Vectorised, :data:`PROJECT_BATCH_ROWS` records at a time, in layout order:
    the batch's occurrences sorted by (term, position), so that the
    occurrences an entry covers are one slice, found by two binary searches;
    each record is read once, however many joint clusters hold it. The hits
    are sorted by (chunk, record); entries taken by ascending rank leave each
    sub-record's items ascending."""
    entries = entries[stable_order(rank[entries[:, 2]], len(rank))]
    n_pos = max(len(clusters), 1)
    sizes = np.fromiter((len(clusters[c]) for c in layout.order.tolist()), dtype=np.int64, count=len(clusters))
    batches = slabs(np.cumsum(sizes), PROJECT_BATCH_ROWS)
    entry, entry_offsets = _entries_by_batch(entries, np.array([first for first, _ in batches], dtype=np.int64))
    out_chunk: list[np.ndarray] = [np.zeros(0, dtype=np.int32)]
    out_items: list[np.ndarray] = [np.zeros(0, dtype=np.int32)]
    out_lengths: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
    for batch, (first, last) in enumerate(batches):
        rows = np.concatenate([clusters[c] for c in layout.order[first:last].tolist()])
        items, local = occurrences(dataset, rows)
        occ_pos = np.repeat(np.arange(first, last, dtype=np.int64), sizes[first:last])[local]
        by_term = stable_order(items, dataset.n_items)
        keys = items[by_term].astype(np.int64) * n_pos + occ_pos[by_term]
        here = entries[entry[entry_offsets[batch] : entry_offsets[batch + 1]]]
        lo, hi = np.maximum(here[:, 0], first), np.minimum(here[:, 1], last)
        begin = search_sorted(keys, here[:, 2] * n_pos + lo)
        count = search_sorted(keys, here[:, 2] * n_pos + hi) - begin
        hits = by_term[concat_ranges(begin, count)]
        chunk = np.repeat(here[:, 3], count)
        order = stable_order(chunk * len(rows) + local[hits], (int(chunk.max(initial=0)) + 1) * len(rows))
        chunk, hits = chunk[order], hits[order]
        row_key = chunk * len(rows) + local[hits]
        starts = run_starts(row_key)
        out_chunk.append(chunk[starts].astype(np.int32))
        out_items.append(rank[items[hits]].astype(np.int32))
        out_lengths.append(np.diff(np.r_[starts, len(hits)]))
    return np.concatenate(out_chunk), np.concatenate(out_items), offsets_of(np.concatenate(out_lengths))


def _entries_by_batch(entries: np.ndarray, batch_starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows of ``entries`` (``(lo, hi, term, chunk)``) that each batch of
    positions (from ``batch_starts[b]`` to the next start) meets, as CSR
    ``(rows, offsets)``: a row once per batch it meets, in the order of
    ``entries`` within a batch. Found once for all batches, not by a filter
    over every row per batch (which grows like the records squared)."""
    first = np.searchsorted(batch_starts, entries[:, 0], side="right") - 1
    span = np.maximum(np.searchsorted(batch_starts, entries[:, 1] - 1, side="right") - first, 0)
    batch = concat_ranges(first, span)
    order = stable_order(batch, len(batch_starts))
    rows = np.repeat(np.arange(len(entries), dtype=np.int64), span)[order]
    return rows, np.searchsorted(batch[order], np.arange(len(batch_starts) + 1))


def canonical_chunks(
    chunk: np.ndarray, items: np.ndarray, offsets: np.ndarray, n_chunks: int, code: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sub-records (:func:`project`) in canonical order: by chunk, then by
    their items as sequences (:func:`privtool.arrays.lexicographic_order`),
    each item replaced by ``code[item]`` (int32). Returns ``(items,
    row_offsets, chunk_offsets)``.

    A slab of whole chunks (about :data:`privtool.arrays.SLAB_OCCURRENCES`
    items) at a time: its sub-records gathered together, ordered and recoded,
    so that no temporary but the order of the sub-records by chunk grows with
    the release (a larger one is a fresh mapping, faulted in anew, each time:
    docs/results/scale.md, "Session 10: disassociate at 5M")."""
    lengths = np.diff(offsets)
    by_chunk = stable_order(chunk, n_chunks)
    chunk_offsets = offsets_of(np.bincount(chunk, minlength=n_chunks))
    ends = np.cumsum(int_bincount(chunk, lengths, n_chunks))
    item_parts = [np.zeros(0, dtype=np.int32)]
    length_parts = [np.zeros(0, dtype=np.int64)]
    for first, last in slabs(ends, SLAB_OCCURRENCES):
        rows = by_chunk[chunk_offsets[first] : chunk_offsets[last]]
        here = lengths[rows]
        slab_items = items[concat_ranges(offsets[rows], here)]
        local = offsets_of(here)
        order = lexicographic_order(chunk[rows], slab_items, local)
        item_parts.append(code[slab_items[concat_ranges(local[:-1][order], here[order])]])
        length_parts.append(here[order])
    return np.concatenate(item_parts), offsets_of(np.concatenate(length_parts)), chunk_offsets


def term_chunks(
    dis: Disassociation, rank: np.ndarray, layout: Layout, shared: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Every cluster's term chunk as canonical ranks, ascending, in CSR form
    ``(items, offsets)``: the chunker's term chunk without the terms a joint
    cluster above it publishes in a shared chunk (``shared``: rows ``(lo,
    hi, term, chunk)`` over ``layout`` positions, as for :func:`project`).

    The (cluster, term) pairs sorted by (term, position): the pairs a shared
    entry covers are one slice, and a difference array marks every covered pair."""
    n_pos = max(len(dis.chunks), 1)
    owner, terms, _ = domain_table([[c.term_chunk] for c in dis.chunks])
    keys = sort_int(terms * n_pos + layout.position[owner])
    begin = search_sorted(keys, shared[:, 2] * n_pos + shared[:, 0])
    end = search_sorted(keys, shared[:, 2] * n_pos + shared[:, 1])
    cover = np.cumsum(np.bincount(begin, minlength=len(keys) + 1) - np.bincount(end, minlength=len(keys) + 1))
    terms, position = np.divmod(keys[cover[:-1] == 0], n_pos)
    span = max(len(rank), 1)
    kept = sort_int(layout.order[position] * span + rank[terms])
    offsets = np.searchsorted(kept // span, np.arange(len(dis.chunks) + 1))
    return kept % span, offsets.astype(np.int64)


def build_outcome(dataset: Dataset, dis: Disassociation, kind_params: dict[str, Any]) -> Outcome:
    """The ``disassociated`` release and the trail of ``dis`` over ``dataset``;
    the release is backed by its CSR arrays (:class:`privtool.release_arrays.ReleaseArrays`),
    built here in canonical order."""
    rank = canonical_ranks(dataset)
    joint_members = simple_members(dis.joints)
    layout = cluster_layout(len(dis.clusters), joint_members)
    owner, terms, chunk = domain_table([c.record_chunks for c in dis.chunks])
    lo = layout.position[owner]
    record_entries = np.stack([lo, lo + 1, terms, chunk], axis=1)
    n_record_chunks = sum(len(c.record_chunks) for c in dis.chunks)
    owner, terms, chunk = domain_table(shared_domains(dis))
    shared_entries = layout.joint_entries(owner, terms, chunk + n_record_chunks)
    n_chunks = n_record_chunks + sum(len(plan.shared_chunks) for plan in dis.joints)
    row_chunk, row_items, row_offsets = project(
        dataset, rank, dis.clusters, layout, np.concatenate([record_entries, shared_entries])
    )
    term_ranks, term_offsets = term_chunks(dis, rank, layout, shared_entries)
    uses = np.bincount(row_items, minlength=len(rank)) + np.bincount(term_ranks, minlength=len(rank))
    used = np.flatnonzero(uses)  # ranks of the published labels; their codes:
    code = (np.cumsum(uses > 0) - 1).astype(np.int32)
    items, row_offsets, chunk_offsets = canonical_chunks(row_chunk, row_items, row_offsets, n_chunks, code)
    del row_chunk, row_items
    by_rank = np.argsort(rank)
    cluster_ids = tuple(f"c{i}" for i in range(len(dis.clusters)))
    arrays = ReleaseArrays(
        labels=tuple(dataset.labels[i] for i in by_rank[used].tolist()),
        items=frozen(items, np.int32),
        row_offsets=frozen(row_offsets, np.int64),
        chunk_offsets=frozen(chunk_offsets, np.int64),
        owner_offsets=offsets_of(chain((len(c.record_chunks) for c in dis.chunks), map(len, shared_domains(dis)))),
        term_items=frozen(code[term_ranks], np.int32),
        term_offsets=frozen(term_offsets, np.int64),
        cluster_ids=cluster_ids,
        cluster_sizes=frozen([len(rows) for rows in dis.clusters], np.int64),
        joint_ids=tuple(f"j{n}" for n in range(len(dis.joints))),
        joint_members=tuple(tuple(map(cluster_ids.__getitem__, members)) for members in joint_members),
    )
    chunk_occurrences = int(row_offsets[chunk_offsets[n_record_chunks]])
    shared_occurrences = len(items) - chunk_occurrences
    published = int(dataset.n_occurrences - dataset.sizes[dis.suppressed].sum())
    stats = {
        "records_in": dataset.n_records,
        "records_published": int(sum(len(rows) for rows in dis.clusters)),
        "suppressed_records": len(dis.suppressed),
        "item_occurrences_in": dataset.n_occurrences,
        "item_occurrences_published": published,
        "item_occurrences_in_record_chunks": chunk_occurrences,
        "item_occurrences_in_shared_chunks": shared_occurrences,
        "item_occurrences_in_term_chunks": published - chunk_occurrences - shared_occurrences,
        "clusters": len(dis.clusters),
        "joint_clusters": len(dis.joints),
        "record_chunks": n_record_chunks,
        "shared_chunks": n_chunks - n_record_chunks,
    }
    release = Release.from_arrays(arrays, "disassociated", params=dict(kind_params), stats=stats)
    return Outcome(release, trail_of(dataset, dis))


def shared_domains(dis: Disassociation) -> list[list[tuple[int, ...]]]:
    """Each joint plan's shared chunk domains."""
    return [list(plan.shared_chunks) for plan in dis.joints]


def trail_of(dataset: Dataset, dis: Disassociation) -> Trail:
    """Each input record's cluster id (``None`` when suppressed), and the suppressed positions."""
    cluster_of = np.full(dataset.n_records, -1, dtype=np.int32)
    if dis.clusters:
        cluster_of[np.concatenate(dis.clusters)] = np.repeat(
            np.arange(len(dis.clusters), dtype=np.int32), [len(rows) for rows in dis.clusters]
        )
    return Trail(
        cluster_of_record=RecordClusters([f"c{i}" for i in range(len(dis.clusters))], cluster_of),
        suppressed_records=[int(r) for r in dis.suppressed.tolist()],
    )
