"""Brute force over the reconstructions of small disassociated releases, written
from the definition (safe-disassociation paper, section 3.2) without the code
under test, and the generators of tiny releases the oracle tests share."""

from __future__ import annotations

import itertools
import math

from hypothesis import reject
from hypothesis import strategies as st

from privtool.claims import Claim
from privtool.release import Cluster, JointCluster, Release


def flat_members(release: Release) -> list[list[str]]:
    """The clusters under each joint cluster (a member may be an earlier joint cluster)."""
    flat: dict[str, list[str]] = {}
    for joint in release.joint_clusters:
        flat[joint.id] = [c for member in joint.members for c in flat.get(member, [member])]
    return [flat[j.id] for j in release.joint_clusters]


#: Most reconstructions the brute force lists; a tiny release can have 10^7.
ENUMERATION_LIMIT = 20_000


def naive_reconstructions(release: Release, term_cap: int) -> list[tuple[frozenset[str], ...]]:
    """Every reconstruction, from the definition: each chunk padded and laid out in
    every distinct order on its domain, each term on every slot set of 1 to
    ``min(term_cap, cluster size)`` slots of its cluster.

    Rejects the hypothesis example when the product of the
    alternatives exceeds :data:`ENUMERATION_LIMIT`: about 1.5 % of
    ``tiny_releases`` at a term cap of 1, some of which would need gigabytes."""
    offset, slots = {}, 0
    for c in release.clusters:
        offset[c.id] = slots
        slots += c.size
    size = {c.id: c.size for c in release.clusters}
    placements = []  # each: list of alternatives, an alternative = list of (slot, items)
    chunks = [([c.id], ch) for c in release.clusters for ch in c.record_chunks]
    chunks += [
        (members, ch)
        for j, members in zip(release.joint_clusters, flat_members(release), strict=False)
        for ch in j.shared_chunks
    ]
    for members, chunk in chunks:
        domain = [offset[m] + s for m in members for s in range(size[m])]
        padded = [frozenset(r) for r in chunk] + [frozenset()] * (len(domain) - len(chunk))
        placements.append([list(zip(domain, order, strict=False)) for order in set(itertools.permutations(padded))])
    for c in release.clusters:
        cap = min(term_cap, c.size)
        for term in c.term_chunk:
            subsets = [s for n in range(1, cap + 1) for s in itertools.combinations(range(c.size), n)]
            placements.append([[(offset[c.id] + s, frozenset([term])) for s in subset] for subset in subsets])
    if math.prod(len(alternatives) for alternatives in placements) > ENUMERATION_LIMIT:
        reject()
    result = []
    for choice in itertools.product(*placements):
        records = [set() for _ in range(slots)]
        for alternative in choice:
            for slot, items in alternative:
                records[slot] |= items
        result.append(tuple(frozenset(r) for r in records))
    return result


@st.composite
def tiny_releases(draw: st.DrawFn, nested: bool = False) -> Release:
    """1-3 clusters of 1-3 records, up to 2 record chunks each (items a-f), a term
    chunk (items p-r, f), and up to 2 joint clusters with a shared chunk (items
    s-u, f): f can live in chunks of all three kinds, in different clusters.
    Joint clusters may nest or cross; with ``nested`` they form a tree as REFINE
    builds it (a joint cluster's members are clusters or earlier joint clusters
    not yet in another one)."""
    k = draw(st.integers(2, 3))
    clusters = []
    for i in range(draw(st.integers(1, 3))):
        size = draw(st.integers(1, 3))
        pool = draw(st.permutations("abcdef"))
        chunks, used = [], 0
        for _ in range(draw(st.integers(0, 2))):
            width = draw(st.integers(1, 2))
            domain = pool[used : used + width]
            used += width
            rows = draw(st.lists(st.sets(st.sampled_from(domain), min_size=1), min_size=1, max_size=size))
            chunks.append([sorted(r) for r in rows])
        terms = draw(st.lists(st.sampled_from("pqrf"), unique=True, max_size=2))
        clusters.append(Cluster(f"c{i}", size, chunks, terms))
    joints: list[JointCluster] = []
    size_of = {c.id: c.size for c in clusters}
    tops = [c.id for c in clusters]
    for j in range(draw(st.integers(0, 2))):
        members = draw(st.lists(st.sampled_from(tops if nested else [c.id for c in clusters]), min_size=1, unique=True))
        n = sum(size_of[m] for m in members)
        domain = draw(st.lists(st.sampled_from("stuf"), min_size=1, max_size=2, unique=True))
        rows = draw(st.lists(st.sets(st.sampled_from(domain), min_size=1), min_size=1, max_size=min(n, 3)))
        joints.append(JointCluster(f"j{j}", members, [[sorted(r) for r in rows]]))
        if nested:
            size_of[f"j{j}"] = n
            tops = [t for t in tops if t not in members] + [f"j{j}"]
    return Release(
        kind="disassociated",
        params={"k": k, "m": 2},
        claims=[Claim("km-anonymity", {"k": k, "m": 2})],
        clusters=clusters,
        joint_clusters=joints,
    )
