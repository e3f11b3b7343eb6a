"""What the stages of a chained method hand each other, and how the vertical
chunker stage runs over the executor (DESIGN.md, "Hook specs and the registry").

Disassociation (Terrovitis et al., PVLDB 2012) is a chain of registered stages:
a partitioner splits the records into clusters, a vertical chunker turns each
cluster into record chunks and a term chunk, an optional refiner joins clusters
into joint clusters with shared chunks. The stages exchange plain, picklable
data over the item ids of the input :class:`~privtool.dataset.Dataset`:

* :class:`Partitioning`: clusters as arrays of record positions, and the
  suppressed positions;
* :class:`ClusterBatch`: consecutive clusters as integer arrays, the unit of
  work a chunker receives (in a worker process, on a Dask worker or here);
* :class:`ChunkedCluster`: the term domains of one cluster's record chunks and
  its term chunk;
* :class:`JointPlan`: a joint cluster (member clusters, shared chunk domains);
* :class:`Disassociation`: all of the above, from which the release is built.

:func:`chunk_clusters` is the one way a method runs its chunker: the clusters
in batches of about ``ctx.unit_occurrences`` item occurrences through
``ctx.map``, so the result never depends on the executor or the worker count.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any

import numpy as np

from .arrays import unique_int
from .context import Context, SeedSplitter
from .dataset import Dataset

if TYPE_CHECKING:
    from .components import Bound


@dataclass
class Partitioning:
    """Output of a horizontal partitioner: clusters of record positions of the
    input dataset, and the positions it suppressed (never dropped silently).
    Every record is in exactly one cluster or suppressed; no cluster is empty."""

    clusters: list[np.ndarray]
    suppressed: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    notes: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ChunkedCluster:
    """A vertical chunker's output for one cluster (item ids of the input dataset).

    ``record_chunks[i]`` is the term domain T_i of record chunk i (ascending
    ids); ``term_chunk`` the terms published without their records. The domains
    and the term chunk are pairwise disjoint and cover every term of the cluster.
    """

    record_chunks: tuple[tuple[int, ...], ...]
    term_chunk: tuple[int, ...]


@dataclass
class JointPlan:
    """A joint cluster (REFINE): ``members`` are indexes into the cluster list or
    (``("j", n)``) earlier joint plans; ``shared_chunks`` the term domains of its
    shared chunks, each holding the projection of every record of every member
    cluster on the domain."""

    members: list[tuple[str, int]]
    shared_chunks: list[tuple[int, ...]] = field(default_factory=list)


@dataclass
class Disassociation:
    """Everything the release is built from: the input, the partitioning, one
    :class:`ChunkedCluster` per cluster and the joint clusters."""

    dataset: Dataset
    clusters: list[np.ndarray]
    suppressed: np.ndarray
    chunks: list[ChunkedCluster]
    joints: list[JointPlan] = field(default_factory=list)


@dataclass(frozen=True)
class ClusterBatch:
    """Consecutive clusters as integer arrays: cluster ``first + c`` of the
    partitioning has ``cluster_sizes[c]`` records, record r (in cluster order)
    ``record_sizes[r]`` items, and ``items`` concatenates the records' ascending
    item ids. ``labels`` is the input's vocabulary."""

    first: int
    cluster_sizes: np.ndarray
    record_sizes: np.ndarray
    items: np.ndarray
    labels: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.cluster_sizes)

    @cached_property
    def _record_starts(self) -> np.ndarray:
        return np.r_[0, np.cumsum(self.cluster_sizes)].astype(np.int64)

    @cached_property
    def _occurrence_starts(self) -> np.ndarray:
        return np.r_[0, np.cumsum(self.record_sizes)].astype(np.int64)

    def cluster(self, c: int) -> Dataset:
        """Cluster ``first + c`` as a :class:`Dataset` over the input's vocabulary."""
        a, b = int(self._record_starts[c]), int(self._record_starts[c + 1])
        lo, hi = int(self._occurrence_starts[a]), int(self._occurrence_starts[b])
        return Dataset(self._occurrence_starts[a : b + 1] - lo, self.items[lo:hi], self.labels)


Unit = tuple[int, np.ndarray, np.ndarray, np.ndarray]
"""``(first, cluster_sizes, record_sizes, items)``: a :class:`ClusterBatch`
without the vocabulary, which travels once with the mapped function."""


def cluster_units(dataset: Dataset, clusters: list[np.ndarray], unit_occurrences: int) -> list[Unit]:
    """The clusters as units of about ``unit_occurrences`` item occurrences each
    (a larger cluster alone). Each unit's items are gathered on their own, so
    that no temporary grows with the dataset (one past glibc's 32 MiB mmap
    threshold is faulted in and zeroed anew: docs/results/scale.md, "Session
    11: disassociate's growth")."""
    if not clusters:
        return []
    cluster_sizes = np.array([len(rows) for rows in clusters], dtype=np.int64)
    order = np.concatenate(clusters)
    record_sizes = dataset.sizes[order]
    cluster_occ = np.add.reduceat(record_sizes, np.r_[0, np.cumsum(cluster_sizes)[:-1]])
    ends = np.cumsum(cluster_occ)
    cuts = unique_int(np.searchsorted(ends, np.arange(unit_occurrences, ends[-1], unit_occurrences), side="right"))
    cluster_cuts = [0, *cuts.tolist(), len(clusters)]
    record_cuts = np.r_[0, np.cumsum(cluster_sizes)]
    return [
        (
            a,
            cluster_sizes[a:b],
            record_sizes[record_cuts[a] : record_cuts[b]],
            dataset.subset(order[record_cuts[a] : record_cuts[b]]).items,
        )
        for a, b in itertools.pairwise(cluster_cuts)
        if a < b
    ]


def run_chunker(
    chunker: Any, params: dict[str, Any], seeds: SeedSplitter, labels: tuple[str, ...], unit: Unit
) -> list[ChunkedCluster]:
    """One unit of :func:`chunk_clusters` (top level, so that executors can pickle
    it): the guarded chunker's ``chunk_batch`` with a serial context of the run's seed."""
    return chunker.chunk_batch(ClusterBatch(*unit, labels), params, Context.of(seeds))


def chunk_clusters(dataset: Dataset, clusters: list[np.ndarray], chunker: Bound, ctx: Context) -> list[ChunkedCluster]:
    """One :class:`ChunkedCluster` per cluster, in cluster order, from the chosen
    chunker stage run over the context's executor."""
    units = cluster_units(dataset, clusters, ctx.unit_occurrences)
    work = partial(run_chunker, chunker.component, chunker.params, ctx.seeds, dataset.labels)
    batches = ctx.map(work, units, f"vertical partitioning ({chunker.name})")
    return [chunked for batch in batches for chunked in batch]
