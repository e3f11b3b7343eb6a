"""Types passed between the stages of disassociation.

The three stages hand each other plain, picklable data over the item ids of the
input :class:`~privtool.dataset.Dataset`:

* a partitioner returns a :class:`~privtool.components.Partitioning`
  (clusters as arrays of record positions, plus suppressed positions);
* a vertical chunker turns one cluster into a :class:`ChunkedCluster`: the term
  domains of its record chunks, in creation order, and its term chunk;
* a refiner turns the list of chunked clusters into :class:`JointPlan`\\ s:
  groups of clusters that publish shared chunks together, the shared chunk
  terms being removed from the members' term chunks.

:func:`privtool.plugins.disassociation.release.build_outcome` turns the lot into
the published release and the private trail.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from privtool.dataset import Dataset


@dataclass(frozen=True)
class ChunkedCluster:
    """VERPART's output for one cluster (item ids of the input dataset).

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
