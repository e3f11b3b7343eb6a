"""The batched largest support (:class:`MaxSupportIndex`) equals the per-itemset
:meth:`ReconstructionModel.max_support` on random releases with record chunks,
term chunks and nested or crossing joint clusters, including chunks wider than
one 64-bit word."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from privtool.attacks.reconstruction import MaxSupportIndex, ReconstructionModel
from privtool.errors import InputError
from privtool.release import Cluster, JointCluster, Release


@st.composite
def releases(draw: st.DrawFn) -> Release:
    """1-4 clusters of 1-70 records with up to 3 record chunks (items a-h), a term
    chunk (p-r) and up to 3 joint clusters with shared chunks (s-u)."""
    clusters = []
    for i in range(draw(st.integers(1, 4))):
        size = draw(st.sampled_from([1, 2, 3, 5, 30, 64, 70]))
        pool = draw(st.permutations("abcdefgh"))
        chunks, used = [], 0
        for _ in range(draw(st.integers(0, 3))):
            width = draw(st.integers(1, 3))
            domain, used = pool[used : used + width], used + width
            rows = draw(st.lists(st.sets(st.sampled_from(domain), min_size=1), min_size=1, max_size=size))
            chunks.append([sorted(r) for r in rows])
        terms = draw(st.lists(st.sampled_from("pqr"), unique=True, max_size=2))
        clusters.append(Cluster(f"c{i}", size, chunks, terms))
    joints = []
    for j in range(draw(st.integers(0, 3))):
        members = draw(st.lists(st.sampled_from([c.id for c in clusters]), min_size=1, unique=True))
        n = sum(c.size for c in clusters if c.id in members)
        domain = draw(st.lists(st.sampled_from("stu"), min_size=1, max_size=3, unique=True))
        rows = draw(st.lists(st.sets(st.sampled_from(domain), min_size=1), min_size=1, max_size=min(n, 6)))
        joints.append(JointCluster(f"j{j}", members, [[sorted(r) for r in rows]]))
    return Release(kind="disassociated", params={"k": draw(st.integers(2, 6)), "m": 2}, clusters=clusters, joint_clusters=joints)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(releases())
def test_batched_max_support_equals_the_per_itemset_one(release: Release) -> None:
    try:
        model = ReconstructionModel(release)
    except InputError:  # an item in two homes over one cluster: not a release
        assume(False)
    items = sorted(model.labels)
    queries = [frozenset(q) for n in (1, 2, 3) for q in itertools.combinations(items, n)]
    queries += [frozenset(), frozenset({"zz"}), frozenset({"a", "zz"})]
    index = MaxSupportIndex(model)
    expected = [model.max_support(q) for q in queries]
    assert index.max_supports(queries) == expected
    assert index.max_supports(reversed(queries)) == expected[::-1]  # from the cache
