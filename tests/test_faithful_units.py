"""Faithfulness's check on arrays in units (verify/faithful_units.py) against the
per-cluster check it falls back to: on releases the disassociation method and
the safe sanitizer made from random data, untouched or with one random change
to the release or the trail, both give the same count or the same witness."""

from __future__ import annotations

import copy
from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from privtool.context import Context
from privtool.dataset import Dataset
from privtool.pipeline import run_method
from privtool.release import Cluster, JointCluster, Release
from privtool.trail import Trail
from privtool.verifiers import faithful_units, faithfulness
from privtool.verifiers.faithfulness import Unfaithful, check_disassociated_content

LABELS = [str(i) for i in range(9)]


def outcome_of(check):
    try:
        return ("count", check())
    except Unfaithful as failure:
        return ("witness", failure.witness)


def both(release, original, trail):
    """The unit check's result (one unit, and units and shared-chunk slabs of a
    few occurrences, which must agree) and the per-cluster check's."""
    fast = outcome_of(lambda: check_disassociated_content(release, original, trail))
    with (
        mock.patch.object(faithful_units, "UNIT_OCCURRENCES", 4),
        mock.patch.object(faithful_units, "SLAB_OCCURRENCES", 3),
    ):
        small = outcome_of(lambda: check_disassociated_content(release, original, trail))
    assert small == fast
    with mock.patch.object(faithful_units, "_words", lambda wide: np.zeros(wide, dtype=np.uint64)):
        colliding = outcome_of(lambda: check_disassociated_content(release, original, trail))
    assert colliding == fast  # every sub-record of a length hashes alike: the exact comparisons decide
    slow = outcome_of(lambda: check_disassociated_content(release, original, trail, fast=False))
    return fast, slow


def units_alone(release, original, trail):
    """The unit check's result when the per-cluster check must not be reached."""
    refuse = mock.Mock(side_effect=AssertionError("reached the per-cluster check"))
    with mock.patch.multiple(faithfulness._ClusterChecks, cluster=refuse, joint=refuse):
        return outcome_of(lambda: check_disassociated_content(release, original, trail))


def made(records, k, sanitizer):
    from privtool.registry import load_registry

    data = Dataset.from_records([sorted(r) for r in records])
    options = {"k": k, "m": 2, "max_cluster_size": 6}
    outcome = run_method(
        load_registry(), data, "disassociation", options, Context(seed=1), [sanitizer] if sanitizer else []
    )
    return data, outcome.release, outcome.trail


def rebuilt(release, clusters, joints):
    return Release(
        "disassociated",
        params=dict(release.params),
        stats=dict(release.stats),
        clusters=clusters,
        joint_clusters=joints,
    )


def change(release, trail, kind, pick):
    """``release`` and ``trail`` with one change of kind ``kind`` (``pick`` chooses where)."""
    clusters = copy.deepcopy(release.clusters)
    joints = copy.deepcopy(release.joint_clusters)
    trail = copy.deepcopy(trail)
    chunks = [c for cl in clusters for c in cl.record_chunks] + [c for j in joints for c in j.shared_chunks]
    rows = [row for chunk in chunks for row in chunk]
    if kind == "drop item" and any(len(r) > 1 for r in rows):
        row = [r for r in rows if len(r) > 1][pick % sum(len(r) > 1 for r in rows)]
        row.pop(pick % len(row))
    elif kind == "swap item" and rows:
        row = rows[pick % len(rows)]
        row[pick % len(row)] = LABELS[(pick // 7) % len(LABELS)]
        row[:] = sorted(set(row))
    elif kind == "drop row" and chunks:
        chunk = chunks[pick % len(chunks)]
        chunk.pop(pick % len(chunk))
    elif kind == "size" and clusters:
        clusters[pick % len(clusters)].size += 1 if pick % 2 else -1
    elif kind == "term" and clusters:
        term = clusters[pick % len(clusters)].term_chunk
        if term and pick % 2:
            term.pop()
        else:
            term.append(LABELS[pick % len(LABELS)])
            term[:] = sorted(set(term))
    elif kind == "move record" and len(trail.cluster_of_record) and clusters:
        names = trail.cluster_of_record.tolist()
        names[pick % len(names)] = clusters[(pick // 3) % len(clusters)].id
        trail.cluster_of_record = names
    elif kind == "ghost" and trail.ghost_records:
        trail.ghost_records.pop(pick % len(trail.ghost_records))
    elif kind == "removed" and len(trail.cluster_of_record):
        position = pick % len(trail.cluster_of_record)
        trail.removed_items.append([position, LABELS[pick % len(LABELS)]])
    elif kind == "partial" and any(len(r) > 1 for r in rows):
        return partially_suppressed(release, clusters, joints, trail, rows, pick)
    return rebuilt(release, clusters, joints), trail


def partially_suppressed(release, clusters, joints, trail, rows, pick):
    """One item removed from one sub-record and counted (a partial suppression
    the stats state): still faithful, one more occurrence removed."""
    row = [r for r in rows if len(r) > 1][pick % sum(len(r) > 1 for r in rows)]
    row.pop(pick % len(row))
    changed = rebuilt(release, clusters, joints)
    stats = trail.stats if "suppressed_item_occurrences" in trail.stats else changed.stats
    stats["suppressed_item_occurrences"] = stats.get("suppressed_item_occurrences", len(trail.removed_items)) + 1
    return changed, trail


KINDS = ["none", "drop item", "swap item", "drop row", "size", "term", "move record", "ghost", "removed", "partial"]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sets(st.sampled_from(LABELS), min_size=1, max_size=5), min_size=4, max_size=40),
    st.integers(2, 3),
    st.sampled_from([None, "safe-disassociation"]),
    st.sampled_from(KINDS),
    st.integers(0, 10_000),
)
def test_units_agree_with_the_per_cluster_check(records, k, sanitizer, kind, pick) -> None:
    original, release, trail = made(records, k, sanitizer)
    if kind != "none":
        release, trail = change(release, trail, kind, pick)
    fast, slow = both(release, original, trail)
    assert fast == slow


@st.composite
def nested_cases(draw):
    """A hand-made faithful release with joint clusters (none, one, or one nested
    in another) over random records: each label goes to record chunk 0 or 1,
    the shared chunk of joint cluster 0 or 1 (published nowhere for a cluster
    not under it), or the term chunk; then one random change."""
    n_clusters = draw(st.integers(1, 4))
    records = draw(st.lists(st.sets(st.sampled_from(LABELS), min_size=1, max_size=4), min_size=n_clusters, max_size=16))
    cluster_of = [i % n_clusters for i in range(len(records))]
    joints = [("j0", [0, 1]), ("j1", [0, 1, 2])][: draw(st.integers(0, 2))]
    joints = [(jid, members) for jid, members in joints if max(members) < n_clusters]
    place = {label: draw(st.sampled_from(["r0", "r1", "s0", "s1", "term"])) for label in LABELS}

    def rows_of(members):
        return [records[i] for i in range(len(records)) if cluster_of[i] in members]

    def chunk(rows, where):
        part = sorted(sorted(x for x in r if place[x] == where) for r in rows)
        return [p for p in part if p]

    clusters = []
    for c in range(n_clusters):
        rows = rows_of({c})
        chunks = [part for part in (chunk(rows, "r0"), chunk(rows, "r1")) if part]
        term = sorted({x for r in rows for x in r if place[x] == "term"})
        clusters.append(Cluster(f"c{c}", len(rows), chunks, term))
    joint_clusters = []
    for index, (jid, members) in enumerate(joints):
        part = chunk(rows_of(set(members)), f"s{index}")
        joint_clusters.append(JointCluster(jid, [f"c{m}" for m in members], [part] if part else []))
    lost = sum(
        1
        for i, r in enumerate(records)
        for x in r
        if place[x][0] == "s" and not _under(cluster_of[i], place[x], joints)
    )
    original = Dataset.from_records([sorted(r) for r in records])
    release = Release(
        "disassociated",
        params={"method": "hand-rolled", "k": 1, "m": 2},
        stats={"records_in": len(records), "suppressed_records": 0, "suppressed_item_occurrences": lost},
        clusters=clusters,
        joint_clusters=joint_clusters,
    )
    trail = Trail(cluster_of_record=[f"c{c}" for c in cluster_of])
    return original, release, trail, draw(st.sampled_from(KINDS)), draw(st.integers(0, 10_000))


def _under(cluster, where, joints):
    index = int(where[1])
    return index < len(joints) and cluster in joints[index][1]


@settings(max_examples=80, deadline=None)
@given(nested_cases())
def test_units_agree_on_joint_clusters(case) -> None:
    original, release, trail, kind, pick = case
    if kind == "none":
        assert both(release, original, trail)[0][0] == "count"
    else:
        release, trail = change(release, trail, kind, pick)
    fast, slow = both(release, original, trail)
    assert fast == slow
    if kind in ("none", "partial"):  # faithful: decided without the per-cluster check
        assert units_alone(release, original, trail) == slow


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sets(st.sampled_from(LABELS), min_size=1, max_size=5), min_size=4, max_size=40),
    st.integers(2, 3),
    st.sampled_from(["none", "partial"]),
    st.integers(0, 10_000),
)
def test_partial_suppression_is_checked_on_arrays(records, k, kind, pick) -> None:
    """A faithful safe release, as made or with one more counted partial
    suppression, is decided by the units alone (no cluster reaches the
    per-cluster check), with the per-cluster check's count."""
    original, release, trail = made(records, k, "safe-disassociation")
    if kind != "none":
        release, trail = change(release, trail, kind, pick)
    slow = outcome_of(lambda: check_disassociated_content(release, original, trail, fast=False))
    assert slow[0] == "count"
    assert units_alone(release, original, trail) == slow


@st.composite
def forests(draw):
    """``owner_parent`` of a random forest: clusters ``0..n-1`` then joint
    clusters, each joint cluster's parent a later joint cluster or none."""
    n_clusters, n_joints = draw(st.integers(0, 30)), draw(st.integers(0, 8))
    joints = range(n_clusters, n_clusters + n_joints)
    joint_parent = [draw(st.sampled_from([-1, *joints[j + 1 :]])) for j in range(n_joints)]
    cluster_parent = [draw(st.sampled_from([-1, *joints])) for _ in range(n_clusters)]
    return np.array(cluster_parent + joint_parent, dtype=np.int64), n_clusters


@settings(max_examples=200, deadline=None)
@given(forests())
def test_tree_order_keeps_the_clusters_under_each_joint_cluster_together(forest) -> None:
    owner_parent, n_clusters = forest
    order = faithful_units.tree_order(owner_parent, n_clusters)
    assert sorted(order.tolist()) == list(range(n_clusters))
    place = {c: i for i, c in enumerate(order.tolist())}
    for joint in range(n_clusters, len(owner_parent)):
        under = []
        for c in range(n_clusters):
            up = owner_parent[c]
            while up >= 0 and up != joint:
                up = owner_parent[up]
            if up == joint:
                under.append(place[c])
        assert not under or max(under) - min(under) == len(under) - 1
