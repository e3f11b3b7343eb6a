"""The conformance kit catches what it promises to catch: each deliberately
broken component below fails exactly the check named for it, with a sentence
saying why, and the pipeline refuses to write what privtool could not read."""

from __future__ import annotations

import os
import random
import types
from typing import IO, Any

import numpy as np
import pytest

from privtool.chain import ChunkedCluster, Partitioning
from privtool.claims import Claim
from privtool.components import Anonymizer, Evidence, Format, Metric, Outcome, Partitioner, Verifier, VerticalChunker
from privtool.context import Context
from privtool.dataset import Dataset
from privtool.errors import PluginFault
from privtool.hookspecs import hookimpl
from privtool.params import K, Param
from privtool.pipeline import run_method
from privtool.registry import load_registry
from privtool.release import Release
from privtool.results import Certificate
from privtool.testing import (
    ConformanceError,
    check_anonymizer,
    check_chunker,
    check_format,
    check_metric,
    check_partitioner,
    check_verifier,
)
from privtool.testing.checks import (
    check_claims_oracle,
    check_claims_proved,
    check_contract,
    check_determinism,
    check_executors,
    check_parameters,
    check_refutes_tampering,
    check_round_trip,
    subject,
)
from privtool.trail import Trail


def _sanitized(dataset: Dataset, records: list[list[str]], trail: Trail | None = None) -> Outcome:
    stats = {"records_in": dataset.n_records, "records_published": len(records), "suppressed_records": 0}
    return Outcome(Release("sanitized", stats=stats, records=records), trail or Trail())


class Shuffled(Partitioner):
    """Draws from Python's global generator: the same seed, another partitioning."""

    name = "test-shuffled"
    summary = "test only"

    def partition(self, dataset: Dataset, params: dict[str, Any], ctx: Context) -> Partitioning:
        rows = list(range(dataset.n_records))
        random.shuffle(rows)
        half = max(1, len(rows) // 2)
        return Partitioning([np.array(sorted(part), dtype=np.int64) for part in (rows[:half], rows[half:]) if part])


class ByProcess(VerticalChunker):
    """Chunks depend on the process it runs in: right serially, wrong in workers
    (it remembers the process that made it, and travels to the workers)."""

    name = "test-by-process"
    summary = "test only"

    def __init__(self) -> None:
        self.parent = os.getpid()

    def chunk(self, cluster: Dataset, params: dict[str, Any], ctx: Context) -> ChunkedCluster:
        terms = tuple(np.unique(cluster.items).tolist())
        if os.getpid() == self.parent:
            return ChunkedCluster((), terms)
        return ChunkedCluster(((terms[0],),), terms[1:]) if terms else ChunkedCluster((), ())


class Liar(Anonymizer):
    """Claims k^1-anonymity and publishes the records unchanged."""

    name = "test-liar"
    summary = "test only"
    params = (K,)

    def claims(self, params: dict[str, Any]) -> list[Claim]:
        return [Claim("km-anonymity", {"k": params["k"], "m": 1})]

    def anonymize(self, dataset: Dataset, params: dict[str, Any], ctx: Context) -> Outcome:
        return _sanitized(dataset, dataset.to_label_records())


class Blank(Anonymizer):
    """Publishes an empty item label, which no release may hold."""

    name = "test-blank"
    summary = "test only"

    def anonymize(self, dataset: Dataset, params: dict[str, Any], ctx: Context) -> Outcome:
        return _sanitized(dataset, [["", *record] for record in dataset.to_label_records()])


class Unwritable(Anonymizer):
    """Keeps a set in its trail, which JSON cannot hold."""

    name = "test-unwritable"
    summary = "test only"

    def anonymize(self, dataset: Dataset, params: dict[str, Any], ctx: Context) -> Outcome:
        return _sanitized(dataset, dataset.to_label_records(), Trail(notes={"items": {"a"}}))


class Nested(Metric):
    name = "test-nested"
    summary = "test only"
    applies_to = ("sanitized",)

    def compute(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return {"sizes": [len(record) for record in release.records]}


class Lossy(Format):
    """Drops the last record when it writes."""

    name = "test-lossy"
    summary = "test only"
    extensions = ("lossy",)

    def read(self, stream: IO[str], source: str, params: dict[str, Any]) -> Dataset:
        return Dataset.from_records(line.split() for line in stream)

    def write(self, dataset: Dataset, stream: IO[str], params: dict[str, Any]) -> None:
        for record in dataset.to_label_records()[:-1]:
            stream.write(" ".join(record) + "\n")


class Yes(Verifier):
    """Certifies every k^m claim of a disassociated release without looking."""

    name = "test-yes"
    summary = "test only"
    applies_to = ("disassociated",)
    proves = ("km-anonymity",)
    params = (Param("k", int, None, "k of the claim", min=2), Param("m", int, None, "m of the claim", min=1))

    def verify(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> list[Certificate]:
        return [Certificate("km-anonymity", True, "none", len(release.clusters), 0.0)]


class Undocumented(Metric):
    name = "test-undocumented"
    summary = "test only"
    applies_to = ("sanitized",)
    params = (Param("size", int, 3),)

    def compute(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return {"records": len(release.records)}


def _fails(check: Any, component: Any, *words: str, params: dict[str, Any] | None = None) -> None:
    with pytest.raises(ConformanceError) as failed:
        check(subject(component, params))
    for word in words:
        assert word in str(failed.value), str(failed.value)


def test_a_partitioner_drawing_from_a_global_generator_fails_determinism() -> None:
    check_contract(subject(Shuffled()))  # it does honour its contract
    _fails(check_determinism, Shuffled(), "'test-shuffled' gives different results for the same data and the same seed")


def test_a_chunker_that_depends_on_its_process_fails_the_executor_check() -> None:
    check_determinism(subject(ByProcess()))  # serially it is deterministic
    _fails(
        check_executors, ByProcess(), "vertical chunker 'test-by-process' gives other results with the process, dask"
    )


def test_a_false_claim_fails_the_verifiers_and_the_oracle() -> None:
    _fails(check_claims_proved, Liar(), "anonymizer 'test-liar': the built-in verifiers do not prove", "FAIL")
    _fails(check_claims_oracle, Liar(), "claims km-anonymity (k=2, m=1)", "the brute-force oracle refutes it")
    with pytest.raises(ConformanceError):
        check_anonymizer(Liar())


def test_a_release_or_trail_privtool_cannot_read_is_never_written() -> None:
    for component, problem in (
        (Blank(), "made a release that privtool cannot read: invalid release at $.records[0][0]: empty item label"),
        (Unwritable(), "made a trail that privtool cannot write"),
    ):
        module = types.SimpleNamespace(privtool_anonymizers=hookimpl(lambda c=component: [c]))
        registry = load_registry(extra={"test": module})
        with pytest.raises(PluginFault) as fault:
            run_method(registry, Dataset.from_records([["a", "b"], ["a"]]), component.name, {}, Context())
        assert problem in fault.value.message
        _fails(check_contract, component, problem)


def test_a_metric_with_nested_values_fails_its_contract() -> None:
    _fails(check_contract, Nested(), "compute() returned a list under 'sizes'")
    with pytest.raises(ConformanceError):
        check_metric(Nested())


def test_a_format_that_loses_a_record_fails_the_round_trip() -> None:
    _fails(check_round_trip, Lossy(), "format 'test-lossy' reads back other records than it wrote")
    with pytest.raises(ConformanceError):
        check_format(Lossy())


def test_a_verifier_that_certifies_without_looking_fails_on_a_tampered_release() -> None:
    _fails(check_refutes_tampering, Yes(), "verifier 'test-yes' does not refute km-anonymity", "comes out holds")
    with pytest.raises(ConformanceError):
        check_verifier(Yes())


def test_an_undocumented_parameter_fails_the_parameters_check() -> None:
    _fails(check_parameters, Undocumented(), "parameter --size has no help text")


def test_a_component_of_the_wrong_kind_is_refused() -> None:
    with pytest.raises(ConformanceError, match="is a partitioner, not a vertical chunker"):
        check_chunker(Shuffled())
    with pytest.raises(ConformanceError, match="is a vertical chunker, not a partitioner"):
        check_partitioner(ByProcess())
