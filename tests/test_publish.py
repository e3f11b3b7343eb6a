"""Disassociation's release builder (``plugins/disassociation/publish.py``)
against the definition of the release written plainly.

The builder lays the clusters out so that each joint plan's clusters are
consecutive and projects every record once; it must publish exactly what the
definition says for any joint plans a refiner may return: REFINE's trees,
plans that list the clusters of an earlier plan directly, plans whose sets of
clusters cross (the release then fails its structure checks, but it is still
built as defined), a cluster listed twice; with the records read in batches
and the sub-records ordered in slabs of any size. And the helper that orders the
sub-records is checked against Python's tuple order.
"""

from __future__ import annotations

from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from privtool.arrays import lexicographic_order
from privtool.chain import ChunkedCluster, Disassociation, JointPlan
from privtool.dataset import Dataset, label_sort_key
from privtool.plugins.disassociation import publish
from privtool.plugins.disassociation.publish import build_outcome


def reference_release(dis: Disassociation) -> tuple[list, list]:
    """``(clusters, joints)`` by the definition: a record chunk holds the
    non-empty projections of its cluster's records on its domain; a shared
    chunk those of every record of every simple cluster under its plan (a
    cluster counted once); a term chunk loses the terms of the shared chunks of
    every plan over its cluster; labels, sub-records and term chunks in
    canonical order."""
    ds = dis.dataset
    key = label_sort_key
    records = [{ds.labels[t] for t in ds.record(r).tolist()} for r in range(ds.n_records)]
    under: list[set[int]] = []
    for plan in dis.joints:
        under.append({c for kind, i in plan.members for c in (under[i] if kind == "j" else {i})})

    def chunk(rows: list[int], domain: tuple[int, ...]) -> list[list[str]]:
        labels = {ds.labels[t] for t in domain}
        subs = [sorted(records[r] & labels, key=key) for r in rows]
        return sorted((s for s in subs if s), key=lambda s: [key(x) for x in s])

    clusters = []
    for c, (rows, chunked) in enumerate(zip(dis.clusters, dis.chunks, strict=True)):
        shared = {t for n, plan in enumerate(dis.joints) if c in under[n] for d in plan.shared_chunks for t in d}
        term = sorted((ds.labels[t] for t in chunked.term_chunk if t not in shared), key=key)
        clusters.append(([chunk(rows.tolist(), d) for d in chunked.record_chunks], term))
    joints = []
    for n, plan in enumerate(dis.joints):
        rows = [r for c in sorted(under[n]) for r in dis.clusters[c].tolist()]
        joints.append([chunk(rows, d) for d in plan.shared_chunks])
    return clusters, joints


@st.composite
def disassociations(draw: st.DrawFn) -> Disassociation:
    """Random records in random clusters, each cluster's terms dealt at random
    to record chunks and its term chunk, and random joint plans over clusters
    and earlier plans (nested, flattened, crossing or repeated members), each
    with random disjoint shared domains."""
    labels = draw(st.lists(st.sampled_from("abcdefghijklmnop"), min_size=1, max_size=9, unique=True))
    rows = draw(st.lists(st.lists(st.sampled_from(labels), min_size=1, max_size=5), min_size=1, max_size=30))
    ds = Dataset.from_records(rows)
    n_clusters = draw(st.integers(1, min(6, ds.n_records)))
    owner = np.array(draw(st.lists(st.integers(0, n_clusters - 1), min_size=ds.n_records, max_size=ds.n_records)))
    clusters = [np.flatnonzero(owner == c) for c in range(n_clusters) if (owner == c).any()]
    chunks = []
    for rows_of in clusters:
        terms = np.unique(ds.subset(rows_of).items).tolist()
        where = draw(st.lists(st.integers(0, 2), min_size=len(terms), max_size=len(terms)))
        domains = tuple(tuple(t for t, w in zip(terms, where, strict=True) if w == n) for n in (1, 2))
        chunks.append(
            ChunkedCluster(
                tuple(d for d in domains if d), tuple(t for t, w in zip(terms, where, strict=True) if w == 0)
            )
        )
    joints: list[JointPlan] = []
    for n in range(draw(st.integers(0, 5))):
        refs = [("c", i) for i in range(len(clusters))] + [("j", i) for i in range(n)]
        members = draw(st.lists(st.sampled_from(refs), min_size=1, max_size=4))
        terms = draw(st.lists(st.integers(0, ds.n_items - 1), max_size=4, unique=True))
        cut = draw(st.integers(0, len(terms)))
        joints.append(JointPlan(members, [tuple(sorted(d)) for d in (terms[:cut], terms[cut:]) if d]))
    return Disassociation(ds, clusters, np.zeros(0, dtype=np.int64), chunks, joints)


@settings(max_examples=300, deadline=None)
@given(disassociations(), st.sampled_from([1, 4, publish.SLAB_OCCURRENCES]), st.sampled_from([1, 3, 1 << 20]))
def test_the_release_is_the_definition_for_any_joint_plans(dis: Disassociation, slab: int, batch: int) -> None:
    with mock.patch.object(publish, "SLAB_OCCURRENCES", slab), mock.patch.object(publish, "PROJECT_BATCH_ROWS", batch):
        release = build_outcome(dis.dataset, dis, {}).release
    clusters = [([chunk for chunk in c.record_chunks], list(c.term_chunk)) for c in release.clusters]
    joints = [list(j.shared_chunks) for j in release.joint_clusters]
    assert (clusters, joints) == reference_release(dis)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.lists(st.tuples(st.integers(0, 3), st.lists(st.integers(0, 5), max_size=5)), max_size=40),
        # wide items: a key packs one or two of them (and rows go on past it), or none
        st.lists(
            st.tuples(
                st.sampled_from([0, 1, 2**20, 2**40]), st.lists(st.sampled_from([0, 3, 2**20, 2**30]), max_size=5)
            ),
            max_size=40,
        ),
    )
)
def test_lexicographic_order_is_the_tuple_order(rows: list[tuple[int, list[int]]]) -> None:
    lead = np.array([lead for lead, _ in rows], dtype=np.int64)
    items = np.array([x for _, row in rows for x in row], dtype=np.int64)
    offsets = np.r_[0, np.cumsum([len(row) for _, row in rows])].astype(np.int64)
    expected = sorted(range(len(rows)), key=lambda i: (rows[i][0], rows[i][1]))
    assert lexicographic_order(lead, items, offsets).tolist() == expected
