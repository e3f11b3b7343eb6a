"""Pair supports for the relative association error (RAE).

* :func:`original_pair_supports`: the support of every pair of items that occur
  together in some record of a dataset, vectorised by record length.
* :func:`expected_pair_supports`: the expected support of every pair of items in
  a uniformly random reconstruction of a disassociated release (the uniform
  model of ALGORITHM-NOTES 1.3). Inside a chunk the support is exact; across
  chunks of a cluster of ``n`` records it is ``c(x) c(y) / n``; a term-chunk
  item counts as one occurrence in a uniformly random record (option (b) of the
  notes: the least consistent with "appears in the cluster"); an item of a
  shared chunk over ``N`` records meets an item of a member cluster in
  ``c(x) c(y) / N`` records, and an item of another shared chunk of the same
  joint cluster likewise.

Pairs are keyed ``x * V + y`` (``x < y`` ids into a vocabulary of size ``V``)
in ascending key order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from privtool.dataset import Dataset
from privtool.release import Release


def _aggregate(keys: list[np.ndarray], values: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    if not keys:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    k = np.concatenate(keys)
    v = np.concatenate(values)
    unique, inverse = np.unique(k, return_inverse=True)
    return unique, np.bincount(inverse, weights=v, minlength=len(unique))


def original_pair_supports(dataset: Dataset, vocabulary: int) -> tuple[np.ndarray, np.ndarray]:
    """Keys and supports of the pairs that occur in ``dataset`` (item ids are the
    dataset's; ``vocabulary`` >= its number of items)."""
    sizes = dataset.sizes
    keys: list[np.ndarray] = []
    values: list[np.ndarray] = []
    for length in np.unique(sizes):
        if length < 2:
            continue
        starts = dataset.indptr[:-1][sizes == length]
        block = dataset.items[starts[:, None] + np.arange(length)].astype(np.int64)
        first, second = np.triu_indices(int(length), 1)
        pair_keys = (block[:, first] * vocabulary + block[:, second]).ravel()
        keys.append(pair_keys)
        values.append(np.ones(len(pair_keys)))
    return _aggregate(keys, values)


def _block_pairs(ids: np.ndarray, matrix: np.ndarray, vocabulary: int) -> tuple[np.ndarray, np.ndarray]:
    """Upper-triangle entries of a symmetric pair matrix over ``ids`` as keys."""
    first, second = np.triu_indices(len(ids), 1)
    a, b = ids[first], ids[second]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    return lo * vocabulary + hi, matrix[first, second]


def _chunk_matrix(rows: Sequence[Sequence[str]], index: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """Item ids of a chunk and its 0/1 row-by-item incidence matrix."""
    labels = sorted({x for row in rows for x in row}, key=lambda x: index[x])
    local = {x: i for i, x in enumerate(labels)}
    matrix = np.zeros((len(rows), len(labels)))
    for r, row in enumerate(rows):
        matrix[r, [local[x] for x in row]] = 1.0
    return np.array([index[x] for x in labels], dtype=np.int64), matrix


def _group_pairs(
    groups: Sequence[tuple[np.ndarray, np.ndarray | None, np.ndarray]], records: int, vocabulary: int
) -> tuple[np.ndarray, np.ndarray]:
    """Expected pair supports inside ``records`` rows whose items come in
    independent groups ``(ids, incidence or None, supports)``: exact within a
    group with an incidence matrix, ``c(x) c(y) / records`` across groups."""
    ids = np.concatenate([g[0] for g in groups])
    supports = np.concatenate([g[2] for g in groups]).astype(float)
    matrix = np.outer(supports, supports) / records
    start = 0
    for group_ids, incidence, _ in groups:
        end = start + len(group_ids)
        if incidence is not None:
            matrix[start:end, start:end] = incidence.T @ incidence
        start = end
    return _block_pairs(ids, matrix, vocabulary)


def expected_pair_supports(release: Release, index: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """Keys and expected supports of the pairs of a disassociated release, over
    the vocabulary ``index`` (label -> id)."""
    vocabulary = len(index)
    keys: list[np.ndarray] = []
    values: list[np.ndarray] = []
    cluster_groups: dict[str, list[tuple[np.ndarray, np.ndarray | None, np.ndarray]]] = {}
    sizes = {c.id: c.size for c in release.clusters}
    for cluster in release.clusters:
        groups: list[tuple[np.ndarray, np.ndarray | None, np.ndarray]] = []
        for rows in cluster.record_chunks:
            ids, incidence = _chunk_matrix(rows, index)
            groups.append((ids, incidence, incidence.sum(axis=0)))
        for term in cluster.term_chunk:
            groups.append((np.array([index[term]], dtype=np.int64), None, np.ones(1)))
        cluster_groups[cluster.id] = groups
        if groups:
            k, v = _group_pairs(groups, cluster.size, vocabulary)
            keys.append(k)
            values.append(v)
    joints = {j.id: j for j in release.joint_clusters}

    def base_members(joint_id: str) -> list[str]:
        out: list[str] = []
        for member in joints[joint_id].members:
            out.extend(base_members(member) if member in joints else [member])
        return out

    for joint in release.joint_clusters:
        members = base_members(joint.id)
        records = sum(sizes[m] for m in members)
        shared = []
        for rows in joint.shared_chunks:
            ids, incidence = _chunk_matrix(rows, index)
            shared.append((ids, incidence, incidence.sum(axis=0)))
        if not shared:
            continue
        k, v = _group_pairs(shared, records, vocabulary)
        keys.append(k)
        values.append(v)
        shared_ids = np.concatenate([g[0] for g in shared])
        shared_supports = np.concatenate([g[2] for g in shared]) / records
        for member in members:
            groups = cluster_groups[member]
            if not groups:
                continue
            member_ids = np.concatenate([g[0] for g in groups])
            member_supports = np.concatenate([g[2] for g in groups]).astype(float)
            a, b = np.meshgrid(shared_ids, member_ids, indexing="ij")
            lo, hi = np.minimum(a, b).ravel(), np.maximum(a, b).ravel()
            distinct = lo != hi
            keys.append((lo * vocabulary + hi)[distinct])
            values.append(np.outer(shared_supports, member_supports).ravel()[distinct])
    return _aggregate(keys, values)
