"""Turn a :class:`~.model.Disassociation` into the published release and its trail.

Release layout (DESIGN.md, "Release format"): cluster ``c<i>`` for the i-th
cluster, joint cluster ``j<n>`` for the n-th joint plan, whose ``members`` list
every simple cluster under it (a joint plan nested in a later one is thus
flattened: the later joint lists the earlier one's clusters too, which is what
its shared chunks cover); record and shared
chunks list their non-empty sub-records; a member's term chunk loses the terms
that a joint cluster publishes in a shared chunk. Canonical ordering is applied
by :class:`privtool.release.Release` when it is written, so nothing here
follows input order into the file. The trail maps each input record to its
cluster id (``None`` when suppressed).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privtool.components import Outcome
from privtool.dataset import Dataset
from privtool.release import Cluster, JointCluster, Release
from privtool.trail import Trail

from .horpart import occurrences
from .model import Disassociation


def simple_members(dis: Disassociation, plan_index: int) -> list[int]:
    """Indexes of the simple clusters under joint plan ``plan_index`` (nested joints resolved)."""
    out: list[int] = []
    for kind, index in dis.joints[plan_index].members:
        out.extend(simple_members(dis, index) if kind == "j" else [index])
    return out


def _project(dataset: Dataset, rows: np.ndarray, domains: list[tuple[int, ...]], labels: np.ndarray) -> list[list[list[str]]]:
    """For each domain, the non-empty projections of the records ``rows`` on it."""
    items, local = occurrences(dataset, rows)
    slot = np.full(dataset.n_items, -1, dtype=np.int32)
    for j, domain in enumerate(domains):
        slot[list(domain)] = j
    codes = slot[items]
    chunks = []
    for j in range(len(domains)):
        keep = codes == j
        chunk_items, chunk_rows = items[keep], local[keep]
        names = labels[chunk_items].tolist()
        cuts = (np.flatnonzero(np.diff(chunk_rows)) + 1).tolist()
        bounds = [0, *cuts, len(names)]
        chunks.append([names[a:b] for a, b in zip(bounds[:-1], bounds[1:])])
    return chunks


def build_outcome(dataset: Dataset, dis: Disassociation, kind_params: dict[str, Any]) -> Outcome:
    """The ``disassociated`` release and the trail of ``dis`` over ``dataset``."""
    labels = np.array(dataset.labels, dtype=object)
    term_chunks = [set(c.term_chunk) for c in dis.chunks]
    joint_clusters = []
    shared_occurrences = 0
    for n, plan in enumerate(dis.joints):
        members = simple_members(dis, n)
        shared_terms = {t for domain in plan.shared_chunks for t in domain}
        for i in members:
            term_chunks[i] -= shared_terms
        rows = np.sort(np.concatenate([dis.clusters[i] for i in members]))
        shared = _project(dataset, rows, plan.shared_chunks, labels)
        shared_occurrences += sum(len(s) for chunk in shared for s in chunk)
        joint_clusters.append(JointCluster(f"j{n}", [f"c{i}" for i in sorted(members)], shared))
    clusters = []
    chunk_occurrences = 0
    for i, (rows, chunked) in enumerate(zip(dis.clusters, dis.chunks)):
        record_chunks = _project(dataset, rows, list(chunked.record_chunks), labels)
        chunk_occurrences += sum(len(s) for chunk in record_chunks for s in chunk)
        clusters.append(Cluster(f"c{i}", int(len(rows)), record_chunks, [dataset.labels[t] for t in term_chunks[i]]))
    published = int(dataset.n_occurrences - dataset.sizes[dis.suppressed].sum())
    stats = {
        "records_in": dataset.n_records,
        "records_published": int(sum(len(rows) for rows in dis.clusters)),
        "suppressed_records": int(len(dis.suppressed)),
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
    release = Release(kind="disassociated", params=dict(kind_params), stats=stats, clusters=clusters, joint_clusters=joint_clusters)
    cluster_of: list[str | None] = [None] * dataset.n_records
    for i, rows in enumerate(dis.clusters):
        name = f"c{i}"
        for r in rows.tolist():
            cluster_of[r] = name
    trail = Trail(cluster_of_record=cluster_of, suppressed_records=[int(r) for r in dis.suppressed.tolist()])
    return Outcome(release, trail)
