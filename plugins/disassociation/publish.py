"""Turn a :class:`~privtool.chain.Disassociation` into the published release and its trail.

Release layout (docs/design.md, "Release format"): cluster ``c<i>`` for the i-th
cluster, joint cluster ``j<n>`` for the n-th joint plan, whose ``members`` list
every simple cluster under it: a joint plan nested in a later one is flattened
(the later joint lists the earlier one's clusters too, which is what its shared
chunks cover; the member sets are laminar, which ``privtool verify`` checks, and
readers such as the reconstruction sampler need no tree walk); record and shared
chunks list their non-empty sub-records; a member's term chunk loses the terms
that a joint cluster publishes in a shared chunk. Canonical ordering is applied
by :class:`privtool.release.Release` when it is written, so nothing here
follows input order into the file. The trail maps each input record to its
cluster id (``None`` when suppressed).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privtool.chain import Disassociation
from privtool.components import Outcome
from privtool.dataset import Dataset
from privtool.release import Cluster, JointCluster, Release
from privtool.trail import Trail

from .horpart import occurrences


def simple_members(dis: Disassociation, plan_index: int) -> list[int]:
    """Indexes of the simple clusters under joint plan ``plan_index`` (nested joints resolved)."""
    out: list[int] = []
    for kind, index in dis.joints[plan_index].members:
        out.extend(simple_members(dis, index) if kind == "j" else [index])
    return out


def project(
    dataset: Dataset, groups: list[np.ndarray], domains: list[list[tuple[int, ...]]]
) -> list[list[list[list[str]]]]:
    """For each group of records and each of its term domains, the non-empty
    projections of the group's records on the domain (lists of labels).
    Vectorised: one lookup of every occurrence's (group, term) chunk and one
    sort; Python work only per sub-record."""
    rows = np.concatenate(groups) if groups else np.zeros(0, dtype=np.int64)
    group_of_row = np.repeat(np.arange(len(groups), dtype=np.int64), [len(g) for g in groups])
    table_group: list[int] = []
    table_term: list[int] = []
    table_code: list[int] = []
    n_codes = 0
    for g, group_domains in enumerate(domains):
        for domain in group_domains:
            table_group.extend([g] * len(domain))
            table_term.extend(domain)
            table_code.extend([n_codes] * len(domain))
            n_codes += 1
    span = max(dataset.n_items, 1)
    table_keys = np.asarray(table_group, dtype=np.int64) * span + np.asarray(table_term, dtype=np.int64)
    by_key = np.argsort(table_keys)
    table_keys, codes_sorted = table_keys[by_key], np.asarray(table_code, dtype=np.int64)[by_key]
    items, local = occurrences(dataset, rows)
    keys = group_of_row[local] * span + items
    pos = np.minimum(np.searchsorted(table_keys, keys), max(len(table_keys) - 1, 0))
    hit = np.flatnonzero(table_keys[pos] == keys) if len(table_keys) else np.zeros(0, dtype=np.int64)
    codes, sub_rows, sub_items = codes_sorted[pos[hit]], local[hit], items[hit]
    order = np.lexsort((sub_rows, codes))
    codes, sub_rows = codes[order], sub_rows[order]
    names = np.array(dataset.labels, dtype=object)[sub_items[order]].tolist()
    change = np.r_[True, (codes[1:] != codes[:-1]) | (sub_rows[1:] != sub_rows[:-1])] if len(codes) else codes
    starts = np.flatnonzero(change).tolist()
    chunks: list[list[list[str]]] = [[] for _ in range(n_codes)]
    for start, end, code in zip(starts, [*starts[1:], len(names)], codes[starts].tolist(), strict=False):
        chunks[code].append(names[start:end])
    out = []
    code = 0
    for group_domains in domains:
        out.append(chunks[code : code + len(group_domains)])
        code += len(group_domains)
    return out


PROJECT_BATCH_ROWS = 200_000
"""Records per call of :func:`project` in :func:`project_in_batches`."""


def project_in_batches(
    dataset: Dataset, groups: list[np.ndarray], domains: list[list[tuple[int, ...]]]
) -> list[list[list[list[str]]]]:
    """:func:`project` over consecutive runs of groups holding about
    :data:`PROJECT_BATCH_ROWS` records each (a larger group alone). Groups are
    projected independently, so the result is the same as one call; the
    temporaries (several int64 arrays per item occurrence) stay bounded by a
    run. One call over the joint clusters of a 515,597-record release, whose
    nested members repeat records once per level, peaked at 2 GB."""
    out: list[list[list[list[str]]]] = []
    start = 0
    while start < len(groups):
        end, rows = start + 1, len(groups[start])
        while end < len(groups) and rows + len(groups[end]) <= PROJECT_BATCH_ROWS:
            rows += len(groups[end])
            end += 1
        out.extend(project(dataset, groups[start:end], domains[start:end]))
        start = end
    return out


def build_outcome(dataset: Dataset, dis: Disassociation, kind_params: dict[str, Any]) -> Outcome:
    """The ``disassociated`` release and the trail of ``dis`` over ``dataset``."""
    term_chunks = [set(c.term_chunk) for c in dis.chunks]
    joint_members = [simple_members(dis, n) for n in range(len(dis.joints))]
    shared = project_in_batches(
        dataset,
        [np.sort(np.concatenate([dis.clusters[i] for i in members])) for members in joint_members],
        [list(plan.shared_chunks) for plan in dis.joints],
    )
    joint_clusters = []
    for n, (plan, members) in enumerate(zip(dis.joints, joint_members, strict=False)):
        shared_terms = {t for domain in plan.shared_chunks for t in domain}
        for i in members:
            term_chunks[i] -= shared_terms
        # Members are published flattened to simple clusters (docs/design.md, "Release format"):
        # a joint cluster built from joint clusters lists all their clusters, and
        # the nesting is the inclusion of member sets.
        joint_clusters.append(JointCluster(f"j{n}", [f"c{i}" for i in sorted(members)], shared[n]))
    record_chunks = project_in_batches(dataset, dis.clusters, [list(c.record_chunks) for c in dis.chunks])
    clusters = [
        Cluster(f"c{i}", len(rows), chunks, [dataset.labels[t] for t in term_chunks[i]])
        for i, (rows, chunks) in enumerate(zip(dis.clusters, record_chunks, strict=False))
    ]
    shared_occurrences = sum(len(s) for j in joint_clusters for chunk in j.shared_chunks for s in chunk)
    chunk_occurrences = sum(len(s) for c in clusters for chunk in c.record_chunks for s in chunk)
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
        "record_chunks": sum(len(c.record_chunks) for c in clusters),
        "shared_chunks": sum(len(j.shared_chunks) for j in joint_clusters),
    }
    release = Release(
        kind="disassociated", params=dict(kind_params), stats=stats, clusters=clusters, joint_clusters=joint_clusters
    )
    cluster_of: list[str | None] = [None] * dataset.n_records
    for i, rows in enumerate(dis.clusters):
        name = f"c{i}"
        for r in rows.tolist():
            cluster_of[r] = name
    trail = Trail(cluster_of_record=cluster_of, suppressed_records=[int(r) for r in dis.suppressed.tolist()])
    return Outcome(release, trail)
