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
order, term chunks by label), vectorised: one lookup of every occurrence's
chunk, one sort, and one comparison key per sub-record (bytes), never a Python
object per item occurrence, so nothing here follows input order into the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np

from privtool.chain import Disassociation
from privtool.components import Outcome
from privtool.dataset import Dataset, label_sort_key
from privtool.release import Cluster, JointCluster, Release
from privtool.trail import Trail

from .horpart import occurrences


def simple_members(dis: Disassociation) -> list[list[int]]:
    """For every joint plan, the indexes of the simple clusters under it
    (nested joints resolved; a plan names only earlier plans), ascending."""
    out: list[list[int]] = []
    for plan in dis.joints:
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
class ChunkRows:
    """Chunks in CSR form, each chunk's sub-records in canonical order:
    ``items`` (canonical ranks of the labels) cut into sub-records by
    ``row_offsets``, the sub-records cut into chunks by ``chunk_offsets``."""

    items: np.ndarray
    row_offsets: np.ndarray
    chunk_offsets: np.ndarray

    @staticmethod
    def concatenate(parts: list[ChunkRows]) -> ChunkRows:
        """The chunks of ``parts``, one after the other."""
        items = [p.items for p in parts]
        rows = [p.row_offsets[1:] + shift for p, shift in zip(parts, _shifts([len(i) for i in items]), strict=True)]
        chunks = [p.chunk_offsets[1:] + shift for p, shift in zip(parts, _shifts([len(r) for r in rows]), strict=True)]
        zero = np.zeros(1, dtype=np.int64)
        return ChunkRows(
            np.concatenate([np.zeros(0, dtype=np.int64), *items]),
            np.concatenate([zero, *rows]),
            np.concatenate([zero, *chunks]),
        )


def _shifts(lengths: list[int]) -> list[int]:
    """Where each of consecutive pieces of these lengths starts."""
    return np.r_[0, np.cumsum(lengths, dtype=np.int64)][:-1].tolist()


def project(
    dataset: Dataset, rank: np.ndarray, groups: list[np.ndarray], domains: list[list[tuple[int, ...]]]
) -> ChunkRows:
    """For each group of records and each of its term domains (in that order),
    the chunk of the non-empty projections of the group's records on the
    domain, in canonical order (``rank``: :func:`canonical_ranks`).

    Vectorised: one lookup of every occurrence's (group, term) chunk and one
    sort by (chunk, record, rank); the sub-records of a chunk are then ordered
    by one bytes key each (the chunk and the ranks, big-endian 32-bit words, so
    that comparing keys compares the rank lists, a prefix first)."""
    sizes = [len(domain) for group_domains in domains for domain in group_domains]
    n_chunks = len(sizes)
    chunk_group = np.repeat(np.arange(len(domains), dtype=np.int64), [len(d) for d in domains])
    span = max(dataset.n_items, 1)
    table_terms = np.fromiter(
        (t for group_domains in domains for domain in group_domains for t in domain),
        dtype=np.int64,
        count=sum(sizes),
    )
    table_code = np.repeat(np.arange(n_chunks, dtype=np.int64), sizes)
    table_keys = chunk_group[table_code] * span + table_terms
    by_key = np.argsort(table_keys, kind="stable")
    table_keys, table_code = table_keys[by_key], table_code[by_key]
    rows = np.concatenate(groups) if groups else np.zeros(0, dtype=np.int64)
    group_of_row = np.repeat(np.arange(len(groups), dtype=np.int64), [len(g) for g in groups])
    items, local = occurrences(dataset, rows)
    keys = group_of_row[local] * span + items
    pos = np.minimum(np.searchsorted(table_keys, keys), max(len(table_keys) - 1, 0))
    hit = np.flatnonzero(table_keys[pos] == keys) if len(table_keys) else np.zeros(0, dtype=np.int64)
    codes, sub_rows, ranks = table_code[pos[hit]], local[hit], rank[items[hit]]
    order = np.lexsort((ranks, sub_rows, codes))
    codes, sub_rows, ranks = codes[order], sub_rows[order], ranks[order]
    change = np.r_[True, (codes[1:] != codes[:-1]) | (sub_rows[1:] != sub_rows[:-1])] if len(codes) else codes
    starts = np.flatnonzero(change)
    lengths = np.diff(np.r_[starts, len(codes)])
    row_codes = codes[starts]
    # each sub-record's key: its chunk, then its ranks (one 4-byte word each)
    words = np.insert(ranks, starts, row_codes).astype(">u4").tobytes()
    bounds = ((starts + np.arange(len(starts))) * 4).tolist()
    ends = [*bounds[1:], len(words)] if bounds else []
    sort_keys = [words[a:b] for a, b in zip(bounds, ends, strict=True)]
    by_row = np.asarray(sorted(range(len(sort_keys)), key=sort_keys.__getitem__), dtype=np.int64)
    lengths = lengths[by_row]
    row_offsets = np.r_[0, np.cumsum(lengths)].astype(np.int64)
    gather = np.repeat(starts[by_row] - row_offsets[:-1], lengths) + np.arange(len(ranks), dtype=np.int64)
    chunk_offsets = np.r_[0, np.cumsum(np.bincount(row_codes, minlength=n_chunks))].astype(np.int64)
    return ChunkRows(ranks[gather], row_offsets, chunk_offsets)


PROJECT_BATCH_ROWS = 200_000
"""Records per call of :func:`project` in :func:`project_in_batches`."""


def project_in_batches(
    dataset: Dataset, rank: np.ndarray, groups: list[np.ndarray], domains: list[list[tuple[int, ...]]]
) -> ChunkRows:
    """:func:`project` over consecutive runs of groups holding about
    :data:`PROJECT_BATCH_ROWS` records each (a larger group alone). Groups are
    projected independently, so the result is the same as one call; the
    temporaries (several int64 arrays per item occurrence) stay bounded by a
    run. One call over the joint clusters of a 515,597-record release, whose
    nested members repeat records once per level, peaked at 2 GB."""
    parts: list[ChunkRows] = []
    start = 0
    while start < len(groups):
        end, rows = start + 1, len(groups[start])
        while end < len(groups) and rows + len(groups[end]) <= PROJECT_BATCH_ROWS:
            rows += len(groups[end])
            end += 1
        parts.append(project(dataset, rank, groups[start:end], domains[start:end]))
        start = end
    return ChunkRows.concatenate(parts)


def _nested(labels: list[str], chunks: ChunkRows, chunks_per_owner: list[int]) -> list[list[list[list[str]]]]:
    """For each owner (consecutive chunks, ``chunks_per_owner`` of them), its
    chunks as lists of sub-records of labels (``labels`` by rank)."""
    names = np.asarray(labels, dtype=object)[chunks.items].tolist() if len(chunks.items) else []
    cuts = chunks.row_offsets.tolist()
    rows = [names[a:b] for a, b in pairwise(cuts)]
    cuts = chunks.chunk_offsets.tolist()
    chunk_lists = [rows[a:b] for a, b in pairwise(cuts)]
    cuts = np.r_[0, np.cumsum(chunks_per_owner, dtype=np.int64)].tolist()
    return [chunk_lists[a:b] for a, b in pairwise(cuts)]


def build_outcome(dataset: Dataset, dis: Disassociation, kind_params: dict[str, Any]) -> Outcome:
    """The ``disassociated`` release and the trail of ``dis`` over ``dataset``."""
    rank = canonical_ranks(dataset)
    by_rank = [dataset.labels[i] for i in np.argsort(rank).tolist()]
    joint_members = simple_members(dis)
    record_chunks = project_in_batches(dataset, rank, dis.clusters, [list(c.record_chunks) for c in dis.chunks])
    shared = project_in_batches(
        dataset,
        rank,
        [np.sort(np.concatenate([dis.clusters[i] for i in members])) for members in joint_members],
        [list(plan.shared_chunks) for plan in dis.joints],
    )
    term_chunks = [set(c.term_chunk) for c in dis.chunks]
    for plan, members in zip(dis.joints, joint_members, strict=True):
        shared_terms = {t for domain in plan.shared_chunks for t in domain}
        for i in members:
            term_chunks[i] -= shared_terms
    nested_records = _nested(by_rank, record_chunks, [len(c.record_chunks) for c in dis.chunks])
    nested_shared = _nested(by_rank, shared, [len(plan.shared_chunks) for plan in dis.joints])
    clusters = [
        Cluster(f"c{i}", len(rows), chunks, [by_rank[r] for r in sorted(rank[list(terms)].tolist())])
        for i, (rows, chunks, terms) in enumerate(zip(dis.clusters, nested_records, term_chunks, strict=True))
    ]
    joint_clusters = [
        JointCluster(f"j{n}", [f"c{i}" for i in members], chunks)
        for n, (members, chunks) in enumerate(zip(joint_members, nested_shared, strict=True))
    ]
    chunk_occurrences, shared_occurrences = len(record_chunks.items), len(shared.items)
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
        "clusters": len(clusters),
        "joint_clusters": len(joint_clusters),
        "record_chunks": len(record_chunks.chunk_offsets) - 1,
        "shared_chunks": len(shared.chunk_offsets) - 1,
    }
    release = Release(
        kind="disassociated", params=dict(kind_params), stats=stats, clusters=clusters, joint_clusters=joint_clusters
    )
    return Outcome(release, trail_of(dataset, dis))


def trail_of(dataset: Dataset, dis: Disassociation) -> Trail:
    """Each input record's cluster id (``None`` when suppressed), and the suppressed positions."""
    cluster_of = np.full(dataset.n_records, -1, dtype=np.int64)
    if dis.clusters:
        cluster_of[np.concatenate(dis.clusters)] = np.repeat(
            np.arange(len(dis.clusters), dtype=np.int64), [len(rows) for rows in dis.clusters]
        )
    names: list[str | None] = [f"c{i}" for i in range(len(dis.clusters))]
    names.append(None)  # position -1
    return Trail(
        cluster_of_record=[names[i] for i in cluster_of.tolist()],
        suppressed_records=[int(r) for r in dis.suppressed.tolist()],
    )
