"""A plugin for fault injection: one working component of every kind, each of
which raises (or returns what its contract forbids) on demand.

``PRIVTOOL_TEST_FAULT=KIND.METHOD`` makes that method raise
``RuntimeError("injected fault")`` (``partitioner.partition``,
``metric.compute``, ...); ``PRIVTOOL_TEST_FAULT=KIND.METHOD:return`` makes it
return a string instead; ``hook.NAME`` makes the hook ``NAME`` raise. Without
the variable every component works, so ``tests/test_plugin_isolation.py`` can
show that a fault is reported against this plugin and nothing else. Components
read the variable when their hook makes them, and carry it to worker processes.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import IO, Any

import numpy as np

from privtool.chain import ChunkedCluster, Disassociation, JointPlan, Partitioning
from privtool.claims import Claim
from privtool.components import (
    Anonymizer,
    Attack,
    ClaimModel,
    Evidence,
    Format,
    Metric,
    Outcome,
    Partitioner,
    Refiner,
    Sanitizer,
    Verifier,
    VerticalChunker,
)
from privtool.context import Context
from privtool.dataset import Dataset
from privtool.params import K
from privtool.release import Release
from privtool.results import Certificate, Finding
from privtool.trail import Trail

FAULT_ENV = "PRIVTOOL_TEST_FAULT"


def fault(where: str, result: Any, asked: str | None = None) -> Any:
    """``result``, unless the fault ``asked`` (by default ``PRIVTOOL_TEST_FAULT``) is at ``where``."""
    asked = os.environ.get(FAULT_ENV, "") if asked is None else asked
    if asked == where:
        raise RuntimeError("injected fault")
    if asked == f"{where}:return":
        return "not what the contract says"
    return result


class Faulty:
    """Remembers the fault asked for when the component was made."""

    def __init__(self) -> None:
        self.asked = os.environ.get(FAULT_ENV, "")

    def fault(self, where: str, result: Any) -> Any:
        return fault(where, result, self.asked)


class BrokenPartitioner(Faulty, Partitioner):
    name = "broken-partitioner"
    summary = "test only: runs of at least k consecutive records"
    params = (K,)

    def partition(self, dataset: Dataset, params: dict[str, Any], ctx: Context) -> Partitioning:
        parts = max(1, dataset.n_records // params["k"])
        return self.fault("partitioner.partition", Partitioning(np.array_split(np.arange(dataset.n_records), parts)))


class BrokenChunker(Faulty, VerticalChunker):
    name = "broken-chunker"
    summary = "test only: every term in the term chunk"

    def chunk(self, cluster: Dataset, params: dict[str, Any], ctx: Context) -> ChunkedCluster:
        return self.fault("vertical_chunker.chunk", ChunkedCluster((), tuple(np.unique(cluster.items).tolist())))


class BrokenRefiner(Faulty, Refiner):
    name = "broken-refiner"
    summary = "test only: joins nothing"

    def refine(self, clusters: Disassociation, params: dict[str, Any], ctx: Context) -> list[JointPlan]:
        return self.fault("refiner.refine", [])


class BrokenAnonymizer(Faulty, Anonymizer):
    name = "broken-anonymizer"
    summary = "test only: publishes the records unchanged"
    params = (K,)

    def anonymize(self, dataset: Dataset, params: dict[str, Any], ctx: Context) -> Outcome:
        n = dataset.n_records
        stats = {"records_in": n, "records_published": n, "suppressed_records": 0}
        release = Release(kind="sanitized", records=dataset.to_label_records(), stats=stats)
        return self.fault("anonymizer.anonymize", Outcome(release, Trail()))

    def claims(self, params: dict[str, Any]) -> list[Claim]:
        return self.fault("anonymizer.claims", [Claim("broken-model", {"k": params["k"]})])


class BrokenSanitizer(Faulty, Sanitizer):
    name = "broken-sanitizer"
    summary = "test only: changes nothing"
    applies_to = ("disassociated", "generalized", "sanitized")

    def sanitize(self, target: Outcome | Dataset, params: dict[str, Any], ctx: Context) -> Outcome:
        return self.fault("sanitizer.sanitize", target)

    def claims(self, params: dict[str, Any], incoming: Any) -> list[Claim]:
        return self.fault("sanitizer.claims", list(incoming))


class BrokenModel(Faulty, ClaimModel):
    name = "broken-model"
    summary = "test only: a model nothing proves"
    params = (K,)
    carried_by = ("disassociated", "generalized", "sanitized")

    def statement(self, claim: Claim) -> str:
        return self.fault("claim_model.statement", "Nothing is promised.")

    def problems(self, claim: Claim) -> list[tuple[str, str]]:
        return self.fault("claim_model.problems", super().problems(claim))

    def is_stricter(self, name: str, given: Any, claimed: Any) -> bool:
        return self.fault("claim_model.is_stricter", super().is_stricter(name, given, claimed))


class BrokenMetric(Faulty, Metric):
    name = "broken-metric"
    summary = "test only: the number of records in the release"
    applies_to = ("disassociated", "generalized", "sanitized")

    def compute(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return self.fault("metric.compute", {"broken_records": len(release.records) or len(release.clusters)})


class BrokenAttack(Faulty, Attack):
    name = "broken-attack"
    summary = "test only: finds nothing"
    applies_to = ("disassociated", "generalized", "sanitized")

    def run(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> list[Finding]:
        return self.fault("attack.run", [])

    def exposure(self, findings: Sequence[Finding]) -> str | None:
        return self.fault("attack.exposure", None)


class BrokenVerifier(Faulty, Verifier):
    name = "broken-verifier"
    summary = "test only: certifies nothing"
    applies_to = ("disassociated", "generalized", "sanitized")

    def verify(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> list[Certificate]:
        return self.fault("verifier.verify", [])


class BrokenFormat(Faulty, Format):
    name = "broken-format"
    summary = "test only: one record per line, items separated by spaces"
    extensions = ("brk",)

    def read(self, stream: IO[str], source: str, params: dict[str, Any]) -> Dataset:
        return self.fault("format.read", Dataset.from_records(line.split() for line in stream if line.strip()))

    def write(self, dataset: Dataset, stream: IO[str], params: dict[str, Any]) -> None:
        self.fault("format.write", None)
        for record in dataset.to_label_records():
            stream.write(" ".join(record) + "\n")


def _hook(name: str, components: list[Any]) -> list[Any]:
    return fault(f"hook.{name}", components)


def privtool_partitioners() -> list[Partitioner]:  # unmarked: still a hook implementation
    return _hook("privtool_partitioners", [BrokenPartitioner()])


def privtool_vertical_chunkers() -> list[VerticalChunker]:
    return _hook("privtool_vertical_chunkers", [BrokenChunker()])


def privtool_refiners() -> list[Refiner]:
    return _hook("privtool_refiners", [BrokenRefiner()])


def privtool_anonymizers() -> list[Anonymizer]:
    return _hook("privtool_anonymizers", [BrokenAnonymizer()])


def privtool_sanitizers() -> list[Sanitizer]:
    return _hook("privtool_sanitizers", [BrokenSanitizer()])


def privtool_metrics() -> list[Metric]:
    return _hook("privtool_metrics", [BrokenMetric()])


def privtool_attacks() -> list[Attack]:
    return _hook("privtool_attacks", [BrokenAttack()])


def privtool_verifiers() -> list[Verifier]:
    return _hook("privtool_verifiers", [BrokenVerifier()])


def privtool_formats() -> list[Format]:
    return _hook("privtool_formats", [BrokenFormat()])


def privtool_claim_models() -> list[ClaimModel]:
    return _hook("privtool_claim_models", [BrokenModel()])
