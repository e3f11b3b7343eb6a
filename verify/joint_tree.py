"""The tree of joint clusters worked out on a release's arrays (issue 20: the
structure checks at 5M records spent most of their time building a set of
clusters per joint cluster).

:func:`joint_parents` gives the parent of every node of that tree on any
release (and :class:`OverlappingJointClusters` when there is no tree), on the
release's arrays when :func:`laminar_parents` decides it, else with
:func:`nested_parents`. :func:`nested_parents` works on the sets of clusters
under each joint cluster (a Python set per joint cluster and a sort per
cluster: about 1.3 us of the driver's CPU per record at 2M-5M records, a fifth
of the verify stage's); :func:`laminar_parents` gives the same, for the common case of a
release held as CSR arrays whose joint clusters list only clusters (the
flattened nesting disassociation writes), with a few integer sorts: each
cluster's joint clusters ordered smallest first (equal sets: the earlier
first) form its chain of ancestors; the joint clusters nest exactly when every
joint cluster is followed, in the chain of every cluster under it, by the same
joint cluster or by none. It declines (``None``) whatever it does not decide
that way (a member that is a joint cluster or no cluster, joint clusters that
do not nest), and :func:`joint_parents` then asks :func:`nested_parents`,
which names the problem.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from privtool.arrays import run_starts, unique_int
from privtool.release import Release
from privtool.release_arrays import ReleaseArrays


class OverlappingJointClusters(Exception):
    """The joint clusters do not form a tree (their sets of clusters cross)."""


def joint_parents(release: Release) -> dict[str, str]:
    """Parent of every cluster and joint cluster in the tree of joint clusters
    (:func:`nested_parents`; on the release's arrays when :func:`laminar_parents`
    decides it). Raises :class:`OverlappingJointClusters` when there is no tree."""
    arrays = release.backing_arrays
    found = laminar_parents(arrays) if arrays is not None else None
    return found if found is not None else nested_parents(release)


def ancestor_chains(nodes: Sequence[str], parent: dict[str, str]) -> list[tuple[str, ...]]:
    """The ancestors of each of ``nodes`` in ``parent``, nearest first. Each
    node above another is walked once, and the nodes under one parent share
    one tuple (at 1M records a cluster has 14 joint clusters above it on
    average). Raises :class:`OverlappingJointClusters` naming the first node
    met twice on a walk up from one of ``nodes``."""
    up: dict[str, tuple[str, ...]] = {}  # a node above some node walked, then its ancestors

    def chain(node: str) -> tuple[str, ...]:
        path: list[str] = []
        above: tuple[str, ...] = ()
        while node in parent:
            node = parent[node]
            if node in up:
                above = up[node]
                break
            if node in path:
                raise OverlappingJointClusters(node)
            path.append(node)
        for walked in reversed(path):
            above = up[walked] = (walked, *above)
        return above

    return [chain(node) for node in nodes]


def nested_parents(release: Release) -> dict[str, str]:
    """Parent of every cluster and joint cluster in the tree of joint clusters,
    from the set of clusters under each joint cluster.

    A joint cluster may list joint clusters among its members (explicit nesting)
    or, as the disassociation method writes it, every simple cluster under it
    (flattened nesting). Either way the sets of clusters under the joint clusters
    must be laminar (two are disjoint or one holds the other); the parent of a
    node is then the smallest joint cluster strictly above it (equal sets: the
    later one in the release is above)."""
    arrays = release.backing_arrays  # the members only: never build the nested chunks for them
    listing: list[tuple[str, Sequence[str]]]
    if arrays is not None:
        listing = list(zip(arrays.joint_ids, arrays.joint_members, strict=True))
    else:
        listing = [(j.id, j.members) for j in release.joint_clusters]
    order = {jid: n for n, (jid, _) in enumerate(listing)}
    listed = {jid: list(members) for jid, members in listing}

    def clusters_under(joint: str, path: tuple[str, ...] = ()) -> frozenset[str]:
        if joint in path:
            raise OverlappingJointClusters(joint)
        out: set[str] = set()
        for member in listed[joint]:
            out |= clusters_under(member, (*path, joint)) if member in listed else {member}
        return frozenset(out)

    under = {j: clusters_under(j) for j in listed}
    chains: dict[str, list[str]] = defaultdict(list)
    for joint, members in under.items():
        for cluster in members:
            chains[cluster].append(joint)
    parent: dict[str, str] = {}
    for cluster, joints in chains.items():
        joints.sort(key=lambda j: (len(under[j]), order[j]))
        for child, above in zip([cluster, *joints], joints, strict=False):
            known = parent.setdefault(child, above)
            if known != above:
                raise OverlappingJointClusters(child)
    # Laminar iff every joint's clusters lie inside its parent's (each pair checked once).
    for child, above in parent.items():
        if child in under and not under[child] <= under[above]:
            raise OverlappingJointClusters(child)
    return parent


def laminar_parents(arrays: ReleaseArrays) -> dict[str, str] | None:
    """The parent of every cluster and joint cluster in the tree of joint
    clusters of ``arrays`` (the smallest joint cluster strictly above it; equal
    sets of clusters: the later one is above), or ``None`` (see the module doc)."""
    n_clusters, n_joints = arrays.n_clusters, arrays.n_joint_clusters
    if not n_joints:
        return {}
    members, offsets = arrays.member_index
    if len(members) == 0 or int(members.min()) < 0:
        return None
    joint = np.repeat(np.arange(n_joints, dtype=np.int64), np.diff(offsets))
    pairs = unique_int(joint * n_clusters + members.astype(np.int64), runs=True)  # a cluster listed twice counts once
    joint, cluster = np.divmod(pairs, n_clusters)
    width = np.bincount(joint, minlength=n_joints)
    if np.any(width == 0):
        return None
    rank = np.empty(n_joints, dtype=np.int64)
    rank[np.lexsort((np.arange(n_joints), width))] = np.arange(n_joints, dtype=np.int64)  # smallest first
    by_rank = np.argsort(rank)
    chains = np.sort(cluster * n_joints + rank[joint])  # each cluster's joint clusters, innermost first
    holder, link = np.divmod(chains, n_joints)
    first = run_starts(holder)
    last = np.r_[first[1:], len(holder)] - 1
    inner = by_rank[link]
    # the joint after each link in its cluster's chain (-1 after the last)
    after = np.full(len(link), -1, dtype=np.int64)
    not_last = np.ones(len(link), dtype=bool)
    not_last[last] = False
    after[not_last] = inner[1:][not_last[:-1]]
    # nested iff every joint cluster has one "after" for all its clusters
    keys = np.sort(inner * (n_joints + 1) + (after + 1))
    distinct = keys[run_starts(keys)] // (n_joints + 1)
    if len(distinct) != n_joints or np.any(distinct[1:] == distinct[:-1]):
        return None
    above = np.full(n_joints, -1, dtype=np.int64)
    above[inner] = after
    joint_ids, cluster_ids = arrays.joint_ids, arrays.cluster_ids
    parent = {cluster_ids[c]: joint_ids[j] for c, j in zip(holder[first].tolist(), inner[first].tolist(), strict=True)}
    parent.update((joint_ids[j], joint_ids[a]) for j, a in zip(range(n_joints), above.tolist(), strict=True) if a >= 0)
    return parent
