"""Disassociation (Terrovitis et al., PVLDB 2012) with the small-cluster
strategies of the strategies paper (Sustainability 15:7447, 2023).

Registers, as a plugin like any other:

* partitioners ``horpart``, ``suppression``, ``adding``, ``remaining-list``
  (:mod:`.horpart`);
* the vertical chunker ``verpart`` (:mod:`.verpart`);
* the refiner ``refine`` (:mod:`.refine`);
* the anonymizer ``disassociation`` (partitioner -> VERPART per cluster through
  the context's executor -> optional REFINE -> release, :mod:`.publish`);
* the metric ``tlost`` (:mod:`.tlost`).
"""

from __future__ import annotations

import itertools
from functools import partial
from typing import Any

import numpy as np

from privtool.claims import Claim
from privtool.components import Anonymizer, Metric, Outcome, Partitioner, Partitioning, Refiner, VerticalChunker
from privtool.context import Context
from privtool.dataset import Dataset
from privtool.errors import ParameterError
from privtool.hookspecs import hookimpl
from privtool.params import K, M, Param
from privtool.release import Release

from .horpart import STRATEGIES, occurrences, partition
from .model import ChunkedCluster, Disassociation, JointPlan
from .publish import build_outcome
from .refine import refine
from .tlost import release_k, tlost
from .verpart import verpart, verpart_batch

MAX_CLUSTER_SIZE = Param(
    "max_cluster_size", int, 30, "HORPART splits a group of records until it has at most this many.", min=2
)
PARTITIONER = Param(
    "partitioner", str, "adding", "Horizontal partitioner: what happens to parts smaller than k.", choices=STRATEGIES
)
REFINE = Param("refine", bool, True, "Join clusters into joint clusters with shared chunks (REFINE).")

_SUMMARIES = {
    "horpart": (
        "HORPART as published: recursive split on the most frequent unused term; "
        "a split leaving fewer than k records on a side is abandoned"
    ),
    "suppression": "HORPART that suppresses parts smaller than k (strategies paper, Algorithm 2)",
    "adding": "HORPART that adds parts smaller than k to the next part on the queue (strategies paper, Algorithm 3)",
    "remaining-list": "HORPART that re-partitions the parts smaller than k together (strategies paper, Algorithm 4)",
}


def check_sizes(k: int, max_cluster_size: int) -> None:
    """A cluster may not need more than ``max_cluster_size`` records to reach k."""
    if max_cluster_size < k:
        raise ParameterError(f"--max-cluster-size must be at least --k ({k}), not {max_cluster_size}.")


class StrategyPartitioner(Partitioner):
    """One of the four horizontal partitioners (see :mod:`.horpart`)."""

    params = (K, MAX_CLUSTER_SIZE)

    def __init__(self, strategy: str) -> None:
        self.strategy = strategy
        self.name = strategy
        self.summary = _SUMMARIES[strategy]

    def partition(self, dataset: Dataset, params: dict[str, Any], ctx: Context) -> Partitioning:
        check_sizes(params["k"], params["max_cluster_size"])
        with ctx.stage(f"horizontal partitioning ({self.strategy})"):
            return partition(dataset, params["k"], params["max_cluster_size"], self.strategy)


class VerPart(VerticalChunker):
    name = "verpart"
    summary = "VERPART: terms with support < k to the term chunk, the rest greedily into k^m-anonymous record chunks"
    params = (K, M)

    def chunk(self, cluster: Dataset, params: dict[str, Any], ctx: Context) -> ChunkedCluster:
        """The chunks of ``cluster`` (all its records form one cluster)."""
        return verpart(cluster.sizes, cluster.items, params["k"], params["m"])


class Refine(Refiner):
    name = "refine"
    summary = "REFINE: joint clusters whose k^m-anonymous shared chunks take terms out of term chunks"
    params = (K, M)

    def refine(self, clusters: Disassociation, params: dict[str, Any], ctx: Context) -> list[JointPlan]:
        """Joint clusters for the chunked clusters of ``clusters`` (its ``joints`` are ignored)."""
        with ctx.stage("refining"):
            return refine(clusters.dataset, clusters.clusters, clusters.chunks, params["k"], params["m"])


class Disassociate(Anonymizer):
    name = "disassociation"
    summary = "disassociation: HORPART (+ strategy), VERPART, REFINE; k^m-anonymous record and shared chunks"
    params = (PARTITIONER, K, M, MAX_CLUSTER_SIZE, REFINE)

    def claims(self, params: dict[str, Any]) -> list[Claim]:
        """k^m-anonymity at the method's k and m (every record chunk and shared
        chunk k^m-anonymous, hence the disassociation guarantee)."""
        return [Claim("km-anonymity", {"k": params["k"], "m": params["m"]})]

    def anonymize(self, dataset: Dataset, params: dict[str, Any], ctx: Context) -> Outcome:
        k, m = params["k"], params["m"]
        partitioning = StrategyPartitioner(params["partitioner"]).partition(dataset, params, ctx)
        clusters = partitioning.clusters
        units = cluster_batches(dataset, clusters)
        batches = ctx.map(partial(verpart_batch, k=k, m=m), units, "vertical partitioning")
        chunks = [chunked for batch in batches for chunked in batch]
        dis = Disassociation(dataset, clusters, partitioning.suppressed, chunks)
        if params["refine"]:
            dis.joints = Refine().refine(dis, {"k": k, "m": m}, ctx)
        outcome = build_outcome(dataset, dis, {})
        outcome.trail.notes.update(partitioning.notes)
        return outcome


UNIT_OCCURRENCES = 250_000
"""Item occurrences per unit of VERPART work: a unit is a run of consecutive
clusters, so that small inputs make fewer than two units per worker and run in
the calling process (starting a pool costs more than VERPART on them), while
large ones spread over the workers."""


def cluster_batches(dataset: Dataset, clusters: list[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The clusters as VERPART units ``(cluster_sizes, record_sizes, items)``
    (see :func:`.verpart.cluster_terms`) of about :data:`UNIT_OCCURRENCES` each."""
    if not clusters:
        return []
    cluster_sizes = np.array([len(rows) for rows in clusters], dtype=np.int64)
    order = np.concatenate(clusters)
    record_sizes = dataset.sizes[order]
    items, _ = occurrences(dataset, order)
    cluster_occ = np.add.reduceat(record_sizes, np.r_[0, np.cumsum(cluster_sizes)[:-1]])
    ends = np.cumsum(cluster_occ)
    cuts = np.unique(np.searchsorted(ends, np.arange(UNIT_OCCURRENCES, ends[-1], UNIT_OCCURRENCES), side="right"))
    cluster_cuts = [0, *cuts.tolist(), len(clusters)]
    record_cuts = np.r_[0, np.cumsum(cluster_sizes)]
    occ_cuts = np.r_[0, ends]
    units = []
    for a, b in itertools.pairwise(cluster_cuts):
        if a == b:
            continue
        units.append(
            (
                cluster_sizes[a:b],
                record_sizes[record_cuts[a] : record_cuts[b]],
                items[occ_cuts[a] : occ_cuts[b]],
            )
        )
    return units


class TLost(Metric):
    name = "tlost"
    summary = (
        "share of frequent terms (tlost_terms, tlost_terms_everywhere) "
        "and of item occurrences (tlost_occurrences) left in term chunks"
    )
    applies_to = ("disassociated",)
    better = "lower"
    needs = ("original",)
    params = (
        Param(
            "k",
            int,
            None,
            "A term is frequent when its original support is at least k (default: the release's k).",
            min=2,
        ),
    )

    def compute(self, release: Release, evidence: Any, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return tlost(release, evidence.original, release_k(release, params.get("k")), evidence.trail)


@hookimpl
def privtool_partitioners() -> list[Partitioner]:
    return [StrategyPartitioner(strategy) for strategy in STRATEGIES]


@hookimpl
def privtool_vertical_chunkers() -> list[VerticalChunker]:
    return [VerPart()]


@hookimpl
def privtool_refiners() -> list[Refiner]:
    return [Refine()]


@hookimpl
def privtool_anonymizers() -> list[Anonymizer]:
    return [Disassociate()]


@hookimpl
def privtool_metrics() -> list[Metric]:
    return [TLost()]
