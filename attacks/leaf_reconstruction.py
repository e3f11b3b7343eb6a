"""Reconstructions of a ``generalized`` release: every published node replaced
by a leaf drawn uniformly among the leaves it can stand for, as the utility
sections of the generalisation papers read a generalised item (each leaf under
it equally likely). Definition and choices: docs/metrics.md, "Reconstructions".

* A published label that is a leaf stands for itself.
* A published node stands for **one** leaf under it: the release says "one or
  more items under this node" and not how many, and one is the reading under
  which every leaf is equally likely (the uniform model of a generalised item).
* Nested labels (``lgr``'s ``{P, b}``) are read deepest-cover (docs/formats.md):
  ``P`` stands for a leaf under ``P`` that no deeper label of the same record
  covers. A record in which the deeper labels cover every leaf under a node is
  inconsistent and refused.

The sampler holds numpy arrays only (it is sent to workers) and draws a sample
with a few vectorised operations: in preorder the leaves under a node are a
contiguous run, so a uniform leaf is ``run start + j`` with ``j`` uniform in
``0 .. allowed - 1``, shifted past the runs of the deeper labels (ascending,
one vectorised step per rank of deeper label).
"""

from __future__ import annotations

import numpy as np

from privtool.arrays import pair_key
from privtool.dataset import Dataset, label_sort_key
from privtool.errors import InputError
from privtool.hierarchy import Hierarchy
from privtool.release import Release


class LeafSampler:
    """Draws reconstructions of a generalized release uniformly (see the module
    docstring); ``sample(rng)`` returns a :class:`~privtool.dataset.Dataset`
    over the leaves of the release's hierarchy, one record per published record."""

    def __init__(self, release: Release) -> None:
        if release.hierarchy is None:
            raise InputError("the generalized release has no hierarchy")
        hier = Hierarchy.from_json(release.hierarchy)
        lengths = np.fromiter((len(r) for r in release.records), dtype=np.int64, count=len(release.records))
        self.indptr = np.r_[0, np.cumsum(lengths)].astype(np.int64)
        node = np.fromiter(
            (hier.node_id(label) for record in release.records for label in record), dtype=np.int64, count=lengths.sum()
        )
        row = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
        # leaves in preorder: the leaves under v are ranks first_leaf[v] .. first_leaf[v] + leaf_count[v] - 1
        leaf_nodes = np.flatnonzero(hier.is_leaf)
        first_leaf = np.searchsorted(leaf_nodes, np.arange(hier.n_nodes))
        # each deeper label w of a record excludes its run from its nearest enclosing label of the record
        has_parent = node > 0
        enclosing = np.full(len(node), -1, dtype=np.int64)
        enclosing[has_parent] = hier.covering(row[has_parent], hier.parent[node[has_parent]], row, node)
        inner = np.flatnonzero(enclosing >= 0)
        owner = _occurrence_of(row, node, row[inner], enclosing[inner])
        excluded = np.bincount(owner, weights=hier.leaf_count[node[inner]], minlength=len(node)).astype(np.int64)
        self.start = first_leaf[node]
        self.allowed = hier.leaf_count[node] - excluded
        if np.any(self.allowed < 1):
            bad = int(np.flatnonzero(self.allowed < 1)[0])
            raise InputError(
                f"published record {int(row[bad])} holds node {hier.labels[node[bad]]!r} with deeper labels "
                "covering every leaf under it; no item is left for it to stand for"
            )
        # the excluded runs of each occurrence, ascending, grouped by rank
        order = np.lexsort((first_leaf[node[inner]], owner))
        owner, run_start = owner[order], first_leaf[node[inner]][order]
        run_length = hier.leaf_count[node[inner]][order]
        rank = np.arange(len(owner)) - np.searchsorted(owner, owner)
        self.skips = [
            (owner[rank == r], run_start[rank == r], run_length[rank == r])
            for r in range(int(rank.max(initial=-1)) + 1)
        ]
        labels = [hier.labels[v] for v in leaf_nodes]
        self.labels = tuple(sorted(labels, key=label_sort_key))
        position = {label: i for i, label in enumerate(self.labels)}
        self.item_of_rank = np.array([position[label] for label in labels], dtype=np.int32)

    def sample(self, rng: np.random.Generator) -> Dataset:
        """One reconstruction, drawn with ``rng``."""
        leaf = self.start + (rng.random(len(self.start)) * self.allowed).astype(np.int64)
        for owner, run_start, run_length in self.skips:
            leaf[owner] += np.where(leaf[owner] >= run_start, run_length, 0)
        return Dataset.from_csr(self.indptr, self.item_of_rank[leaf], self.labels, normalise=True)


def _occurrence_of(row: np.ndarray, node: np.ndarray, query_row: np.ndarray, query_node: np.ndarray) -> np.ndarray:
    """The index of the occurrence ``(query_row, query_node)`` among ``(row, node)``
    (every query is present)."""
    key = pair_key(row, node)
    order = np.argsort(key, kind="stable")
    return order[np.searchsorted(key[order], pair_key(query_row, query_node))]
