"""The safe-disassociation paper's running example and small helpers shared by
the safe-disassociation, cover and cover-linkage tests (independent of the
code under test)."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

from privtool.claims import Claim
from privtool.release import Cluster, Release

FIGURE1_RECORDS = [list("ae"), list("abcde"), list("abcd"), list("abcd"), list("abcd"), list("ab")]
"""Figure 1(a): records r1..r6."""


def figure1_release() -> Release:
    """Figure 1(b): the 2^2-disassociated release, one cluster, chunks {a, abcd x4, ab} and {e, e}."""
    chunk1 = [["a"], list("abcd"), list("abcd"), list("abcd"), list("abcd"), ["a", "b"]]
    return Release(
        "disassociated",
        params={"method": "disassociation", "k": 2, "m": 2, "max_cluster_size": 30},
        claims=[Claim("km-anonymity", {"k": 2, "m": 2})],
        clusters=[Cluster("c0", 6, [chunk1, [["e"], ["e"]]], [])],
    )


def as_multiset(rows) -> Counter:
    return Counter(tuple(sorted(row)) for row in rows)


def brute_covered(rows) -> set[str]:
    """Definition 3 by sets: z is covered when every sub-record holding z holds
    every item of the chunk (and the chunk has two items or more)."""
    everything = set().union(*map(set, rows)) if rows else set()
    if len(everything) < 2:
        return set()
    return {z for z in everything if all(everything <= set(row) for row in rows if z in row)}


def km_violations(rows, k: int, m: int) -> list[tuple[str, ...]]:
    """Itemsets of 1..m items occurring in ``rows`` with fewer than k sub-records."""
    seen = {x for row in rows for size in range(1, m + 1) for x in combinations(sorted(row), size)}
    return [x for x in seen if sum(set(x) <= set(row) for row in rows) < k]


def km_chunk(draw, st, items: list[str], k: int) -> list[list[str]]:
    """A random k^m-anonymous chunk over ``items``: a few patterns each repeated
    at least k times, plus sub-records that are subsets of a pattern (every
    itemset that occurs then lies in >= k sub-records, whatever m is)."""
    patterns = draw(st.lists(st.sets(st.sampled_from(items), min_size=1), min_size=1, max_size=3, unique_by=frozenset))
    rows: list[list[str]] = []
    for pattern in patterns:
        rows.extend([sorted(pattern)] * draw(st.integers(k, k + 3)))
    for _ in range(draw(st.integers(0, 3))):
        pattern = sorted(draw(st.sampled_from(patterns)))
        subset = draw(st.sets(st.sampled_from(pattern), min_size=1))
        rows.append(sorted(subset))
    return rows


def disassociated_releases(st, min_m: int = 1):
    """A hypothesis strategy of small k^m-anonymous disassociated releases
    (record chunks, term chunks, sometimes a joint cluster with a shared chunk),
    with ``max_cluster_size`` sometimes tight enough for the fallback, and
    ``m`` from ``min_m`` to 3."""
    from privtool.release import JointCluster

    @st.composite
    def build(draw):
        k = draw(st.integers(2, 3))
        m = draw(st.integers(min_m, 3))
        pool = [f"i{n}" for n in range(14)]
        used = 0
        clusters = []
        for c in range(draw(st.integers(1, 3))):
            chunks = []
            for _ in range(draw(st.integers(1, 3))):
                width = draw(st.integers(1, 5))
                items = pool[used : used + width]
                used += width
                if len(items) < width or not items:
                    break
                chunks.append(km_chunk(draw, st, items, k))
            terms = pool[used : used + draw(st.integers(0, 1))]
            used += len(terms)
            size = max([1, *(len(ch) for ch in chunks)]) + draw(st.integers(0, 3))
            clusters.append(Cluster(f"c{c}", size, chunks, terms))
        joints = []
        if len(clusters) >= 2 and draw(st.booleans()):
            items = [f"s{n}" for n in range(draw(st.integers(1, 4)))]
            shared = km_chunk(draw, st, items, k)
            if len(shared) <= clusters[0].size + clusters[1].size:
                joints.append(JointCluster("j0", [clusters[0].id, clusters[1].id], [shared]))
        delta = max(c.size for c in clusters) + draw(st.integers(0, 6))
        params = {"method": "disassociation", "k": k, "m": m, "max_cluster_size": delta}
        claims = [Claim("km-anonymity", {"k": params["k"], "m": params["m"]})]
        return Release("disassociated", params=params, claims=claims, clusters=clusters, joint_clusters=joints)

    return build()
