"""Exact maximum support of small itemsets over all reconstructions of a
disassociated release, and the disassociation guarantee built on it.

Reconstruction model (ALGORITHM-NOTES 1.3; Awad et al. section 3.2): each
record chunk of a cluster P is padded with empty sub-records to |P| entries and
permuted independently; each shared chunk of a joint cluster J is spread over
the records of J's member clusters, one entry per record; a term-chunk term of P
occurs in at least one and at most |P| records of P. The release states no count
for a term-chunk term, so a verifier that trusts nothing must allow any count
(docs/guarantees.md discusses the alternative 1..k-1 reading and why it would
make Definition 2 fail for every term-chunk term).

Maximum support of an itemset I:

* inside one cluster P, ignoring shared chunks: r_P(I) = min(|P|, c_i) over the
  record chunks C_i meeting I, where c_i counts the sub-records of C_i holding
  I ∩ T_i (the chunks are permuted independently, so their holders can be lined
  up on the same records); term-chunk items only cap at |P|;
* a shared chunk S of a joint cluster J meeting I can give at most c_S(I ∩ T_S)
  records in total over all members of J, so the joint cluster contributes
  min(cap_J, sum_P r_P) with cap_J = min over its shared chunks of c_S;
* clusters (and joint clusters) reconstruct independently, so the maximum over
  the release is the sum of their contributions.

Clusters that belong to several joint clusters would couple the caps in a way
this closed form does not cover; the certificate then says "not checked".
"""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any

from privtool.context import Context
from privtool.release import Release
from privtool.results import Certificate

from .chunks import ChunkBits

ClusterUnit = tuple[str, int, tuple, tuple, str | None, tuple, int]
"""(cluster id, size, record chunks, term chunk, joint id, shared chunks of the joint, m)."""

FREE = -1
"""Source kind of a term-chunk item: no count, only the cluster size caps it."""


def cluster_maxima(unit: ClusterUnit) -> list[tuple[tuple[str, ...], int, str | None, int]]:
    """Every itemset of 1..m items that some reconstruction of the cluster holds,
    as ``(itemset, r_P, joint id, cap)``: r_P is the maximum support inside the
    cluster from its own chunks and term chunk, cap the shared-chunk cap (a large
    number when no shared chunk meets the itemset)."""
    cluster_id, size, record_chunks, term_chunk, joint_id, shared_chunks, m = unit
    sources: list[tuple[str, ChunkBits | None]] = []  # (kind, bits); kind in record|shared|term
    for chunk in record_chunks:
        sources.append(("record", ChunkBits.of(chunk)))
    for chunk in shared_chunks:
        sources.append(("shared", ChunkBits.of(chunk)))
    options: dict[str, list[tuple[int, int]]] = defaultdict(list)  # item -> [(source index, mask)]
    for s, (_, bits) in enumerate(sources):
        assert bits is not None
        for item, mask in zip(bits.items, bits.bits):
            options[item].append((s, mask))
    for item in term_chunk:
        options[item].append((len(sources), FREE))
    items = sorted(options)
    best: dict[tuple[str, ...], tuple[int, int]] = {}

    def record(path: tuple[str, ...], masks: dict[int, int]) -> None:
        r, cap = size, 1 << 62
        for s, mask in masks.items():
            if mask == FREE:
                continue
            count = mask.bit_count()
            if sources[s][0] == "record":
                r = min(r, count)
            else:
                cap = min(cap, count)
        value = (r, cap)
        old = best.get(path)
        if old is None or min(value) > min(old):
            best[path] = value

    def extend(start: int, path: tuple[str, ...], masks: dict[int, int]) -> None:
        if len(path) == m:
            return
        for n in range(start, len(items)):
            item = items[n]
            for s, mask in options[item]:
                current = masks.get(s)
                if mask == FREE:
                    joined = FREE
                elif current is None:
                    joined = mask
                else:
                    joined = current & mask
                    if not joined:
                        continue
                new_masks = dict(masks)
                new_masks[s] = joined
                new_path = (*path, item)
                record(new_path, new_masks)
                extend(n + 1, new_path, new_masks)

    extend(0, (), {})
    return [(itemset, r, joint_id, cap) for itemset, (r, cap) in best.items()]


def max_supports(release: Release, m: int, ctx: Context) -> dict[tuple[str, ...], int]:
    """Maximum support over all reconstructions of every itemset of 1..m items
    that some reconstruction holds (items sorted as strings within a tuple)."""
    joint_of: dict[str, str] = {}
    for j in release.joint_clusters:
        for member in j.members:
            if member in joint_of:
                raise OverlappingJointClusters(member)
            joint_of[member] = j.id
    shared = {j.id: tuple(tuple(tuple(row) for row in chunk) for chunk in j.shared_chunks) for j in release.joint_clusters}
    units = [
        (
            c.id,
            c.size,
            tuple(tuple(tuple(row) for row in chunk) for chunk in c.record_chunks),
            tuple(c.term_chunk),
            joint_of.get(c.id),
            shared.get(joint_of.get(c.id, ""), ()),
            m,
        )
        for c in release.clusters
    ]
    per_cluster = ctx.map(cluster_maxima, units, "maximum supports per cluster")
    free_total: dict[tuple[str, ...], int] = defaultdict(int)
    joint_parts: dict[tuple[tuple[str, ...], str], list[int]] = defaultdict(lambda: [0, 1 << 62])
    for rows in per_cluster:
        for itemset, r, joint_id, cap in rows:
            if joint_id is None or cap >= 1 << 62:
                free_total[itemset] += r
            else:
                part = joint_parts[(itemset, joint_id)]
                part[0] += r
                part[1] = min(part[1], cap)
    for (itemset, _), (total, cap) in joint_parts.items():
        free_total[itemset] += min(total, cap)
    return dict(free_total)


class OverlappingJointClusters(Exception):
    """A cluster is a member of more than one joint cluster."""


def check_disassociation_guarantee(release: Release, k: int, m: int, ctx: Context) -> Certificate:
    """Definition 2 over the itemsets some reconstruction holds; witness: the
    itemset with the smallest maximum support below k."""
    start = time.perf_counter()
    details: dict[str, Any] = {"k": k, "m": m, "term_chunk_model": "a term occurs in 1..|P| records of its cluster"}
    try:
        maxima = max_supports(release, m, ctx)
    except OverlappingJointClusters as exc:
        details["reason"] = f"cluster {exc.args[0]!r} belongs to several joint clusters; the closed form does not cover it"
        return Certificate("disassociation-guarantee", None, "closed-form", 0, round(time.perf_counter() - start, 4), None, details)
    failing = sorted((support, itemset) for itemset, support in maxima.items() if support < k)
    details["itemsets"] = len(maxima)
    details["violations"] = len(failing)
    witness = None
    if failing:
        support, itemset = failing[0]
        witness = {"itemset": list(itemset), "max_support": support, "k": k}
        details["witnesses"] = [{"itemset": list(i), "max_support": s} for s, i in failing[1:21]]
    return Certificate(
        "disassociation-guarantee",
        not failing,
        "closed-form",
        len(release.clusters),
        round(time.perf_counter() - start, 4),
        witness,
        details,
    )
