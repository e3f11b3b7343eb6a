"""The verifiers' CSR views of a disassociated release (issue 20) against the
nested release they stand for: batches of chunks, per-cluster views and the
longest reconstructable record, each compared with a plain walk over the
nested lists written here."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from privtool.arrays import offsets_of
from privtool.release import Cluster, JointCluster, Release
from privtool.verifiers.chunk_batches import ChunkBatches, chunk_location, label_rows
from privtool.verifiers.joint_tree import joint_parents
from privtool.verifiers.reconstruction_bounds import ClusterViews, longest_record

LABELS = ("a", "b", "c", "2", "10", "9")
rows = st.lists(st.sets(st.sampled_from(LABELS), max_size=4).map(sorted), max_size=5)


@st.composite
def releases(draw: st.DrawFn) -> Release:
    n = draw(st.integers(1, 5))
    clusters = [
        Cluster(
            f"c{i}",
            draw(st.integers(1, 9)),
            draw(st.lists(rows, max_size=3)),
            draw(st.sets(st.sampled_from(LABELS)).map(sorted)),
        )
        for i in range(n)
    ]
    joints = []
    if n >= 2 and draw(st.booleans()):
        joints.append(JointCluster("j0", ["c0", "c1"], draw(st.lists(rows, max_size=2))))
        if n >= 3 and draw(st.booleans()):
            joints.append(JointCluster("j1", ["j0", "c2"], draw(st.lists(rows, max_size=2))))
    return Release(kind="disassociated", clusters=clusters, joint_clusters=joints)


def nested_chunks(release: Release) -> list[tuple[dict, tuple]]:
    """Every chunk with its location, walking the nested lists (the oracle)."""
    out = []
    for c in release.clusters:
        for i, chunk in enumerate(c.record_chunks):
            out.append(({"cluster": c.id, "record_chunk": i}, tuple(tuple(r) for r in chunk)))
    for j in release.joint_clusters:
        for i, chunk in enumerate(j.shared_chunks):
            out.append(({"joint_cluster": j.id, "shared_chunk": i}, tuple(tuple(r) for r in chunk)))
    return out


@settings(max_examples=60, deadline=None)
@given(release=releases(), size=st.integers(1, 4))
def test_batches_hold_every_chunk_with_its_location(release: Release, size: int) -> None:
    arrays = release.arrays
    batches = ChunkBatches.all_chunks(arrays, size)
    got = [(b.location(n), rows) for b in batches for n, rows in enumerate(b.chunks())]
    assert got == nested_chunks(release)
    assert [b.first for b in batches] == list(range(0, arrays.n_chunks, size))
    for b in batches:  # each local code's release code, ascending, and the label it stands for
        assert b.codes.tolist() == sorted(set(b.codes.tolist()))
        assert tuple(arrays.labels[c] for c in b.codes.tolist()) == b.labels
    assert [b.first for b in batches[1:3]] == [b.first for b in list(batches)[1:3]]
    assert [chunk_location(arrays, c) for c in range(arrays.n_chunks)] == [loc for loc, _ in nested_chunks(release)]
    record = ChunkBatches.record_chunks(arrays, size)
    shared = ChunkBatches.shared_chunks(arrays, size)
    split = [rows for part in (record, shared) for b in part for rows in b.chunks()]
    assert split == [rows for _, rows in nested_chunks(release)]


@settings(max_examples=60, deadline=None)
@given(release=releases())
def test_cluster_views_and_longest_record_match_the_nested_release(release: Release) -> None:
    parent = joint_parents(release)
    views = ClusterViews(release.arrays, parent, 2, 5)
    shared = {j.id: tuple(tuple(tuple(r) for r in ch) for ch in j.shared_chunks) for j in release.joint_clusters}
    longest = 0
    for n, c in enumerate(release.clusters):
        chain, node = [], c.id
        while node in parent:
            node = parent[node]
            chain.append(node)
        record = tuple(tuple(tuple(r) for r in ch) for ch in c.record_chunks)
        expected = (c.id, c.size, record, tuple(c.term_chunk), tuple((j, shared[j]) for j in chain), 2, 5)
        assert views[n] == expected
        lazy = views.lazy_view(n)  # shared chunks decoded one by one when indexed
        assert (*lazy[:4], tuple((j, tuple(chunks)) for j, chunks in lazy[4]), *lazy[5:]) == expected
        widest = sum(max(map(len, ch), default=0) for ch in (*record, *(ch for j in chain for ch in shared[j])))
        longest = max(longest, len(c.term_chunk) + widest)
    assert longest_record(views) == longest


@settings(max_examples=100, deadline=None)
@given(codes=st.lists(st.lists(st.integers(0, len(LABELS) - 1), max_size=4), max_size=5))
def test_label_rows_reads_each_code_as_its_label(codes: list[list[int]]) -> None:
    """Fewer occurrences than labels (looked up one by one) and more (through
    an object array of the labels) give the same rows."""
    items = np.array([code for row in codes for code in row], dtype=np.int32)
    assert label_rows(LABELS, items, offsets_of(map(len, codes))) == [tuple(LABELS[c] for c in row) for row in codes]
