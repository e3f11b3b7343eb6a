"""The safe-disassociation sanitizer as it ran before its release became CSR
arrays (issue 20): nested lists, every chunk of every cluster analysed one
after the other in this process, the sanitized release built cluster by
cluster. The oracle of the array path
(:func:`privtool.plugins.safe_disassociation.sanitizer.safe_disassociate`:
vectorised search for vulnerable chunks, batches through the executor, the
release assembled from the changed chunks); decoys are left out (their rule
is the same code in both)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from privtool.attacks.cover import RECORD, SHARED, ChunkRef, analyse_chunk
from privtool.components import Outcome
from privtool.context import Context
from privtool.plugins.safe_disassociation.sanitizer import (
    FAITHFUL,
    ChunkSetResult,
    Limits,
    SafeSummary,
    Variant,
    _record,
    _stats,
    _trail,
    check_m,
)
from privtool.release import Cluster, JointCluster


def reference_chunks(
    owner: str, kind: str, chunks: list, capacity: int, k: int, m: int, ctx: Context, variant: Variant, records: int
) -> tuple[list, ChunkSetResult]:
    """The chunks of one owner after the repair loop (``None``: removed) and the result."""
    current: list = list(chunks)
    records = max([records, *(len(rows) for rows in chunks)])
    limits = Limits(k, m, capacity, records, variant.min_preimages)
    actions = []
    passes = 0
    while True:
        found = False
        for index, rows in enumerate(current):
            if rows is None:
                continue
            cover = analyse_chunk(rows, ChunkRef(owner, kind, index))
            if not cover.vulnerable:
                continue
            found = True
            assert passes == 0, f"chunk {cover.ref} still vulnerable after one pass"
            current[index], action = variant.repair(rows, cover, limits, ctx.rng(variant.name, owner, kind, index, 0))
            actions.append(action)
        passes += 1
        if not found:
            break
    changed = {i: rows for i, (rows, old) in enumerate(zip(current, chunks, strict=True)) if rows is not old}
    return current, ChunkSetResult(changed, actions, passes)


def reference_safe_disassociate(
    outcome: Outcome, k: int, m: int, delta: int, ctx: Context, variant: Variant = FAITHFUL
) -> Outcome:
    """The sanitized outcome, the nested way (no decoys)."""
    assert variant.decoys is None
    check_m(m)
    release = outcome.release
    summary = SafeSummary()
    results: list[ChunkSetResult] = []
    clusters = []
    for cluster in release.clusters:
        chunks, result = reference_chunks(
            cluster.id, RECORD, cluster.record_chunks, delta - 2, k, m, ctx, variant, cluster.size
        )
        kept = [rows for rows in chunks if rows is not None]
        size = max([cluster.size, *(len(rows) for rows in kept)])
        clusters.append(Cluster(cluster.id, size, kept, list(cluster.term_chunk)))
        summary.ghost_records += size - cluster.size
        results.append(result)
    sizes = {c.id: c.size for c in clusters}
    members = {j.id: j.members for j in release.joint_clusters}

    def records_of(joint: str) -> int:
        return sum(records_of(x) if x in members else sizes[x] for x in members[joint])

    joints = []
    for joint in release.joint_clusters:
        records = records_of(joint.id)
        chunks, result = reference_chunks(
            joint.id, SHARED, joint.shared_chunks, records - 2, k, m, ctx, variant, records
        )
        joints.append(JointCluster(joint.id, list(joint.members), [rows for rows in chunks if rows is not None]))
        results.append(result)
    summary.passes = max((r.passes for r in results), default=0)
    ghosts: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    for result in results:
        _record(ghosts, summary, notes, result)
    safe = replace(release, params=dict(release.params), clusters=clusters, joint_clusters=joints)
    before = sum(len(row) for c in release.clusters for ch in c.record_chunks for row in ch)
    before += sum(len(row) for j in release.joint_clusters for ch in j.shared_chunks for row in ch)
    safe.stats = _stats({**release.stats, **outcome.trail.stats}, summary, before, safe.arrays)
    return Outcome(safe, _trail(outcome.trail, variant, ghosts, notes, summary, k, m, delta))
