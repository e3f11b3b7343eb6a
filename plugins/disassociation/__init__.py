"""Disassociation (Terrovitis et al., PVLDB 2012) with the small-cluster
strategies of the strategies paper (Sustainability 15:7447, 2023).

Registers, as a plugin like any other:

* partitioners ``horpart``, ``horpart-literal``, ``suppression``, ``adding``,
  ``adding-skip-sibling``, ``remaining-list`` (:mod:`.horpart`);
* the vertical chunker ``verpart`` (:mod:`.verpart`);
* the refiner ``refine`` (:mod:`.refine`);
* the anonymizer ``disassociation``: a chain of registered stages, each chosen
  by name (``--partitioner``, ``--chunker``, ``--refiner NAME|none``), the
  built-in ones above by default: partitioner -> chunker per cluster through the
  context's executor (:func:`privtool.chain.chunk_clusters`) -> optional refiner
  -> release (:mod:`.publish`). A third-party partitioner, chunker or refiner
  takes part exactly as the built-ins do;
* the metric ``tlost`` (:mod:`.tlost`).
"""

from __future__ import annotations

from typing import Any

from privtool.chain import ChunkedCluster, ClusterBatch, Disassociation, JointPlan, chunk_clusters
from privtool.claims import Claim
from privtool.components import (
    Anonymizer,
    Bound,
    Metric,
    Outcome,
    Partitioner,
    Partitioning,
    Refiner,
    Stage,
    VerticalChunker,
)
from privtool.context import Context
from privtool.dataset import Dataset
from privtool.errors import ParameterError
from privtool.gcpause import paused_gc
from privtool.hookspecs import hookimpl
from privtool.params import K, M, Param
from privtool.release import Release

from .horpart import STRATEGIES, partition
from .publish import build_outcome
from .refine import refine
from .tlost import release_k, tlost
from .verpart import ORDERS, verpart, verpart_batch

MAX_CLUSTER_SIZE = Param(
    "max_cluster_size", int, 30, "HORPART splits a group of records until it has at most this many.", min=2
)
VERPART_ORDER = Param(
    "verpart_order",
    str,
    "support",
    "Order VERPART tries a cluster's terms in: support (the paper's: support descending, ties by label) or random "
    "(a shuffle per cluster drawn from the seed; see docs/attacks.md, minimality).",
    choices=ORDERS,
)

_SUMMARIES = {
    "horpart": "HORPART with the strategies paper's abandon rule (its section 4): a split leaving fewer than k "
    "records on a side is abandoned",
    "horpart-literal": "Terrovitis et al.'s HORPART as printed: every split on the most frequent unused term is "
    "made, no k check (clusters may have fewer than k records)",
    "suppression": "HORPART that suppresses parts smaller than k (strategies paper, Algorithm 2)",
    "adding": "HORPART that adds parts smaller than k to the next part on the queue (strategies paper, Algorithm 3)",
    "adding-skip-sibling": "adding, reading Algorithm 3's 'second cluster in Q' as the part waiting after the small "
    "part's own sibling",
    "remaining-list": "HORPART that re-partitions the parts smaller than k together (strategies paper, Algorithm 4)",
}


def check_sizes(k: int, max_cluster_size: int) -> None:
    """A cluster may not need more than ``max_cluster_size`` records to reach k."""
    if max_cluster_size < k:
        raise ParameterError(f"--max-cluster-size must be at least --k ({k}), not {max_cluster_size}.")


class StrategyPartitioner(Partitioner):
    """One of the horizontal partitioners of :data:`.horpart.STRATEGIES` (see :mod:`.horpart`)."""

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
    params = (K, M, VERPART_ORDER)

    def chunk(self, cluster: Dataset, params: dict[str, Any], ctx: Context) -> ChunkedCluster:
        """The chunks of ``cluster`` (all its records form one cluster)."""
        order = params.get("verpart_order", "support")
        return verpart(cluster.sizes, cluster.items, params["k"], params["m"], order, ctx.seed)

    def chunk_batch(self, batch: ClusterBatch, params: dict[str, Any], ctx: Context) -> list[ChunkedCluster]:
        """VERPART of every cluster of ``batch`` at once (supports and bitsets
        computed together, :func:`.verpart.cluster_terms`)."""
        unit = (batch.cluster_sizes, batch.record_sizes, batch.items)
        order = params.get("verpart_order", "support")
        return verpart_batch(unit, params["k"], params["m"], order, ctx.seed)


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
    summary = (
        "disassociation: partitioner (HORPART + strategy), vertical chunker (VERPART), refiner (REFINE); "
        "k^m-anonymous record and shared chunks"
    )
    stages = (
        Stage("partitioner", "partitioner", "adding", "Horizontal partitioner: splits the records into clusters."),
        Stage(
            "chunker", "vertical_chunker", "verpart", "Vertical chunker: record chunks and a term chunk per cluster."
        ),
        Stage(
            "refiner",
            "refiner",
            "refine",
            "Refiner: joint clusters with shared chunks (none: publish the clusters as chunked).",
            optional=True,
        ),
    )
    params = (K, M)

    def claims(self, params: dict[str, Any]) -> list[Claim]:
        """k^m-anonymity at the method's k and m (every record chunk and shared
        chunk k^m-anonymous, hence the disassociation guarantee)."""
        return [Claim("km-anonymity", {"k": params["k"], "m": params["m"]})]

    def anonymize(self, dataset: Dataset, params: dict[str, Any], ctx: Context) -> Outcome:
        partitioner: Bound = params["partitioner"]
        chunker: Bound = params["chunker"]
        refiner: Bound | None = params["refiner"]
        partitioning = partitioner.component.partition(dataset, partitioner.params, ctx)
        chunks = chunk_clusters(dataset, partitioning.clusters, chunker, ctx)
        dis = Disassociation(dataset, partitioning.clusters, partitioning.suppressed, chunks)
        # REFINE and publishing build many acyclic containers (lists of ids, of
        # sub-records): the cyclic collector's walks over them would find nothing
        with paused_gc():
            if refiner is not None:
                dis.joints = refiner.component.refine(dis, refiner.params, ctx)
            outcome = build_outcome(dataset, dis, {})
        outcome.trail.notes.update(partitioning.notes)
        return outcome


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
