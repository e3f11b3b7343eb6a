"""The checks of the conformance kit, one function each (docs/plugin-testing.md).

A check takes a :class:`Subject` (the component as the registry hands it out,
with the options it needs) and raises :class:`ConformanceError` with one
sentence when the component breaks its contract, or :class:`CheckSkipped` when
the check has nothing to check for this component (a verifier proving a model
the kit cannot tamper with, say). Components run the way privtool runs them: a
partitioner, chunker or refiner as a stage of the method that has such a stage
(disassociation), an anonymizer through :func:`privtool.pipeline.run_method`, a
sanitizer after a built-in method (or on raw data, for rule hiding), a metric,
attack or verifier through the assessment engine on releases that built-in
methods make of synthetic data, a format by writing and reading files.

* ``check_parameters``: help for every parameter (the rest of the declaration
  contract is enforced when the component registers);
* ``check_contract``: on random tiny data (methods) or on every kind of release
  it applies to (evaluators), every result passes its contract
  (:mod:`privtool.contracts`) and plugin code raises nothing but a user error;
* ``check_determinism``: the same seed gives the same bytes (or values);
* ``check_executors``: serial, a two-process pool and a two-worker Dask
  ``LocalCluster`` give the same bytes (or values), with units small enough that
  the pool and the cluster really run;
* ``check_canonical``: the release written is canonical;
* ``check_stats``: the release is well formed and its stats agree with its
  content and the input;
* ``check_claims_proved``: the release claims something and the built-in
  verifiers prove every claim;
* ``check_claims_oracle``: every claim holds under a brute-force oracle
  (:mod:`privtool.testing.oracles`) on random tiny data;
* ``check_refutes_tampering`` (verifiers): a release tampered so that a claim it
  proves no longer holds is refuted, not certified;
* ``check_round_trip`` (formats): a dataset written and read back is the same;
* ``check_claim_model``: a claim built from the model's defaults is valid and stated.
"""

from __future__ import annotations

import atexit
import copy
import functools
import json
import tempfile
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..assess import METRICS, VERIFY, Assessment, Scope, assess
from ..claims import Claim
from ..components import Evidence, Outcome
from ..context import Context
from ..contracts import stats_problem
from ..dataset import Dataset, label_sort_key
from ..errors import MissingEvidence, PluginFault, UserError
from ..executors import Executor, ProcessExecutor, SerialExecutor
from ..hiding import hide, is_dataset_sanitizer
from ..hookspecs import HOOKS, hookimpl
from ..io import read_dataset, write_dataset
from ..isolation import Guarded
from ..pipeline import method_chain, run_method
from ..publishable import content_stats
from ..registry import Registry, load_registry
from ..release import Release, release_from_json
from .data import small_dataset, tiny_datasets
from .oracles import ORACLES


class ConformanceError(AssertionError):
    """A component breaks its contract: one sentence saying where and how."""


class CheckSkipped(Exception):
    """A check has nothing to check for this component (the reason is the message)."""


STAGE_KINDS = ("partitioner", "vertical_chunker", "refiner")
OUTCOME_KINDS = (*STAGE_KINDS, "anonymizer", "sanitizer")
EVALUATOR_KINDS = ("metric", "attack", "verifier")
UNDER_TEST = "under-test"
"""The plugin name a component gets when the kit registers it itself."""

FANOUT = {"hierarchy": "4", "hierarchy_format": "fanout"}
PRODUCERS: dict[str, list[tuple[str, dict[str, Any], tuple[str, ...]]]] = {
    "disassociated": [
        ("disassociation", {"k": 2, "m": 2, "max_cluster_size": 8}, ()),
        ("disassociation", {"k": 2, "m": 2, "max_cluster_size": 8}, ("safe-disassociation",)),
        ("disassociation", {"k": 2, "m": 2, "max_cluster_size": 8}, ("safe-disassociation-hardened",)),
    ],
    "generalized": [("partition", {"k": 2, **FANOUT}, ()), ("aa", {"k": 2, "m": 2, **FANOUT}, ())],
    "sanitized": [("mfi-relevance", {"sensitive": 1, "pick": "top", "min_support": 0.05, "min_confidence": 0.3}, ())],
}
"""Release kind -> built-in methods (method, options, sanitizers) that make
releases of that kind, claiming every built-in model between them, for
sanitizers, metrics, attacks and verifiers to work on. A method that is not
installed (its plugin disabled) is left out."""

ATTACKS = Scope("attack", verifiers=False, attacks=True, metrics=False)
"""Attacks alone: an attack's findings do not depend on what the verifiers say."""

TINY_OPTIONS = {"k": 2, "m": 2}
"""Options a method gets on the tiny datasets, where it declares them and the
caller did not set them: k = 5 would leave nothing to publish in 4..14 records."""


@dataclass
class Subject:
    """A component under test: the registry it is registered in, its guarded
    view and the options it needs (``params``)."""

    registry: Registry
    component: Any
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return str(self.component.kind)

    @property
    def name(self) -> str:
        return str(self.component.name)

    @property
    def label(self) -> str:
        return f"{self.kind.replace('_', ' ')} {self.name!r}"


def subject(component: Any, params: Mapping[str, Any] | None = None) -> Subject:
    """The :class:`Subject` of ``component``: a view the registry handed out, or
    a plugin's own object, which is looked up among the installed plugins (when
    one of them registers it) or registered as plugin ``under-test``. A
    component that breaks the declaration contract fails here."""
    options = dict(params or {})
    registry = installed()
    if isinstance(component, Guarded):
        return Subject(registry, component, options)
    kind, name = component.kind, component.name
    if name in registry.names(kind):
        found = registry.get(kind, name)
        if type(getattr(found, "component", None)) is not type(component):
            raise ConformanceError(
                f"another {kind.replace('_', ' ')} called {name!r} is installed; rename one of them."
            )
        return Subject(registry, found, options)
    plugin = types.SimpleNamespace(**{HOOKS[kind]: hookimpl(lambda: [component])})
    try:
        registry = load_registry(extra={UNDER_TEST: plugin})
    except PluginFault as fault:
        raise ConformanceError(fault.message) from fault
    return Subject(registry, registry.get(kind, name), options)


@functools.cache
def installed() -> Registry:
    """The registry of the installed plugins, loaded once per process."""
    return load_registry()


# ---------------------------------------------------------------- executors
_shared: dict[str, Executor] = {}


def executors() -> dict[str, Executor]:
    """Serial, a two-process pool and a two-worker Dask ``LocalCluster``, started
    once per process and shared by every check (stopped at exit, or by
    :func:`close_executors`, which the kit's pytest plugin calls at the end of
    the session)."""
    if not _shared:
        from ..dask_executor import DaskExecutor

        _shared["serial"] = SerialExecutor()
        _shared["process"] = ProcessExecutor(2)
        _shared["dask"] = DaskExecutor(workers=2)
        atexit.register(close_executors)
    return _shared


def close_executors() -> None:
    """Stop the shared process pool and Dask cluster."""
    for executor in _shared.values():
        executor.close()
    _shared.clear()


UNIT_OCCURRENCES = 200
"""Item occurrences per unit of chunker work: the small dataset then makes
several units per worker, so the pool and the cluster really run."""


def context(seed: int = 0, executor: Executor | None = None) -> Context:
    return Context(seed=seed, executor=executor or SerialExecutor(), unit_occurrences=UNIT_OCCURRENCES)


@contextmanager
def blamed(what: str) -> Iterator[None]:
    """Turn a plugin fault while ``what`` into a :class:`ConformanceError`."""
    try:
        yield
    except PluginFault as fault:
        raise ConformanceError(f"{what}: {fault.message}") from fault


# ---------------------------------------------------------------- producing
def host_method(registry: Registry, kind: str) -> tuple[str, str]:
    """A method with a stage of ``kind`` and that stage's name (disassociation's first)."""
    for anonymizer in sorted(registry.all("anonymizer"), key=lambda a: a.name != "disassociation"):
        for stage in anonymizer.stages:
            if stage.kind == kind:
                return anonymizer.name, stage.name
    raise ConformanceError(f"no installed method has a {kind.replace('_', ' ')} stage to run it in.")


def _declared(registry: Registry, method: str, sanitizers: tuple[str, ...], options: Mapping[str, Any]) -> set[str]:
    return {p.name for p in method_chain(registry, method, sanitizers, options).spec}


def produce(subject: Subject, dataset: Dataset, ctx: Context, tiny: bool = False) -> Outcome:
    """The stamped outcome of running ``subject`` (a stage, an anonymizer or a
    sanitizer) on ``dataset`` the way privtool runs it; ``tiny`` adds
    :data:`TINY_OPTIONS` where the method declares them."""
    registry, name, params = subject.registry, subject.name, subject.params
    sanitizers: tuple[str, ...] = ()
    if is_dataset_sanitizer(subject.component):
        return hide(registry, dataset, name, {**PRODUCERS["sanitized"][0][1], **params}, ctx)
    if subject.kind in STAGE_KINDS:
        method, slot = host_method(registry, subject.kind)
        options = {**params, slot: name}
    elif subject.kind == "anonymizer":
        method, options = name, dict(params)
    else:
        kind = next((k for k in subject.component.applies_to if k in PRODUCERS), None)
        if kind is None:
            raise ConformanceError(f"{subject.label} applies to no release kind a built-in method makes.")
        method, base, _ = PRODUCERS[kind][0]
        options, sanitizers = {**base, **params}, (name,)
    if tiny:
        declared = _declared(registry, method, sanitizers, options)
        options = {**{k: v for k, v in TINY_OPTIONS.items() if k in declared}, **options}
    return run_method(registry, dataset, method, options, ctx, sanitizers)


def release_bytes(outcome: Outcome) -> tuple[str, str]:
    return outcome.release_text, outcome.trail.dumps()


_inputs: dict[tuple[int, tuple[str, ...]], list[tuple[Release, Evidence]]] = {}


def evaluation_inputs(subject: Subject) -> list[tuple[Release, Evidence]]:
    """Releases (as written, with their original and trail) of every kind
    ``subject`` applies to, from every installed producer of that kind; made
    once per registry and kinds, each caller getting its own copies."""
    key = (id(subject.registry), tuple(subject.component.applies_to))
    if key not in _inputs:
        _inputs[key] = _make_inputs(subject)
    return [(copy.deepcopy(release), evidence) for release, evidence in _inputs[key]]


def _make_inputs(subject: Subject) -> list[tuple[Release, Evidence]]:
    dataset = small_dataset()
    inputs = []
    for kind in subject.component.applies_to:
        for method, options, sanitizers in PRODUCERS.get(kind, []):
            names = {*subject.registry.names("anonymizer"), *subject.registry.names("sanitizer")}
            if method not in names or not set(sanitizers) <= names:
                continue
            with blamed(f"making a {kind} release for {subject.label}"):
                if method in subject.registry.names("anonymizer"):
                    outcome = run_method(subject.registry, dataset, method, options, context(), sanitizers)
                else:
                    outcome = hide(subject.registry, dataset, method, options, context())
            release = release_from_json(json.loads(outcome.release_text))
            inputs.append((release, Evidence(dataset, outcome.trail)))
    if not inputs:
        raise ConformanceError(f"{subject.label} applies to no release kind an installed built-in method makes.")
    return inputs


def assessed(subject: Subject, release: Release, evidence: Evidence, ctx: Context) -> Assessment:
    """The assessment engine run on ``release`` with only ``subject`` (a metric,
    attack or verifier) selected; a failure of the subject is a :class:`ConformanceError`."""
    names = {p.name for p in subject.component.params}
    options = {k: v for k, v in subject.params.items() if k in names}
    with blamed(subject.label):
        if subject.kind == "metric":
            result = assess(subject.registry, release, evidence, ctx, METRICS, options=options, metrics=[subject.name])
        elif subject.kind == "attack":
            result = assess(subject.registry, release, evidence, ctx, ATTACKS, options=options, attacks=[subject.name])
        else:
            result = assess(subject.registry, release, evidence, ctx, VERIFY, options=options, only=[subject.name])
    for failure in result.failures:
        if failure.name == subject.name:
            raise ConformanceError(failure.sentence)
    return result


def evaluate(subject: Subject, release: Release, evidence: Evidence, ctx: Context) -> list[Any]:
    """What ``subject`` (a metric, attack or verifier) says about ``release``,
    as JSON-ready data without timings."""
    result = assessed(subject, release, evidence, ctx)
    if subject.kind == "metric":
        return [{**m.to_json(), "seconds": None} for m in result.metrics if m.name == subject.name]
    if subject.kind == "attack":
        return [f.to_json() for run in result.attacks if run.attack == subject.name for f in run.findings]
    runs = [run for claim in result.claims for run in claim.runs] + result.integrity
    return [_certificate(c) for run in runs if run.verifier == subject.name for c in run.certificates]


def _certificate(certificate: Any) -> dict[str, Any]:
    data = certificate.to_json()
    data.pop("seconds", None)  # a time, not a result
    return data


# ------------------------------------------------------------------- checks
def check_parameters(subject: Subject) -> None:
    """Every parameter has a help text (what ``--list`` shows); the rest of the
    declaration contract was enforced when the component registered."""
    for param in subject.component.params:
        if not param.help.strip():
            raise ConformanceError(f"{subject.label}: parameter {param.option} has no help text.")


def check_contract(subject: Subject) -> None:
    """Every result passes its contract and nothing but a user error is raised:
    a method on random tiny datasets, an evaluator on every kind of release it
    applies to, with and without the original and the trail."""
    if subject.kind in EVALUATOR_KINDS:
        ran = 0
        for release, evidence in evaluation_inputs(subject):
            ran += len(evaluate(subject, release, evidence, context()))
            if subject.kind == "metric" and subject.component.needs:
                continue  # privtool reports it as skipped without that evidence, never runs it
            try:
                evaluate(subject, release, Evidence(), context())
            except MissingEvidence:
                pass
        if subject.kind == "verifier" and not ran:
            raise ConformanceError(
                f"{subject.label} ran on none of the built-in releases it applies to "
                "(it proves a model none of them claims)."
            )
        return
    ran = 0
    for n, dataset in enumerate(tiny_datasets()):
        with blamed(f"{subject.label} on tiny dataset {n}"):
            try:
                produce(subject, dataset, context(seed=n), tiny=True)
            except UserError:
                continue  # the data does not suit it (fewer records than k, no rule to hide): exit 2, not a fault
            ran += 1
    if not ran:
        raise ConformanceError(f"{subject.label} ran on none of the tiny datasets (each run was refused as bad input).")


def check_determinism(subject: Subject) -> None:
    """The same seed gives the same bytes (the same values for an evaluator)."""
    first, second = (_result(subject, context(seed=7)) for _ in range(2))
    if first != second:
        raise ConformanceError(f"{subject.label} gives different results for the same data and the same seed.")


def check_executors(subject: Subject) -> None:
    """Serial, process-pool and Dask runs give the same bytes (or values)."""
    results = {name: _result(subject, context(seed=3, executor=ex)) for name, ex in executors().items()}
    differ = [name for name, result in results.items() if result != results["serial"]]
    if differ:
        raise ConformanceError(
            f"{subject.label} gives other results with the {', '.join(differ)} executor than serially."
        )


def _result(subject: Subject, ctx: Context) -> Any:
    if subject.kind in EVALUATOR_KINDS:
        return [evaluate(subject, release, evidence, ctx) for release, evidence in evaluation_inputs(subject)]
    with blamed(subject.label):
        return release_bytes(produce(subject, small_dataset(), ctx))


def check_canonical(subject: Subject) -> None:
    """The release is canonical: read back and written again, it is the same bytes."""
    with blamed(subject.label):
        text = produce(subject, small_dataset(), context()).release_text
    if release_from_json(json.loads(text)).dumps() != text:
        raise ConformanceError(f"{subject.label} writes a release that is not canonical (it changes when re-written).")


def _outcomes(
    subject: Subject, datasets: Sequence[Dataset], tiny: bool
) -> Iterator[tuple[int, Dataset, Outcome, Release]]:
    """``(n, dataset, outcome, release as written)`` for every dataset the
    subject accepts (a user error means the data does not suit it)."""
    for n, dataset in enumerate(datasets):
        with blamed(subject.label):
            try:
                outcome = produce(subject, dataset, context(seed=n), tiny=tiny)
            except UserError:
                continue
        yield n, dataset, outcome, release_from_json(json.loads(outcome.release_text))


def check_stats(subject: Subject) -> None:
    """The release as written is well formed (:func:`privtool.verifiers.structure.check_structure`,
    against the original) and its stats agree with its content and the input,
    on the small dataset and tiny ones."""
    from ..verifiers.structure import check_structure

    models = {model.name: model for model in subject.registry.all("claim_model")}
    for datasets, tiny in (([small_dataset()], False), (tiny_datasets()[:4], True)):
        for _, dataset, _, release in _outcomes(subject, datasets, tiny):
            problem = stats_problem(release, dataset.n_records if subject.kind != "sanitizer" else None)
            if problem is not None:
                raise ConformanceError(f"{subject.label} wrote {problem}.")
            structure = check_structure(release, dataset, models=models)
            if structure:
                raise ConformanceError(f"{subject.label} wrote a release that is not well formed: {structure[0]}.")


def _vacuous(result: Assessment) -> bool:
    """Whether every claim that does not hold is only unverified for lack of
    anything to check (a release of tiny data with no chunk at all)."""
    open_claims = [c for c in result.claims if c.status != "holds"]
    return (
        result.verdict == "INCOMPLETE"
        and not result.failures
        and bool(open_claims)
        and all(
            c.status == "unverified" and c.runs and all(r.outcome == "nothing to check" for r in c.runs)
            for c in open_claims
        )
    )


def check_claims_proved(subject: Subject) -> None:
    """The release claims something, and the built-in verifiers prove every
    claim (the assessment engine, with the original and the trail as evidence,
    says PASS) on the small dataset; on random tiny datasets too, where a claim
    with nothing to check (no chunk at all) proves nothing and is passed over."""
    small = list(_outcomes(subject, [small_dataset()], tiny=False))
    if not small:
        raise ConformanceError(f"{subject.label} refused the small dataset as bad input.")
    for tiny, (n, dataset, outcome, release) in [
        *((False, run) for run in small),
        *((True, run) for run in _outcomes(subject, tiny_datasets()[:6], tiny=True)),
    ]:
        if not release.claims:
            raise ConformanceError(
                f"{subject.label} makes a release that claims nothing, so every assessment of it is INCOMPLETE "
                "(declare what it guarantees: Anonymizer.claims, Sanitizer.claims)."
            )
        with blamed(f"assessing the release of {subject.label}"):
            result = assess(subject.registry, release, Evidence(dataset, outcome.trail), context(seed=n), VERIFY)
        if result.verdict != "PASS" and not (tiny and _vacuous(result)):
            where = f"tiny dataset {n}" if tiny else "the small dataset"
            raise ConformanceError(
                f"{subject.label}: the built-in verifiers do not prove what its release claims on {where} "
                f"({result.verdict}: {result.verdict_reason})."
            )


def check_claims_oracle(subject: Subject) -> None:
    """Every claim with a brute-force oracle (:mod:`privtool.testing.oracles`)
    holds under it, on every random tiny dataset the subject accepts."""
    checked = 0
    for n, _, outcome, release in _outcomes(subject, tiny_datasets(), tiny=True):
        for claim in release.claims:
            oracle = ORACLES.get(claim.model)
            if oracle is None:
                continue
            checked += 1
            problem = oracle(release, claim.to_json(), outcome.trail)
            if problem is not None:
                raise ConformanceError(
                    f"{subject.label} claims {claim.label} on tiny dataset {n}, but the brute-force oracle "
                    f"refutes it: {problem}."
                )
    if not checked:
        raise CheckSkipped(f"{subject.label} makes no claim of a model with an oracle ({', '.join(ORACLES)}).")


# ------------------------------------------------------------ verifiers
def _shared_item(rows: list[list[str]]) -> str | None:
    """The first item (canonical order) that two or more of ``rows`` hold."""
    counts: dict[str, int] = {}
    for row in rows:
        for item in row:
            counts[item] = counts.get(item, 0) + 1
    shared = sorted((item for item, count in counts.items() if count >= 2), key=label_sort_key)
    return shared[0] if shared else None


def _keep_once(rows: list[list[str]], item: str, keep: bool) -> list[list[str]]:
    """``rows`` with ``item`` removed from every row but the first that holds it
    (from every row when ``keep`` is false); emptied rows stay."""
    out = []
    for row in rows:
        if item in row and not keep:
            row = [x for x in row if x != item]
        keep = keep and item not in row
        out.append(row)
    return out


def tampered(release: Release, claim: Claim) -> Release | None:
    """A copy of ``release`` that breaks ``claim`` (km-anonymity or k-anonymity,
    k >= 2): one item that two records share is left in a single record (in a
    disassociated release: in one sub-record of one chunk, and in no term chunk),
    so its support and its largest support over all reconstructions are 1. The
    stats are recounted, as a careful tamperer would, so that the verifier (not
    the structural check that stats match content) must find the change.
    None when the kit cannot make one."""
    broken = _tampered_content(release, claim)
    if broken is not None:
        broken.stats = {**broken.stats, **content_stats(broken)}
    return broken


def _tampered_content(release: Release, claim: Claim) -> Release | None:
    broken = copy.deepcopy(release)
    if claim.model == "km-anonymity" and release.kind == "disassociated":
        item = next(
            (found for c in broken.clusters for chunk in c.record_chunks if (found := _shared_item(chunk))), None
        )
        if item is None:
            return None
        keep = True
        for cluster in broken.clusters:
            cluster.term_chunk = [x for x in cluster.term_chunk if x != item]
            for i, chunk in enumerate(cluster.record_chunks):
                rows = _keep_once([list(row) for row in chunk], item, keep)
                keep = keep and not any(item in row for row in rows)
                cluster.record_chunks[i] = [row for row in rows if row]
        for joint in broken.joint_clusters:
            joint.shared_chunks = [[[x for x in row if x != item] for row in chunk] for chunk in joint.shared_chunks]
            joint.shared_chunks = [[row for row in chunk if row] for chunk in joint.shared_chunks]
        return broken
    if claim.model in ("km-anonymity", "k-anonymity") and release.kind != "disassociated":
        item = _shared_item(release.records)
        if item is None:
            return None
        broken.records = _keep_once([list(row) for row in release.records], item, True)
        return broken
    return None


def check_refutes_tampering(subject: Subject) -> None:
    """For each claim of a model the verifier proves, on a built-in release: the
    verifier refutes a copy tampered so that the claim fails (:func:`tampered`)."""
    tried = 0
    for release, _ in evaluation_inputs(subject):
        for claim in release.claims:
            if claim.model not in subject.component.proves:
                continue
            broken = tampered(release, claim)
            if broken is None:
                continue
            tried += 1
            result = assessed(subject, broken, Evidence(), context())
            status = next((c.status for c in result.claims if c.claim == claim), None)
            if status != "fails":
                raise ConformanceError(
                    f"{subject.label} does not refute {claim.label} on a release tampered to break it "
                    f"(the claim comes out {status})."
                )
    if not tried:
        raise CheckSkipped(f"{subject.label} proves no claim the kit can tamper with (km-anonymity, k-anonymity).")


# ---------------------------------------------------------- formats, models
def numbered(dataset: Dataset) -> Dataset:
    """``dataset`` with item labels ``1``, ``2``, ...: what every format can hold."""
    return Dataset(dataset.indptr, dataset.items, tuple(str(i + 1) for i in range(dataset.n_items)))


def check_round_trip(subject: Subject) -> None:
    """A dataset written in the format and read back is the same dataset, and
    writing it twice gives the same bytes."""
    extension = subject.component.extensions[0] if subject.component.extensions else subject.name
    with tempfile.TemporaryDirectory() as tmp:
        for n, dataset in enumerate([*map(numbered, tiny_datasets()[:6]), small_dataset()]):
            path, again = Path(tmp) / f"d{n}.{extension}", Path(tmp) / f"e{n}.{extension}"
            with blamed(f"{subject.label} writing dataset {n}"):
                write_dataset(subject.registry, dataset, path, subject.name, subject.params)
                write_dataset(subject.registry, dataset, again, subject.name, subject.params)
            if path.read_bytes() != again.read_bytes():
                raise ConformanceError(f"{subject.label} writes dataset {n} differently twice.")
            with blamed(f"{subject.label} reading dataset {n} back"):
                read = read_dataset(subject.registry, path, subject.name, subject.params)
            expected = [sorted(row, key=label_sort_key) for row in dataset.to_label_records()]
            if read.to_label_records() != expected:
                raise ConformanceError(f"{subject.label} reads back other records than it wrote (dataset {n}).")


def check_claim_model(subject: Subject) -> None:
    """A claim built from the model's defaults (the lower bound, or the first
    choice, where there is none) is valid, and the model states it in a sentence."""
    model = subject.component
    values: dict[str, Any] = {}
    for param in model.params:
        value = param.default if param.default is not None else param.min
        if value is None and param.choices:
            value = param.choices[0]
        values[param.name] = int(value) if value is not None and param.type is int else value
    claim = Claim(model.name, values)
    with blamed(subject.label):
        problems = model.problems(claim)
        statement = model.statement(claim)
    if problems:
        raise ConformanceError(f"{subject.label} refuses a claim built from its own defaults: {problems[0]}.")
    if not statement.strip():
        raise ConformanceError(f"{subject.label} states {claim.label} in an empty sentence.")


Check = Callable[[Subject], None]

_METHOD_CHECKS: tuple[Check, ...] = (
    check_parameters,
    check_contract,
    check_determinism,
    check_executors,
    check_canonical,
    check_stats,
    check_claims_proved,
    check_claims_oracle,
)
_EVALUATOR_CHECKS: tuple[Check, ...] = (check_parameters, check_contract, check_determinism, check_executors)

CHECKS: dict[str, tuple[Check, ...]] = {
    **{kind: _METHOD_CHECKS for kind in OUTCOME_KINDS},
    "metric": _EVALUATOR_CHECKS,
    "attack": _EVALUATOR_CHECKS,
    "verifier": (*_EVALUATOR_CHECKS, check_refutes_tampering),
    "format": (check_parameters, check_round_trip),
    "claim_model": (check_parameters, check_claim_model),
}
"""Component kind -> its checks, in the order they run."""
