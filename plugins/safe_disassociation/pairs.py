"""Pair supports for the relative association error (RAE).

* :func:`original_pair_supports`: the support of every pair of items that occur
  together in some record of a dataset, vectorised by record length.
* :func:`expected_pair_supports`: the expected support of given pairs of items in
  a uniformly random reconstruction of a disassociated release (the uniform
  model of ALGORITHM-NOTES 1.3). Inside a chunk the support is exact; across
  chunks of a cluster of ``n`` records it is ``c(x) c(y) / n``; a term-chunk
  term follows the reconstruction module's model; an item of a shared chunk over
  ``N`` records meets an item of a member cluster in ``c(x) c(y) / N`` records.
  The tests check it against ``ReconstructionModel.expected_support`` and
  against the mean over every permutation.

Pairs are keyed ``x * V + y`` (``x < y`` ids into a vocabulary of size ``V``)
in ascending key order.

Both hold one entry per pair at once: every pair occurrence of the original,
the pairs of every cluster's items. Records or clusters with hundreds of items
make that billions of entries (2,000 records of 500 items: 249 million pair
occurrences), so :data:`PAIR_BUDGET` bounds them and beyond it the metric is
reported as not computable (:class:`~privtool.errors.MissingEvidence`) instead
of attempting the allocation.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from privtool.arrays import lookup_sorted, offsets_of
from privtool.dataset import Dataset
from privtool.errors import MissingEvidence
from privtool.release import Release

PAIR_BUDGET = 50_000_000
"""Most pair entries held at once (0.4 to 1.2 GB of arrays)."""


def check_pair_budget(entries: int, where: str) -> None:
    """:class:`MissingEvidence` when ``entries`` pair entries would exceed :data:`PAIR_BUDGET`."""
    if entries > PAIR_BUDGET:
        raise MissingEvidence(
            f"metric 'rae' would hold {entries:,} item pairs of {where} in memory, more than the "
            f"{PAIR_BUDGET:,} it allows; records or clusters with this many items are beyond what it measures."
        )


def _aggregate(keys: list[np.ndarray], values: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    if not keys:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    unique, inverse = np.unique(np.concatenate(keys), return_inverse=True)
    return unique, np.bincount(inverse, weights=np.concatenate(values), minlength=len(unique))


def original_pair_supports(dataset: Dataset, vocabulary: int) -> tuple[np.ndarray, np.ndarray]:
    """Keys and supports of the pairs that occur in ``dataset`` (item ids are the
    dataset's; ``vocabulary`` >= its number of items)."""
    sizes = dataset.sizes
    lengths = sizes.astype(object)  # exact: C(n, 2) of long records overflows no int64 here
    check_pair_budget(int(sum(lengths * (lengths - 1) // 2)), "the original")
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
    check_pair_budget(len(ids) * len(ids), "one cluster of the release")
    supports = np.concatenate([g[2] for g in groups]).astype(float)
    matrix = np.outer(supports, supports) / records
    start = 0
    for group_ids, incidence, _ in groups:
        end = start + len(group_ids)
        if incidence is not None:
            matrix[start:end, start:end] = incidence.T @ incidence
        start = end
    return _block_pairs(ids, matrix, vocabulary)


class _PairSums:
    """Accumulates expected supports into the positions of sorted pair keys,
    buffering the (key, value) pieces so that each flush is one vectorised pass."""

    def __init__(self, pairs: np.ndarray, buffer: int = 2_000_000) -> None:
        self.pairs = pairs
        self.total = np.zeros(len(pairs))
        self.keys: list[np.ndarray] = []
        self.values: list[np.ndarray] = []
        self.pending = 0
        self.buffer = buffer

    def add(self, keys: np.ndarray, values: np.ndarray) -> None:
        self.keys.append(keys)
        self.values.append(values)
        self.pending += len(keys)
        if self.pending >= self.buffer:
            self.flush()

    def add_at(self, positions: np.ndarray, values: np.ndarray) -> None:
        np.add.at(self.total, positions, values)

    def flush(self) -> np.ndarray:
        if self.keys and len(self.pairs):
            keys = np.concatenate(self.keys)
            values = np.concatenate(self.values)
            position, keep = lookup_sorted(self.pairs, keys)
            self.total += np.bincount(position[keep], weights=values[keep], minlength=len(self.pairs))
        self.keys, self.values, self.pending = [], [], 0
        return self.total


def _partners(pairs: np.ndarray, vocabulary: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each item, its partners in ``pairs`` and the positions of those pairs
    (CSR: ``ptr``, ``partner``, ``position``)."""
    lo, hi = pairs // vocabulary, pairs % vocabulary
    item = np.concatenate([lo, hi])
    partner = np.concatenate([hi, lo])
    position = np.concatenate([np.arange(len(pairs))] * 2)
    order = np.argsort(item, kind="stable")
    return offsets_of(np.bincount(item, minlength=vocabulary)), partner[order], position[order]


def _term_supports(release: Release) -> dict[str, float]:
    """Expected support ``n p`` of one term-chunk term in each cluster, ``p`` the
    probability that it lands on a given record slot in the reconstruction
    module's model (between 1 and ``min(k - 1, n)`` slots, every set equally likely)."""
    from privtool.attacks.reconstruction import ReconstructionModel, _term_slot_probability

    if not any(c.term_chunk for c in release.clusters):
        return {}
    model = ReconstructionModel(release)
    return {c.id: c.size * float(_term_slot_probability(c.size, c.term_cap)) for c in model.clusters}


def expected_pair_supports(release: Release, index: dict[str, int], pairs: np.ndarray) -> np.ndarray:
    """Expected supports, in a uniformly drawn reconstruction of a disassociated
    release (the model of :mod:`privtool.attacks.reconstruction`:
    ``sum_P n_P prod_i c_i / N_i * p_P ** t_P``), of the pairs ``pairs`` (sorted
    keys over the vocabulary ``index``, label -> id), in the same order.

    Vectorised form of the same sum: per cluster, ``c(x) c(y) / n`` across
    groups (record chunks, term-chunk terms with ``c = n p``) and the exact count
    inside a chunk; for a shared chunk item ``x`` (``c(x)`` rows over ``N``
    slots) and an item ``y`` of the slots it spans, ``c(x) / N`` times the summed
    expected support of ``y`` over those slots (shared items of other joint
    clusters weighted by the overlap of the two domains)."""
    vocabulary = len(index)
    sums = _PairSums(pairs)
    term_support = _term_supports(release)
    groups_of: dict[str, list[tuple[np.ndarray, np.ndarray | None, np.ndarray]]] = {}
    sizes = {c.id: c.size for c in release.clusters}
    for cluster in release.clusters:
        groups: list[tuple[np.ndarray, np.ndarray | None, np.ndarray]] = []
        for rows in cluster.record_chunks:
            ids, incidence = _chunk_matrix(rows, index)
            groups.append((ids, incidence, incidence.sum(axis=0)))
        for term in cluster.term_chunk:
            groups.append((np.array([index[term]], dtype=np.int64), None, np.array([term_support[cluster.id]])))
        groups_of[cluster.id] = groups
        if groups:
            sums.add(*_group_pairs(groups, cluster.size, vocabulary))
    if not release.joint_clusters:
        return sums.flush()
    ptr, partner, position = _partners(pairs, vocabulary)
    shared_of: dict[str, list[tuple[np.ndarray, np.ndarray | None, np.ndarray]]] = {}
    records = {}
    joints_over: dict[str, list[str]] = {}
    for joint in release.joint_clusters:
        records[joint.id] = sum(sizes[m] for m in joint.members)
        shared_of[joint.id] = [
            (ids, incidence, incidence.sum(axis=0))
            for ids, incidence in (_chunk_matrix(rows, index) for rows in joint.shared_chunks)
        ]
        for member in joint.members:
            joints_over.setdefault(member, []).append(joint.id)
    for joint in release.joint_clusters:
        shared = shared_of[joint.id]
        if not shared:
            continue
        n = records[joint.id]
        sums.add(*_group_pairs(shared, n, vocabulary))
        ids_below = [g[0] for m in joint.members for g in groups_of[m]]
        weights_below = [g[2].astype(float) for m in joint.members for g in groups_of[m]]
        overlap: dict[str, int] = {}
        for member in joint.members:
            for other in joints_over[member]:
                if other != joint.id:
                    overlap[other] = overlap.get(other, 0) + sizes[member]
        for other, slots in overlap.items():
            for ids, _, support in shared_of[other]:
                ids_below.append(ids)
                weights_below.append(support * slots / records[other])
        if not ids_below:
            continue
        below = np.bincount(np.concatenate(ids_below), weights=np.concatenate(weights_below), minlength=vocabulary)
        for ids, _, support in shared:
            for x, c in zip(ids.tolist(), support.tolist(), strict=False):
                lo, hi = ptr[x], ptr[x + 1]
                sums.add_at(position[lo:hi], c / n * below[partner[lo:hi]])
    return sums.flush()
