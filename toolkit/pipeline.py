"""Running a method: an anonymizer (with the registered components chosen for
its stages) followed by a chain of sanitizers.

:func:`method_chain` looks every stage up in the registry: the anonymizer, the
component chosen for each of its :class:`~privtool.components.Stage` slots
(``--partitioner balanced``; the choices are the registered components of the
stage's kind) and the sanitizers, and merges their parameter specs (a parameter
shared by two stages, such as ``k``, takes one value). :func:`run_method` runs
them through the context and stamps the release with every parameter used and
its provenance: privtool's version and the plugins whose components took part
(and no other, so the bytes do not depend on what else is installed); the
input's SHA-256, the seed and the counts the release must not publish go to the
trail (:mod:`privtool.publishable`). The release's claims are those the components declare
(``Anonymizer.claims``, then each ``Sanitizer.claims`` given the claims before
it; :func:`declare_claims`). The trail is tied to the release by its SHA-256.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from . import __version__
from .atomic import write_texts_atomic
from .claims import Claim
from .components import NO_STAGE, Anonymizer, Bound, Component, Outcome, Sanitizer, Stage
from .context import Context
from .dataset import Dataset
from .errors import InputError, ParameterError, PluginFault
from .gcpause import paused_gc
from .isolation import describe, plugin_of
from .outputs import check_outputs
from .params import Param, merge_specs, resolve
from .publishable import split_stats
from .registry import Registry
from .release import Release, json_text, release_from_bytes, release_from_json, text_sha256
from .release_bytes import ENVELOPE
from .release_slices import checked_content, serially
from .trail import trail_from_json


def stage_param(registry: Registry, stage: Stage) -> Param:
    """The option that picks the component of ``stage`` (``--partitioner``),
    its choices the registered components of the stage's kind."""
    choices = (*registry.names(stage.kind), *((NO_STAGE,) if stage.optional else ()))
    return Param(stage.name, str, stage.default, stage.help, choices=choices)


@dataclass
class MethodChain:
    """A method as it will run: the (guarded) anonymizer, the component chosen for
    each of its stages (``None`` for an optional stage left out), the sanitizers
    and the merged parameter spec of them all."""

    method: str
    anonymizer: Anonymizer
    stages: dict[str, Component | None]
    sanitizers: list[Sanitizer]
    spec: list[Param]

    @property
    def components(self) -> list[Component]:
        """Every component that takes part, in chain order."""
        return [self.anonymizer, *(c for c in self.stages.values() if c is not None), *self.sanitizers]

    @property
    def owner(self) -> str:
        """How messages name the chain (``method 'disassociation' with safe-disassociation``)."""
        names = [s.name for s in self.sanitizers]
        return f"method {self.method!r}" + (f" with {', '.join(names)}" if names else "")


def method_chain(
    registry: Registry, method: str, sanitizers: Sequence[str] = (), options: Mapping[str, Any] | None = None
) -> MethodChain:
    """The chain of ``method`` with the stage components named in ``options``
    (raw values; each stage's default otherwise) and ``sanitizers``."""
    options = options or {}
    anonymizer = registry.get("anonymizer", method)
    slots = [stage_param(registry, stage) for stage in anonymizer.stages]
    stages: dict[str, Component | None] = {}
    for stage, slot in zip(anonymizer.stages, slots, strict=True):
        given = options.get(stage.name)
        name = slot.coerce(given) if given is not None else stage.default
        stages[stage.name] = None if name == NO_STAGE else registry.get(stage.kind, name)
    chain = [registry.get("sanitizer", name) for name in sanitizers]
    own = [anonymizer.params, *(c.params for c in stages.values() if c is not None), *(s.params for s in chain)]
    return MethodChain(method, anonymizer, stages, chain, merge_specs([slots, *own]))


def _pick(values: Mapping[str, Any], spec: Sequence[Param]) -> dict[str, Any]:
    return {p.name: values[p.name] for p in spec}


def declare_claims(registry: Registry, component: Component, claims: Sequence[Claim], kind: str) -> list[Claim]:
    """``claims`` as ``component`` declared them, checked against the registered
    claim models: a claim of an unknown model, with invalid parameters or that
    the release ``kind`` cannot carry is a fault of the component's plugin
    (:class:`~privtool.errors.PluginFault`), never written into a release."""
    from .verifiers.structure import claim_problems

    models = {model.name: model for model in registry.all("claim_model")}
    label = describe(component.kind, component.name)
    out = list(claims)
    for claim in out:
        if not isinstance(claim, Claim):
            raise PluginFault(plugin_of(component), label, f"declared {claim!r}, which is not a Claim")
        problems = claim_problems(claim, kind, models)
        if problems:
            key, problem = problems[0]
            raise PluginFault(plugin_of(component), label, f"declares an invalid claim {claim.label}: {key}: {problem}")
    return out


def apply_sanitizers(
    registry: Registry, outcome: Outcome, chain: Sequence[Sanitizer], values: Mapping[str, Any], ctx: Context
) -> Outcome:
    """Run ``chain`` over ``outcome``; each sanitizer must accept the release kind."""
    for sanitizer in chain:
        kind = outcome.release.kind
        if kind not in sanitizer.applies_to:
            raise ParameterError(
                f"sanitizer {sanitizer.name!r} applies to {', '.join(sanitizer.applies_to)} releases, not {kind}."
            )
        incoming = outcome.release.claims
        params = _pick(values, sanitizer.params)
        outcome = sanitizer.sanitize(outcome, params, ctx)
        outcome.release.claims = declare_claims(
            registry, sanitizer, sanitizer.claims(params, incoming), outcome.release.kind
        )
        outcome.release.params.setdefault("sanitizers", []).append(sanitizer.name)
        for param in sanitizer.params:
            outcome.release.params.setdefault(param.name, values[param.name])
    return outcome


def check_release(
    registry: Registry,
    outcome: Outcome,
    producer: Component,
    original: Dataset | None,
    ctx: Context | None = None,
) -> Callable[[dict[str, Any], dict[str, Any]], str]:
    """Before anything is written: the release ``producer`` made (the last
    component of a chain) reads back as a release and is well formed
    (:func:`privtool.verifiers.structure.check_structure`, against the
    ``original`` when known: claims well formed, ...); a problem is a fault of
    the producer's plugin, except a claim the data cannot meet (too few records
    for k), which is bad input. Returns the writer of the canonical text of
    the content checked here, given the ``provenance`` and ``stats`` that
    stamping puts in the envelope.

    A disassociated release held as CSR arrays is checked without nested
    lists and with bounded memory: its arrays are found to read back as
    themselves from the file written of them (every rule of the fast reader
    checked on the arrays, :func:`privtool.release_rules.reads_back`) and its
    content is written a slice of clusters at a time
    (:func:`privtool.release_slices.checked_content`; the slices through
    ``ctx``'s executor when given), its envelope written and
    read back on its own (:func:`read_back`, which validates everything the
    JSON reader does), and the structure checks run on the arrays, which are
    what would be read. When the arrays would not read back the fast way, or for
    another kind held as canonical arrays, the whole file text is assembled
    from the arrays, read back and checked as read. Any other release goes
    through its canonical JSON object."""
    from .verifiers.structure import Unreachable, check_structure

    label = describe(producer.kind, producer.name)

    def unreadable(exc: InputError) -> PluginFault:
        return PluginFault(plugin_of(producer), label, f"made a release that privtool cannot read: {exc.message}")

    release = outcome.release
    arrays = release.backing_arrays
    run = serially if ctx is None else partial(ctx.map, description="checking the release")
    content = checked_content(arrays, run) if arrays is not None and release.kind == "disassociated" else None
    if arrays is not None and content is not None:
        # the content reads back as the arrays and was written a slice at a time; the envelope is read back on its own
        shell = Release(kind=release.kind, **release.envelope())
        try:
            back = read_back(shell.dumps())
        except InputError as exc:
            raise unreadable(exc) from None
        subject = Release.from_arrays(arrays, back.kind, **back.envelope())

        def text(provenance: dict[str, Any], stats: dict[str, Any]) -> str:
            shell.provenance, shell.stats = provenance, stats
            return "".join((shell.dumps()[: -len(_NO_CONTENT)], ",", content, "}\n"))  # one copy of the content

    elif arrays is not None and arrays.is_canonical():
        canonical = release.canonical()
        checked = canonical.dumps()
        try:  # first what privtool could not even read back (an empty label, an empty sub-record, ...)
            subject = read_back(checked)
        except InputError as exc:
            raise unreadable(exc) from None

        def text(provenance: dict[str, Any], stats: dict[str, Any]) -> str:
            try:
                return with_envelope(checked, {"provenance": provenance, "stats": stats})
            except ValueError:  # an envelope holding what looks like content: write it all again
                canonical.provenance, canonical.stats = provenance, stats
                return canonical.dumps()

    else:
        obj = release.to_json()
        try:
            release_from_json(obj, source=None)
        except InputError as exc:
            raise unreadable(exc) from None
        subject = release

        def text(provenance: dict[str, Any], stats: dict[str, Any]) -> str:
            # stamping changes only these two fields: the canonical content checked here is not rebuilt
            return json_text({**obj, "provenance": provenance, "stats": stats})

    models = {model.name: model for model in registry.all("claim_model")}
    problems = check_structure(subject, original, models=models)
    unreachable = [p for p in problems if isinstance(p, Unreachable)]
    if unreachable:  # the data cannot meet the parameters: bad input, not a plugin fault
        raise ParameterError(f"the release would fail its own claim at {unreachable[0]}; nothing was written.")
    if problems:
        raise PluginFault(plugin_of(producer), label, f"made a release that is not well formed: {problems[0]}")
    return text


_NO_CONTENT = ',"clusters":[],"joint_clusters":[]}\n'
"""How the file text of a disassociated release without clusters ends."""


def with_envelope(text: str, fields: dict[str, Any]) -> str:
    """The release file ``text`` with these envelope ``fields`` replaced and
    its content untouched: the envelope (everything before ``"clusters"`` or
    ``"records"``, :data:`privtool.release_bytes.ENVELOPE`) is parsed and
    written again, the content copied as it is."""
    cut = min(at for at in (text.find(',"clusters":['), text.find(',"records":['), len(text)) if at >= 0)
    envelope = json.loads(text[:cut] + "}")
    if tuple(envelope) != ENVELOPE or cut == len(text):
        raise ValueError("not a release file text in canonical layout")
    return json_text({**envelope, **fields})[:-2] + text[cut:]


def read_back(text: str) -> Release:
    """The release in ``text`` (a file text privtool is about to write),
    validated; :class:`InputError` naming the JSON path of its first problem
    (without a file name) when it is not one."""
    try:
        return release_from_bytes(text.encode("utf-8"), "release")
    except InputError:
        release_from_json(json.loads(text), source=None)  # the same problem, named without the file
        raise


def taking_part(
    registry: Registry, components: Iterable[Any], earlier: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Plugin name -> version of the plugins whose ``components`` took part (and
    of ``earlier`` ones, from the provenance of a release being sanitized further),
    sorted by name."""
    plugins = dict(earlier or {})
    for component in components:
        plugin = plugin_of(component)
        plugins[plugin] = registry.version(plugin)
    return dict(sorted(plugins.items()))


def stamp(
    registry: Registry,
    outcome: Outcome,
    plugins: Mapping[str, str],
    input_sha256: str,
    seed: int,
    producer: Component,
    original: Dataset | None,
    ctx: Context | None = None,
) -> Outcome:
    """Check the release (:func:`check_release`, through ``ctx``'s executor
    when given), fill in provenance, keep in the trail what the release must
    not publish (:mod:`privtool.publishable`: the input SHA-256, the seed,
    every count not recomputable from the content), and tie the trail to the
    (canonical) release. A trail privtool could not write (a value JSON
    cannot hold) is a fault of its ``producer``'s plugin, and nothing is
    written."""
    with paused_gc():  # the checks and the canonical copy build many acyclic lists
        text = check_release(registry, outcome, producer, original, ctx)
    release = outcome.release
    release.provenance = {"privtool": __version__, "plugins": dict(plugins)}
    release.stats, private = split_stats(release, release.stats)
    outcome.trail.stats = {**outcome.trail.stats, **private}
    outcome.trail.seed = seed
    label = describe(producer.kind, producer.name)
    try:
        trail_from_json(outcome.trail.to_json(), source=None)
        json.dumps(outcome.trail.notes)
    except (InputError, TypeError, ValueError) as exc:
        raise PluginFault(plugin_of(producer), label, f"made a trail that privtool cannot write: {exc}") from None
    with paused_gc():
        outcome.release_text = text(release.provenance, release.stats)
    outcome.trail.input_sha256 = input_sha256
    outcome.trail.release_sha256 = text_sha256(outcome.release_text)
    return outcome


def write_outcome(
    outcome: Outcome, release_path: str | os.PathLike[str], trail_path: str | os.PathLike[str] | None = None
) -> None:
    """Write the stamped release (and, when asked, its trail) as a unit: both
    files or neither (:func:`privtool.atomic.write_texts_atomic`). The two must
    be different files: the trail is private and the release is published."""
    files: list[tuple[str | os.PathLike[str], str]] = [(release_path, outcome.release_text or outcome.release.dumps())]
    if trail_path is not None:
        check_outputs({"the release": release_path, "the trail": trail_path}, {})
        files.append((trail_path, outcome.trail.dumps()))
    write_texts_atomic(files)


def run_chain(
    chain: MethodChain, registry: Registry, dataset: Dataset, options: Mapping[str, Any], ctx: Context
) -> Outcome:
    """Run ``chain`` on ``dataset``; ``options`` are raw parameter values
    (strings from the command line are fine)."""
    values = resolve(chain.spec, options, chain.owner)
    params = _pick(values, chain.anonymizer.params)
    for slot, component in chain.stages.items():
        params[slot] = None if component is None else Bound(component, _pick(values, component.params))
    outcome = chain.anonymizer.anonymize(dataset, params, ctx)
    claims = chain.anonymizer.claims(params)
    outcome.release.claims = declare_claims(registry, chain.anonymizer, claims, outcome.release.kind)
    recorded: dict[str, Any] = {"method": chain.method, **{slot: values[slot] for slot in chain.stages}}
    recorded.update(_pick(values, chain.anonymizer.params))
    for component in chain.stages.values():
        for param in component.params if component is not None else ():
            recorded.setdefault(param.name, values[param.name])
    outcome.release.params = {**recorded, **outcome.release.params}
    outcome = apply_sanitizers(registry, outcome, chain.sanitizers, values, ctx)
    plugins = taking_part(registry, chain.components)
    return stamp(registry, outcome, plugins, dataset.content_sha256(), ctx.seed, chain.components[-1], dataset, ctx)


def run_method(
    registry: Registry,
    dataset: Dataset,
    method: str,
    options: Mapping[str, Any],
    ctx: Context,
    sanitizers: Sequence[str] = (),
) -> Outcome:
    """Anonymize ``dataset`` with ``method`` (its stages as ``options`` name them)
    then ``sanitizers``; ``options`` are raw parameter values."""
    return run_chain(method_chain(registry, method, sanitizers, options), registry, dataset, options, ctx)
