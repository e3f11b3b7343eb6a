"""The component protocols that plugins implement (docs/design.md, "Hook specs and the registry").

Every hook in :mod:`privtool.hookspecs` returns a list of component objects. A
component has a unique ``name`` within its kind, a one-line ``summary`` and its
typed parameters ``params`` (:class:`~privtool.params.Param`). The base classes
below fix the method each kind must implement; plugins subclass them.

``ctx`` is always a :class:`~privtool.context.Context`; ``params`` the dict that
:func:`~privtool.params.resolve` produced from the component's ``params`` spec.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint
from typing import IO, Any, ClassVar

from .chain import ChunkedCluster, ClusterBatch, Disassociation, JointPlan, Partitioning
from .claims import ADVERSARIES, DEFAULT_ADVERSARY, Claim
from .context import Context
from .dataset import Dataset
from .errors import InputError, line_at
from .params import Param
from .release import Release
from .results import Certificate, Finding
from .trail import Trail


class Component:
    """Common shape of every component."""

    kind: ClassVar[str] = ""
    # Instance attributes are allowed: one class may register several components
    # (e.g. one partitioner per strategy), each with its own name and summary.
    name: str = ""
    summary: str = ""
    params: ClassVar[Sequence[Param]] = ()

    def __repr__(self) -> str:
        return f"<{self.kind} {self.name!r}>"


@dataclass
class Outcome:
    """What a whole method (or a sanitizer) returns: the release and its private
    trail. ``release_text`` is the release's canonical JSON once
    :func:`privtool.pipeline.stamp` has fixed it (empty before), so that it is
    serialised once for both its SHA-256 and the file."""

    release: Release
    trail: Trail
    release_text: str = ""


@dataclass
class Evidence:
    """What a verifier, attack or metric may read besides the release."""

    original: Dataset | None = None
    trail: Trail | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


class Partitioner(Component):
    """Horizontal partitioning of the records (HORPART and the small-cluster strategies)."""

    kind = "partitioner"

    def partition(self, dataset: Dataset, params: dict[str, Any], ctx: Context) -> Partitioning:
        raise NotImplementedError


class VerticalChunker(Component):
    """Splits one cluster's records into k^m-anonymous record chunks and a term chunk.

    ``chunk`` receives the cluster as a :class:`Dataset` (all its records, over
    the input's vocabulary) and returns a :class:`~privtool.chain.ChunkedCluster`:
    the term domains of the record chunks (item ids, pairwise disjoint) and the
    term chunk, together covering every term of the cluster.

    Methods call :meth:`chunk_batch`, once per :class:`~privtool.chain.ClusterBatch`
    of consecutive clusters, in a worker of the run's executor with a serial
    ``ctx``. The default chunks each cluster with a context keyed by its index
    (``ctx.unit("cluster", index)``), so ``ctx.rng(...)`` inside :meth:`chunk` is
    the same wherever the cluster runs; a chunker that can work on many clusters
    at once (VERPART) overrides it."""

    kind = "vertical_chunker"

    def chunk(self, cluster: Dataset, params: dict[str, Any], ctx: Context) -> ChunkedCluster:
        raise NotImplementedError

    def chunk_batch(self, batch: ClusterBatch, params: dict[str, Any], ctx: Context) -> list[ChunkedCluster]:
        """One :class:`~privtool.chain.ChunkedCluster` per cluster of ``batch``, in order."""
        return [self.chunk(batch.cluster(c), params, ctx.unit("cluster", batch.first + c)) for c in range(len(batch))]


class Refiner(Component):
    """Joins clusters and publishes shared chunks (REFINE).

    ``refine`` receives a :class:`~privtool.chain.Disassociation` (the input,
    the clusters as record positions, one ``ChunkedCluster`` each) and returns a
    list of :class:`~privtool.chain.JointPlan`: member clusters and the term
    domains of k^m-anonymous shared chunks over all their records, whose terms
    must lie in the members' term chunks and in no record chunk of a member."""

    kind = "refiner"

    def refine(self, clusters: Disassociation, params: dict[str, Any], ctx: Context) -> list[JointPlan]:
        raise NotImplementedError


class Sanitizer(Component):
    """Transforms a release (or, with ``applies_to = ("dataset",)``, the raw data)
    into one of the same kind; ``applies_to`` lists the release kinds it accepts."""

    kind = "sanitizer"
    applies_to: ClassVar[tuple[str, ...]] = ()

    def sanitize(self, target: Outcome | Dataset, params: dict[str, Any], ctx: Context) -> Outcome:
        raise NotImplementedError

    def claims(self, params: dict[str, Any], incoming: Sequence[Claim]) -> list[Claim]:
        """Every claim the sanitized release makes, given the sanitizer's resolved
        ``params`` and the ``incoming`` release's claims (empty for raw data):
        usually the incoming claims it preserves plus its own. The default
        claims nothing, so a sanitizer that does not declare its guarantees never
        passes on claims it may have broken."""
        return []


@dataclass(frozen=True)
class Stage:
    """A slot of a chained method, filled by a registered component chosen by
    name: ``--partitioner NAME`` for ``Stage("partitioner", "partitioner",
    "adding")``. ``kind`` is the component kind, ``default`` the component used
    when none is named; an ``optional`` stage also accepts ``none``."""

    name: str
    kind: str
    default: str
    help: str = ""
    optional: bool = False


NO_STAGE = "none"
"""The value that leaves an optional stage out (``--refiner none``)."""


@dataclass(frozen=True)
class Bound:
    """A chosen stage as a chained method receives it in ``params[stage.name]``:
    the registered component (guarded: a fault is reported against its own
    plugin) and its resolved parameters. Call ``bound.component.partition(
    dataset, bound.params, ctx)`` (or the method of its kind)."""

    component: Any
    params: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.component.name)


class Anonymizer(Component):
    """A whole method: dataset in, release and trail out.

    A chained method lists its ``stages``; the pipeline looks each one up in
    the registry (the user picks it by name, ``--partitioner balanced``), adds
    its parameters to the method's, and passes it as a :class:`Bound` in
    ``params[stage.name]`` (``None`` for an optional stage set to ``none``)."""

    kind = "anonymizer"
    stages: ClassVar[tuple[Stage, ...]] = ()

    def anonymize(self, dataset: Dataset, params: dict[str, Any], ctx: Context) -> Outcome:
        raise NotImplementedError

    def claims(self, params: dict[str, Any]) -> list[Claim]:
        """The claims its releases make, given its resolved ``params`` (the
        pipeline writes them into the release). The default claims nothing: such
        a release is assessed INCOMPLETE."""
        return []


class ClaimModel(Component):
    """A privacy model a release can claim (hook ``privtool_claim_models``).

    ``params`` are the claim's parameters (``k``, ``m``, thresholds), checked by
    :meth:`problems`; ``criteria`` the WP29 criteria it addresses
    (:data:`privtool.claims.WP29_CRITERIA`); ``adversaries`` the adversary models
    it can be claimed against; ``carried_by`` the release kinds that can carry
    it. A ``--k``/``--m`` override is stricter when larger, except for the
    parameters in ``stricter_when_lower`` (thresholds)."""

    kind = "claim_model"
    criteria: ClassVar[tuple[str, ...]] = ()
    adversaries: ClassVar[tuple[str, ...]] = ADVERSARIES
    carried_by: ClassVar[tuple[str, ...]] = ()
    stricter_when_lower: ClassVar[tuple[str, ...]] = ()

    def statement(self, claim: Claim) -> str:
        """One sentence saying what ``claim`` promises, for reports."""
        raise NotImplementedError

    def problems(self, claim: Claim) -> list[tuple[str, str]]:
        """``(key, problem)`` for every way ``claim`` is not a valid claim of this
        model (key: a parameter name or ``adversary``); empty when valid."""
        spec = {p.name: p for p in self.params}
        out = [
            (name, f"{self.name} has no parameter {name!r} (its parameters: {', '.join(spec) or 'none'})")
            for name in claim.params
            if name not in spec
        ]
        for param in self.params:
            if param.name not in claim.params:
                if param.required:
                    out.append((param.name, "missing"))
                continue
            problem = param.json_problem(claim.params[param.name])
            if problem is not None:
                out.append((param.name, problem))
        if claim.adversary not in self.adversaries:
            out.append(("adversary", f"{self.name} cannot be claimed against the {claim.adversary} adversary"))
        return out

    def is_stricter(self, name: str, given: Any, claimed: Any) -> bool:
        """Whether checking parameter ``name`` at ``given`` is at least as strict
        as at the ``claimed`` value."""
        return bool(given <= claimed) if name in self.stricter_when_lower else bool(given >= claimed)


class Attack(Component):
    """What an adversary can learn from a release; returns findings.

    ``criteria`` (among :data:`privtool.claims.WP29_CRITERIA`) place its findings
    and measured exposure in the audit; ``refutes`` names the claim models its
    findings can refute; ``adversary`` is the adversary model it plays and
    ``adversary_statement`` says in one sentence what that adversary knows.
    A finding that refutes a model sets :attr:`Finding.refutes`, judged against
    the release's claims (``release.claims``, with their parameters); the
    assessment engine makes it a ``breach`` only when the release claims that
    model against this adversary (or a stronger one), a ``risk`` otherwise."""

    kind = "attack"
    applies_to: ClassVar[tuple[str, ...]] = ()
    criteria: ClassVar[tuple[str, ...]] = ("linkability",)
    refutes: ClassVar[tuple[str, ...]] = ()
    adversary: ClassVar[str] = DEFAULT_ADVERSARY
    adversary_statement: ClassVar[str] = ""

    def run(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> list[Finding]:
        raise NotImplementedError

    def exposure(self, findings: Sequence[Finding]) -> str | None:
        """One sentence measuring what the findings expose (e.g. the share of
        records singled out), for the audit's criteria; None when there is no
        figure beyond the finding counts."""
        return None


class Verifier(Component):
    """Proves or refutes a claim of a release; returns certificates.

    ``proves`` names the claim models it proves (it runs once per claim of such
    a model, its parameters of the same names taking the claim's values) and
    ``adversaries`` the adversary models of the claims it proves them for (a
    claim against the algorithm-aware adversary needs a verifier that models
    that adversary); a verifier that proves no model is an integrity check
    (faithfulness, hierarchy, removal-only) and runs once. A certificate with ``holds`` None says the
    verifier could not check (the reason in ``details["reason"]``), with
    ``details["timed_out"]`` that it hit its time bound."""

    kind = "verifier"
    applies_to: ClassVar[tuple[str, ...]] = ()
    proves: ClassVar[tuple[str, ...]] = ()
    adversaries: ClassVar[tuple[str, ...]] = (DEFAULT_ADVERSARY,)

    def verify(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> list[Certificate]:
        raise NotImplementedError


class Metric(Component):
    """A utility or risk figure of a release, as a flat ``{name: number}`` dict
    (nested detail only under keys ending in ``_detail``).

    ``needs`` lists the evidence the metric cannot work without (``"original"``,
    ``"trail"``); ``privtool metrics`` reports it as skipped, with the reason, when
    that evidence is missing. A metric whose needs depend on its parameters or
    on the release raises :class:`~privtool.errors.MissingEvidence` instead.
    """

    kind = "metric"
    applies_to: ClassVar[tuple[str, ...]] = ()
    needs: ClassVar[tuple[str, ...]] = ()
    better: ClassVar[str] = ""
    """``lower`` or ``higher``: which direction of its figures means more utility
    (the audit says it beside the values); empty when it depends on the figure."""

    def compute(self, release: Release, evidence: Evidence, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        raise NotImplementedError


class Format(Component):
    """A dataset file format; ``extensions`` (without the leading dot, before
    any compression suffix; compound ones such as ``long.csv`` allowed) select
    it when ``--format`` is not given.

    :func:`privtool.io.read_dataset` hands :meth:`read_bytes` the decompressed
    bytes of the whole file (a UTF-8 byte-order mark removed); errors are
    :class:`~privtool.errors.InputError` naming ``source`` and the line.
    :meth:`write` raises :class:`~privtool.errors.OutputError` for a dataset the
    format cannot hold, before or while writing (the output is atomic)."""

    kind = "format"
    extensions: ClassVar[tuple[str, ...]] = ()
    line_per_record: ClassVar[bool] = False
    """Every line (ended by LF, or for text formats CR LF or CR) is exactly one
    record and the file has no header, footer or file-wide setting: any cut
    after an LF leaves files of the same format whose records, read one after
    the other, are the file's (:func:`privtool.io.read_dataset_blocks` streams them)."""

    def read_bytes(self, data: bytes, source: str, params: dict[str, Any]) -> Dataset:
        """Parse the whole (decompressed) file. The default decodes UTF-8, naming
        the line of the first undecodable byte, and calls :meth:`read`; formats
        with a vectorised parser over the raw bytes override this instead."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = line_at(data, exc.start)
            raise InputError(f"byte 0x{data[exc.start]:02x} is not UTF-8 text", path=source, line=line) from None
        return self.read(io.StringIO(text, newline=""), source, params)

    def read(self, stream: IO[str], source: str, params: dict[str, Any]) -> Dataset:
        """Parse a text stream (universal newlines, line ends kept)."""
        raise NotImplementedError

    def write(self, dataset: Dataset, stream: IO[str], params: dict[str, Any]) -> None:
        raise NotImplementedError

    def write_blocks(self, blocks: Iterable[Dataset], stream: IO[str], params: dict[str, Any]) -> None:
        """Write consecutive blocks of records as one file (streaming writers,
        e.g. ``privtool synth``). The default writes each block in turn, which is
        right for line-per-record formats; a format with a header or a footer
        overrides it to write those once."""
        for block in blocks:
            self.write(block, stream, params)


KINDS: dict[str, type[Component]] = {
    cls.kind: cls
    for cls in (
        Partitioner,
        VerticalChunker,
        Refiner,
        Sanitizer,
        Anonymizer,
        ClaimModel,
        Attack,
        Verifier,
        Metric,
        Format,
    )
}


@dataclass(frozen=True)
class LazyComponent:
    """A component registered by its name alone and built on first use.

    A hook may return one in place of a component instance, so that a plugin's
    registration module imports nothing heavy: the registry knows the
    component's ``name`` (for listings, choices and name clashes) and imports
    ``factory`` only when the component is asked for (run, or its parameters,
    summary or declarations read). ``factory`` is ``"module:attribute"``, as in
    an entry point: a component class, or a callable returning the component,
    called with ``args``. The component built must be of the hook's kind and
    carry ``name``; what it is otherwise, and an import that fails, are faults of
    the plugin that registered it (:class:`~privtool.errors.PluginFault`)."""

    name: str
    factory: str
    args: tuple[Any, ...] = ()

    def build(self) -> Any:
        """Import the factory (as an entry point of this value is loaded) and call it with ``args``."""
        return EntryPoint(self.name, self.factory, "privtool").load()(*self.args)
