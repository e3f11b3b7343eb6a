"""What a component must declare and return (DESIGN.md, "Hook specs and the registry").

:func:`check_component` runs when a plugin registers a component (when it is
built, for one registered lazily; :func:`check_lazy` checks the spec): the right
base class, a usable name, well-formed parameters (snake_case names that the
CLI does not own, supported types, defaults that pass their own validation, as
a given value must) and, for a chained method, well-formed stages.

:func:`check_result` runs on what a component method returns, before anything
downstream sees it (:mod:`privtool.isolation` calls it): a partitioning that
places every record exactly once, chunks that split exactly the terms of their
cluster, joint plans over existing clusters, an outcome whose release has a
known kind and stats consistent with its content, findings, certificates, a
metric's flat dict, a dataset from a format. Each check returns ``None`` or the
words that complete "compute() returned ...".
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .arrays import sort_int, unique_int
from .chain import ChunkedCluster, ClusterBatch, Disassociation, JointPlan, Partitioning
from .claims import ADVERSARIES, WP29_CRITERIA, Claim
from .components import KINDS, LazyComponent, Outcome, Stage
from .dataset import Dataset
from .errors import ParameterError
from .isolation import describe
from .params import RESERVED_NAMES, Param
from .release import KINDS as RELEASE_KINDS
from .release import Release
from .results import Certificate, Finding
from .trail import Trail

COMPONENT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")
PARAM_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")
EVIDENCE = ("original", "trail")
VOCABULARY: dict[str, tuple[str, ...]] = {
    "applies_to": (*RELEASE_KINDS, "dataset"),
    "needs": EVIDENCE,
    "criteria": WP29_CRITERIA,
    "adversaries": ADVERSARIES,
    "carried_by": RELEASE_KINDS,
}
"""Declared attributes whose values come from a fixed vocabulary."""
_RESERVED = ", ".join(sorted(RESERVED_NAMES))


# ------------------------------------------------------------- declarations
def check_component(kind: str, component: Any) -> str | None:
    """``None``, or what is wrong with ``component`` registered as a ``kind``
    (words that follow "registered ...")."""
    base = KINDS[kind]
    if not isinstance(component, base):
        return f"{component!r} as a {kind.replace('_', ' ')}, but it is not a {base.__name__}"
    name = component.name
    problem = _name_problem(kind, name)
    if problem is not None:
        return problem
    label = describe(kind, name)
    for attribute in (
        "applies_to",
        "needs",
        "extensions",
        "refutes",
        "proves",
        "criteria",
        "adversaries",
        "carried_by",
    ):
        value = getattr(component, attribute, ())
        if not isinstance(value, tuple) or not all(isinstance(v, str) for v in value):
            return f"{label}, whose {attribute} is not a tuple of strings"
    for attribute, allowed in VOCABULARY.items():
        unknown = set(getattr(component, attribute, ())) - set(allowed)
        if unknown:
            return f"{label}, whose {attribute} {sorted(unknown)} are not among {', '.join(allowed)}"
    better = getattr(component, "better", "")
    if better not in ("", "lower", "higher"):
        return f"{label}, whose better is {better!r}, not lower, higher or empty"
    problem = check_params(component.params)
    if problem is None and kind == "anonymizer":
        problem = check_stages(getattr(component, "stages", ()), component.params)
    return None if problem is None else f"{label}, {problem}"


def _name_problem(kind: str, name: Any) -> str | None:
    if not isinstance(name, str) or not COMPONENT_NAME.match(name):
        return f"a {kind.replace('_', ' ')} named {name!r} (a name is letters, digits, '.', '_' and '-')"
    return None


def check_lazy(kind: str, spec: LazyComponent) -> str | None:
    """``None``, or what is wrong with the lazily registered ``spec`` of a
    ``kind`` before it is built (the component it builds is checked by
    :func:`check_component` when it is)."""
    problem = _name_problem(kind, spec.name)
    if problem is not None:
        return problem
    module, colon, attribute = spec.factory.partition(":") if isinstance(spec.factory, str) else ("", "", "")
    if not (colon and module and attribute) or not isinstance(spec.args, tuple):
        return f"{describe(kind, spec.name)} lazily, whose factory {spec.factory!r} is not 'module:attribute'"
    return None


def check_params(params: Any) -> str | None:
    """What is wrong with a component's parameter declarations, if anything."""
    if not isinstance(params, (tuple, list)) or not all(isinstance(p, Param) for p in params):
        return "whose params are not a tuple of privtool.params.Param"
    seen: set[str] = set()
    for param in params:
        if not PARAM_NAME.match(param.name):
            return f"whose parameter {param.name!r} is not a snake_case name"
        if param.name in RESERVED_NAMES:
            return f"whose parameter {param.option} is an option privtool's commands own (reserved names: {_RESERVED})"
        if param.name in seen:
            return f"which declares the parameter {param.option} twice"
        seen.add(param.name)
        if param.default is not None:
            try:
                param.coerce(param.default)
            except ParameterError as exc:
                reason = exc.message.rstrip(".")
                return f"whose parameter {param.option} has an invalid default {param.default!r} ({reason})"
    return None


def check_stages(stages: Any, params: Sequence[Param]) -> str | None:
    """What is wrong with a chained method's stage declarations, if anything."""
    if not isinstance(stages, tuple) or not all(isinstance(s, Stage) for s in stages):
        return "whose stages are not a tuple of privtool.components.Stage"
    names = {p.name for p in params}
    for stage in stages:
        if stage.kind not in KINDS:
            return f"whose stage {stage.name!r} is of the unknown kind {stage.kind!r} (kinds: {', '.join(KINDS)})"
        if not PARAM_NAME.match(stage.name) or stage.name in RESERVED_NAMES or stage.name in names:
            return f"whose stage name {stage.name!r} is not a free snake_case option name"
        names.add(stage.name)
    return None


# ------------------------------------------------------------------ results
Check = Callable[[Any, Any, tuple[Any, ...]], "str | None"]
"""``check(component, result, args)``: None, or what is wrong with ``result``."""


def _partitioning(component: Any, result: Any, args: tuple[Any, ...]) -> str | None:
    if not isinstance(result, Partitioning):
        return f"a {type(result).__name__}, not a Partitioning"
    dataset: Dataset = args[0]
    parts = [*result.clusters, result.suppressed]
    if not all(isinstance(p, np.ndarray) and p.ndim == 1 and p.dtype.kind in "iu" for p in parts):
        return "clusters or suppressed records that are not 1-d integer arrays of record positions"
    if any(len(c) == 0 for c in result.clusters):
        return "an empty cluster"
    placed = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    if len(placed) != dataset.n_records or not np.array_equal(np.sort(placed), np.arange(dataset.n_records)):
        return (
            f"a partitioning that does not place each of the {dataset.n_records} records exactly once "
            f"({len(placed)} placements)"
        )
    return None


def _cluster_terms_problem(chunked: Any, terms: np.ndarray, where: str) -> str | None:
    if not isinstance(chunked, ChunkedCluster):
        return f"a {type(chunked).__name__} {where}, not a ChunkedCluster"
    placed = [t for domain in chunked.record_chunks for t in domain] + list(chunked.term_chunk)
    strange = next((t for t in placed if not isinstance(t, int | np.integer)), None)
    if strange is not None:
        return f"chunks {where} that hold a {type(strange).__name__} ({strange!r}), not an integer term"
    if len(placed) != len(set(placed)):
        return f"chunks {where} that share a term"
    if sorted(placed) != terms.tolist():
        return f"chunks {where} that do not hold exactly the terms of the cluster"
    return None


def _chunk(component: Any, result: Any, args: tuple[Any, ...]) -> str | None:
    cluster: Dataset = args[0]
    return _cluster_terms_problem(result, np.unique(cluster.items), "for its cluster")


def _chunk_batch(component: Any, result: Any, args: tuple[Any, ...]) -> str | None:
    batch: ClusterBatch = args[0]
    if not isinstance(result, list) or len(result) != len(batch):
        return f"{_count(result)}, not a list of one ChunkedCluster for each of the {len(batch)} clusters"
    if _chunks_hold_the_terms(batch, result):
        return None
    for c, chunked in enumerate(result):  # name the first cluster at fault
        problem = _cluster_terms_problem(chunked, np.unique(batch.cluster(c).items), f"for cluster {batch.first + c}")
        if problem is not None:
            return problem
    return None


def _chunks_hold_the_terms(batch: ClusterBatch, result: list[Any]) -> bool:
    """Whether every cluster's chunks in ``result`` hold its terms, each once
    (what :func:`_cluster_terms_problem` checks cluster by cluster), decided
    with one sort of the placed (cluster, term) pairs and one of the batch's;
    False also when a chunk holds something that is not an integer (the
    cluster-by-cluster check then decides)."""
    if not all(isinstance(chunked, ChunkedCluster) for chunked in result):
        return False
    span = len(batch.labels) + 1
    sizes = [sum(map(len, chunked.record_chunks)) + len(chunked.term_chunk) for chunked in result]
    placed_terms = itertools.chain.from_iterable(
        itertools.chain(itertools.chain.from_iterable(chunked.record_chunks), chunked.term_chunk) for chunked in result
    )
    flat = list(placed_terms)
    if not all(issubclass(kind, int | np.integer) for kind in set(map(type, flat))):
        return False
    try:
        terms = np.fromiter(flat, dtype=np.int64, count=sum(sizes))
    except OverflowError:
        return False
    placed = sort_int(np.repeat(np.arange(len(result), dtype=np.int64), sizes) * span + terms, runs=True)
    record_cluster = np.repeat(np.arange(len(batch), dtype=np.int64), batch.cluster_sizes)
    held = unique_int(np.repeat(record_cluster, batch.record_sizes) * span + batch.items, runs=True)
    return bool(((terms >= 0) & (terms < span)).all() and np.array_equal(placed, held))


def _joint_plans(component: Any, result: Any, args: tuple[Any, ...]) -> str | None:
    dis: Disassociation = args[0]
    if not isinstance(result, list) or not all(isinstance(p, JointPlan) for p in result):
        return f"{_count(result)}, not a list of JointPlan"
    for n, plan in enumerate(result):
        for tag, index in plan.members:
            limit = len(dis.clusters) if tag == "c" else n
            if tag not in ("c", "j") or not 0 <= index < limit:
                return f"joint plan {n} with the member {(tag, index)!r}, which names no cluster or earlier plan"
        terms = [t for domain in plan.shared_chunks for t in domain]
        if len(terms) != len(set(terms)):
            return f"joint plan {n} whose shared chunks share a term"
    return None


def _outcome(component: Any, result: Any, args: tuple[Any, ...]) -> str | None:
    if not isinstance(result, Outcome):
        return f"a {type(result).__name__}, not an Outcome"
    if not isinstance(result.release, Release) or not isinstance(result.trail, Trail):
        return "an Outcome whose release is not a Release or whose trail is not a Trail"
    release = result.release
    if release.kind not in RELEASE_KINDS:
        return f"a release of the unknown kind {release.kind!r} (kinds: {', '.join(RELEASE_KINDS)})"
    incoming = args[0] if args else None
    if isinstance(incoming, Outcome) and release.kind != incoming.release.kind:
        return f"a {release.kind} release for a {incoming.release.kind} one (a sanitizer keeps the kind)"
    return stats_problem(release, incoming.n_records if isinstance(incoming, Dataset) else None)


def stats_problem(release: Release, records_in: int | None) -> str | None:
    """Whether the record counts a release states agree with its content: ``None``
    or what disagrees. ``records_in``, when known (a method's output), is the
    input's record count, which the release must state. Counts a release leaves
    out are not required (a sanitizer may drop those that would reveal its
    ghost records); those it states must add up."""
    stats = release.stats
    counts = {
        k: stats[k] for k in ("records_in", "records_published", "suppressed_records", "ghost_records") if k in stats
    }
    for key, value in counts.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return f"a release whose stats.{key} is not a count"
    if records_in is not None and counts.get("records_in") != records_in:
        return f"a release whose stats.records_in is {counts.get('records_in')}, but the input has {records_in} records"
    arrays = release.backing_arrays
    if release.kind == "disassociated":
        sizes = arrays.cluster_sizes.tolist() if arrays is not None else [c.size for c in release.clusters]
        held = sum(sizes) - counts.get("ghost_records", 0)
    else:
        held = len(release.records)
    if counts.get("records_published", held) != held:
        return f"a release that publishes {held} records, but whose stats say {counts['records_published']}"
    if (
        "records_in" in counts
        and "suppressed_records" in counts
        and held + counts["suppressed_records"] != counts["records_in"]
    ):
        return (
            f"a release that publishes {held} records and states {counts['suppressed_records']} suppressed "
            f"of {counts['records_in']}"
        )
    return None


def _list_of(kind: type) -> Check:
    def check(component: Any, result: Any, args: tuple[Any, ...]) -> str | None:
        if isinstance(result, list) and all(isinstance(r, kind) for r in result):
            return None
        return f"{_count(result)}, not a list of {kind.__name__}"

    return check


def _findings(component: Any, result: Any, args: tuple[Any, ...]) -> str | None:
    problem = _list_of(Finding)(component, result, args)
    if problem is not None:
        return problem
    for finding in result:
        if finding.refutes is not None and finding.refutes not in component.refutes:
            return f"a finding that refutes {finding.refutes!r}, a model the attack does not declare in refutes"
    return None


def _sentence_or_none(component: Any, result: Any, args: tuple[Any, ...]) -> str | None:
    return None if result is None or isinstance(result, str) else f"a {type(result).__name__}, not a sentence or None"


def _sentence(component: Any, result: Any, args: tuple[Any, ...]) -> str | None:
    return None if isinstance(result, str) else f"a {type(result).__name__}, not a sentence"


def _problems(component: Any, result: Any, args: tuple[Any, ...]) -> str | None:
    if isinstance(result, list) and all(
        isinstance(p, tuple) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in result
    ):
        return None
    return f"{_count(result)}, not a list of (key, problem) pairs of strings"


def _metric_values(component: Any, result: Any, args: tuple[Any, ...]) -> str | None:
    if not isinstance(result, dict):
        return f"a {type(result).__name__}, not a dict of figures"
    for key, value in result.items():
        if not isinstance(key, str):
            return f"the key {key!r}, not a string"
        if not key.endswith("_detail") and not isinstance(value, (int, float, str, type(None))):
            return f"a {type(value).__name__} under {key!r} (nested values go under keys ending in _detail)"
    return None


def _dataset(component: Any, result: Any, args: tuple[Any, ...]) -> str | None:
    return None if isinstance(result, Dataset) else f"a {type(result).__name__}, not a Dataset"


def _count(value: Any) -> str:
    return f"{len(value)} values" if isinstance(value, (list, tuple)) else f"a {type(value).__name__}"


RESULT_CHECKS: dict[tuple[str, str], Check] = {
    ("partitioner", "partition"): _partitioning,
    ("vertical_chunker", "chunk"): _chunk,
    ("vertical_chunker", "chunk_batch"): _chunk_batch,
    ("refiner", "refine"): _joint_plans,
    ("anonymizer", "anonymize"): _outcome,
    ("anonymizer", "claims"): _list_of(Claim),
    ("sanitizer", "sanitize"): _outcome,
    ("sanitizer", "claims"): _list_of(Claim),
    ("attack", "run"): _findings,
    ("attack", "exposure"): _sentence_or_none,
    ("claim_model", "statement"): _sentence,
    ("claim_model", "problems"): _problems,
    ("verifier", "verify"): _list_of(Certificate),
    ("metric", "compute"): _metric_values,
    ("format", "read"): _dataset,
    ("format", "read_bytes"): _dataset,
}
"""(kind, method) -> the check of what that method returns."""


def check_result(component: Any, method: str, result: Any, args: tuple[Any, ...]) -> str | None:
    """``None``, or what is wrong with ``result`` of ``component.method(*args)``."""
    check = RESULT_CHECKS.get((component.kind, method))
    return None if check is None else check(component, result, args)
