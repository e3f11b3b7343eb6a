"""The exact maximum support over reconstructions (and the disassociation
guarantee built on it) against a brute force that enumerates every
reconstruction of tiny releases."""

from __future__ import annotations

from collections import defaultdict
from itertools import combinations, permutations, product

from hypothesis import given, settings
from hypothesis import strategies as st

from privtool.context import Context
from privtool.release import Cluster, JointCluster, Release
from privtool.verifiers.reconstruction_bounds import check_disassociation_guarantee, max_supports

ALPHABET = "abcdef"


def _placements(chunk, n):
    padded = [frozenset(row) for row in chunk] + [frozenset()] * (n - len(chunk))
    return set(permutations(padded))


def _term_placements(term, n):
    options = []
    for t in term:
        subsets = [frozenset(s) for size in range(1, n + 1) for s in combinations(range(n), size)]
        options.append([(t, s) for s in subsets])
    return list(product(*options)) if options else [()]


def brute_force_maxima(release, m):
    """Enumerate every reconstruction of each group (a joint cluster with its
    members, or a lone cluster); groups are independent, so maxima add up."""
    joint_of = {member: j for j in release.joint_clusters for member in j.members}
    groups = [[c] for c in release.clusters if c.id not in joint_of]
    for j in release.joint_clusters:
        groups.append([c for c in release.clusters if c.id in j.members])
    total = defaultdict(int)
    for group in groups:
        joint = joint_of.get(group[0].id)
        sizes = [c.size for c in group]
        offsets = [sum(sizes[:i]) for i in range(len(sizes))]
        n_all = sum(sizes)
        per_cluster_options = []
        for c in group:
            chunk_options = [_placements(ch, c.size) for ch in c.record_chunks]
            per_cluster_options.append(list(product(*chunk_options, _term_placements(c.term_chunk, c.size))))
        shared_options = list(product(*[_placements(ch, n_all) for ch in (joint.shared_chunks if joint else [])]))
        best = defaultdict(int)
        for choice in product(*per_cluster_options, shared_options):
            records = [set() for _ in range(n_all)]
            for c_index in range(len(group)):
                *chunk_rows, terms = choice[c_index]
                for rows in chunk_rows:
                    for r, row in enumerate(rows):
                        records[offsets[c_index] + r] |= row
                for t, where in terms:
                    for r in where:
                        records[offsets[c_index] + r].add(t)
            for rows in choice[-1]:
                for r, row in enumerate(rows):
                    records[r] |= row
            counts = defaultdict(int)
            for record in records:
                for size in range(1, m + 1):
                    for itemset in combinations(sorted(record), size):
                        counts[itemset] += 1
            for itemset, count in counts.items():
                best[itemset] = max(best[itemset], count)
        for itemset, count in best.items():
            total[itemset] += count
    return dict(total)


@st.composite
def tiny_releases(draw):
    with_joint = draw(st.booleans())
    n_clusters = draw(st.integers(1, 2)) if not with_joint else 2
    max_size = 2 if with_joint else 3
    clusters = []
    used_in_joint: set[str] = set()
    shared_domain = set(draw(st.sets(st.sampled_from(ALPHABET), min_size=1, max_size=2))) if with_joint else set()
    for i in range(n_clusters):
        size = draw(st.integers(1, max_size))
        free = [x for x in ALPHABET if x not in shared_domain]
        chosen = draw(st.lists(st.sampled_from(free), min_size=1, max_size=4, unique=True))
        n_chunks = draw(st.integers(1, 2))
        slots = draw(st.lists(st.integers(0, n_chunks), min_size=len(chosen), max_size=len(chosen)))
        domains = [[x for x, s in zip(chosen, slots, strict=False) if s == d] for d in range(n_chunks)]
        term = sorted(x for x, s in zip(chosen, slots, strict=False) if s == n_chunks)[:1]
        chunks = []
        for domain in domains:
            if not domain:
                continue
            rows = draw(st.lists(st.sets(st.sampled_from(domain), min_size=1).map(sorted), min_size=1, max_size=size))
            chunks.append(rows)
        clusters.append(Cluster(f"c{i}", size, chunks, term))
        used_in_joint.add(f"c{i}")
    joints = []
    if with_joint:
        total = sum(c.size for c in clusters)
        rows = draw(
            st.lists(
                st.sets(st.sampled_from(sorted(shared_domain)), min_size=1).map(sorted),
                min_size=1,
                max_size=min(2, total),
            )
        )
        joints.append(JointCluster("j0", sorted(used_in_joint), [rows]))
    return Release("disassociated", params={"k": 2, "m": 2}, clusters=clusters, joint_clusters=joints)


@settings(max_examples=60, deadline=None)
@given(release=tiny_releases(), m=st.integers(1, 2), k=st.integers(2, 4))
def test_max_supports_equal_brute_force(release, m, k):
    expected = brute_force_maxima(release, m)
    got = max_supports(release, m, Context())
    assert got == expected
    certificate = check_disassociation_guarantee(release, k, m, Context())
    violations = {i: s for i, s in expected.items() if s < k}
    assert certificate.holds == (not violations)
    if violations:
        assert tuple(certificate.witness["itemset"]) in violations
        assert certificate.witness["max_support"] == violations[tuple(certificate.witness["itemset"])]


def test_small_cluster_with_term_chunk_is_caught():
    """A cluster of 2 records can hide a term among 2 records only: at k = 3 no
    reconstruction puts it in 3 records."""
    release = Release("disassociated", clusters=[Cluster("c0", 2, [[["a"], ["a"]]], ["t"])])
    cert = check_disassociation_guarantee(release, 3, 2, Context())
    assert cert.holds is False and cert.witness["max_support"] == 2
    ok = check_disassociation_guarantee(release, 2, 2, Context())
    assert ok.holds is True


def test_supports_add_up_across_clusters():
    """{t} is in the term chunk of two clusters of 2: up to 4 records in total."""
    release = Release("disassociated", clusters=[Cluster("c0", 2, [], ["t"]), Cluster("c1", 2, [], ["t"])])
    assert max_supports(release, 1, Context()) == {("t",): 4}
    assert check_disassociation_guarantee(release, 4, 1, Context()).holds is True


@st.composite
def nested_releases(draw):
    """Three clusters, joint j0 = {c0, c1} and j1 = {j0, c2}, one shared chunk each."""
    clusters = []
    for i in range(3):
        size = draw(st.integers(1, 2))
        domain = draw(st.sets(st.sampled_from("abcd"), min_size=1, max_size=2))
        rows = draw(
            st.lists(st.sets(st.sampled_from(sorted(domain)), min_size=1).map(sorted), min_size=1, max_size=size)
        )
        clusters.append(Cluster(f"c{i}", size, [rows], []))
    j0_rows = draw(st.lists(st.sets(st.sampled_from("xy"), min_size=1).map(sorted), min_size=1, max_size=2))
    j1_rows = draw(st.lists(st.sets(st.sampled_from("z"), min_size=1).map(sorted), min_size=1, max_size=2))
    joints = [JointCluster("j0", ["c0", "c1"], [j0_rows]), JointCluster("j1", ["c2", "j0"], [j1_rows])]
    return Release("disassociated", clusters=clusters, joint_clusters=joints)


def brute_force_nested(release, m):
    """Every reconstruction of the whole nested group at once."""
    sizes = [c.size for c in release.clusters]
    offsets = [0, sizes[0], sizes[0] + sizes[1]]
    n01, n_all = sizes[0] + sizes[1], sum(sizes)
    best = defaultdict(int)
    options = [_placements(c.record_chunks[0], c.size) for c in release.clusters]
    for p0, p1, p2, s0, s1 in product(
        *options,
        _placements(release.joint_clusters[0].shared_chunks[0], n01),
        _placements(release.joint_clusters[1].shared_chunks[0], n_all),
    ):
        records = [set() for _ in range(n_all)]
        for offset, rows in zip(offsets, (p0, p1, p2), strict=False):
            for r, row in enumerate(rows):
                records[offset + r] |= row
        for r, row in enumerate(s0):  # j0 spreads over the records of c0 and c1
            records[r] |= row
        for r, row in enumerate(s1):
            records[r] |= row
        counts = defaultdict(int)
        for record in records:
            for size in range(1, m + 1):
                for itemset in combinations(sorted(record), size):
                    counts[itemset] += 1
        for itemset, count in counts.items():
            best[itemset] = max(best[itemset], count)
    return dict(best)


@settings(max_examples=30, deadline=None)
@given(release=nested_releases(), m=st.integers(1, 3), k=st.integers(2, 4))
def test_nested_joint_clusters_equal_brute_force(release, m, k):
    expected = brute_force_nested(release, m)
    assert max_supports(release, m, Context()) == expected
    certificate = check_disassociation_guarantee(release, k, m, Context())
    assert certificate.holds == all(s >= k for s in expected.values())
    # the same tree written flattened, as the disassociation method publishes it
    j0, j1 = release.joint_clusters
    flat = Release(
        "disassociated",
        clusters=release.clusters,
        joint_clusters=[j0, JointCluster("j1", ["c0", "c1", "c2"], j1.shared_chunks)],
    )
    assert max_supports(flat, m, Context()) == expected


def test_crossing_joint_clusters_are_not_checked():
    clusters = [Cluster(f"c{i}", 2, [[["a"], ["a"]]], []) for i in range(3)]
    joints = [JointCluster("j0", ["c0", "c1"], [[["x"], ["x"]]]), JointCluster("j1", ["c1", "c2"], [[["y"], ["y"]]])]
    cert = check_disassociation_guarantee(
        Release("disassociated", clusters=clusters, joint_clusters=joints), 2, 2, Context()
    )
    assert cert.holds is None and "cross" in cert.details["reason"]
