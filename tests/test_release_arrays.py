"""privtool.release_arrays: the CSR form of a release's content, against the
nested lists it stands for (issue 20 item 1)."""

from __future__ import annotations

import dataclasses
from itertools import pairwise
from pathlib import Path
from unittest import mock

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privtool import release_arrays
from privtool.dataset import label_sort_key
from privtool.release import Cluster, JointCluster, Release, json_text, read_release, write_release
from privtool.release_arrays import ReleaseArrays, rows_in_order, strictly_increasing_rows

LABELS = st.sampled_from(["1", "2", "10", "007", "7", "a", "b", "é"])
CHUNK = st.lists(st.lists(LABELS, min_size=1, max_size=3), max_size=3)


@st.composite
def contents(draw: st.DrawFn) -> Release:
    if draw(st.booleans()):
        return Release("sanitized", records=draw(st.lists(st.lists(LABELS, max_size=3), max_size=5)))
    clusters = [
        Cluster(f"c{c}", 3, draw(st.lists(CHUNK, max_size=2)), draw(st.lists(LABELS, max_size=3)))
        for c in range(draw(st.integers(0, 3)))
    ]
    joints = [
        JointCluster(
            f"j{j}", draw(st.lists(st.sampled_from(["c0", "c1", "zz"]), min_size=1, max_size=2)), [draw(CHUNK)]
        )
        for j in range(draw(st.integers(0, 2)))
    ]
    return Release("disassociated", clusters=clusters, joint_clusters=joints)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(contents())
def test_the_arrays_hold_the_nested_content_in_its_own_order(release: Release) -> None:
    arrays = release.arrays
    assert arrays.clusters() == release.clusters
    assert arrays.joint_clusters() == release.joint_clusters
    assert arrays.records() == release.records
    assert list(arrays.labels) == sorted(arrays.labels, key=label_sort_key)  # code = canonical rank
    chunks = [(c, False, chunk) for c, cl in enumerate(release.clusters) for chunk in cl.record_chunks]
    chunks += [(j, True, chunk) for j, joint in enumerate(release.joint_clusters) for chunk in joint.shared_chunks]
    assert arrays.chunk_owner.tolist() == [owner for owner, _, _ in chunks]
    assert arrays.chunk_is_shared.tolist() == [shared for _, shared, _ in chunks]
    assert arrays.chunk_rows.tolist() == [len(chunk) for _, _, chunk in chunks]
    members, offsets = arrays.member_index
    ids = [c.id for c in release.clusters]
    expected = [ids.index(m) if m in ids else -1 for j in release.joint_clusters for m in j.members]
    assert members.tolist() == expected and offsets[-1] == len(expected)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(contents())
def test_is_canonical_says_whether_canonical_order_would_change_anything(release: Release) -> None:
    canonical = release.canonical()
    content = ("clusters", "joint_clusters", "records")
    same = all(getattr(canonical, name) == getattr(release, name) for name in content)
    assert release.arrays.is_canonical() == same
    assert ReleaseArrays.from_nested(canonical.clusters, canonical.joint_clusters, canonical.records).is_canonical()


def test_a_read_release_builds_its_nested_lists_only_when_asked_and_then_they_are_the_content(tmp_path: Path) -> None:
    release = Release("disassociated", {"k": 2}, clusters=[Cluster("c0", 2, [[["a"], ["a", "b"]]], ["t"])])
    path = tmp_path / "r.json"
    write_release(release, path)
    read = read_release(path)
    assert "_clusters" not in vars(read) and read.arrays.n_rows == 2  # arrays only
    assert read.dumps() == path.read_text(encoding="utf-8")
    read.clusters[0].term_chunk.append("s")  # the nested lists, once built, are the content
    assert read._arrays is None and read.arrays.term_items.tolist() == [3, 2]
    assert read.dumps() == json_text(read.to_json()) and '"term_chunk":["s","t"]' in read.dumps()
    copy = dataclasses.replace(read_release(path), params={"k": 3})  # dataclasses still work
    assert copy.clusters == release.clusters and copy.params == {"k": 3}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.integers(0, 3), max_size=4), max_size=12), st.data(), st.integers(1, 6))
def test_rows_in_order_says_whether_every_group_of_rows_is_sorted(
    rows: list[list[int]], data: st.DataObject, pairs_at_a_time: int
) -> None:
    """Rows in lexicographic order within each group, and each row strictly
    increasing, against Python's list order, whatever the slices looked at."""
    cuts = sorted(data.draw(st.lists(st.integers(0, len(rows)), max_size=4)))
    groups = [0, *cuts, len(rows)]
    items = np.array([code for row in rows for code in row], dtype=np.int32)
    row_offsets = np.cumsum([0, *map(len, rows)])
    expected = all(rows[r] <= rows[r + 1] for a, b in pairwise(groups) for r in range(a, b - 1))
    increasing = all(x < y for row in rows for x, y in pairwise(row))
    with mock.patch.object(release_arrays, "SLICE", pairs_at_a_time):
        assert rows_in_order(items, row_offsets, np.array(groups)) == expected
        assert strictly_increasing_rows(items, row_offsets) == increasing
