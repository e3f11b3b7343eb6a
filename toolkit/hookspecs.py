"""Hook specifications of privtool (pluggy project name ``privtool``).

Each hook registers components of one kind: an implementation returns a list of
component instances (subclasses of the bases in :mod:`privtool.components`), or
of :class:`~privtool.components.LazyComponent` specs naming a component and the
factory that builds it on first use, so that registering a plugin imports only
its registration module (the built-ins register this way).
Every built-in algorithm is registered through these hooks exactly as a
third-party plugin is; a third-party package declares an entry point in group
``privtool`` that names the module holding its ``@hookimpl`` functions.

Component names must be unique per kind across all plugins; a clash is an error
that names both plugins.
"""

from __future__ import annotations

from types import SimpleNamespace

import pluggy

from .components import (
    Anonymizer,
    Attack,
    ClaimModel,
    Format,
    LazyComponent,
    Metric,
    Partitioner,
    Refiner,
    Sanitizer,
    Verifier,
    VerticalChunker,
)

PROJECT = "privtool"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def privtool_partitioners() -> list[Partitioner | LazyComponent]:
    """Register horizontal partitioners.

    A partitioner splits the records of a dataset into clusters and may
    suppress records (``Partitioner.partition`` returns a
    :class:`~privtool.components.Partitioning`). Built-ins: ``horpart`` and the
    small-cluster strategies ``suppression``, ``adding``, ``remaining-list``.
    """


@hookspec
def privtool_vertical_chunkers() -> list[VerticalChunker | LazyComponent]:
    """Register vertical chunkers.

    A chunker turns one cluster into k^m-anonymous record chunks and a term
    chunk. Built-in: ``verpart``.
    """


@hookspec
def privtool_refiners() -> list[Refiner | LazyComponent]:
    """Register refiners, which join clusters and publish shared chunks.
    Built-in: ``refine``."""


@hookspec
def privtool_sanitizers() -> list[Sanitizer | LazyComponent]:
    """Register sanitizers: transformations of a release (``applies_to`` names
    the release kinds) or of raw data (``applies_to = ("dataset",)``) into one of
    the same kind. Built-ins: ``safe-disassociation`` and the rule-hiding ones."""


@hookspec
def privtool_anonymizers() -> list[Anonymizer | LazyComponent]:
    """Register whole methods: dataset in, release and private trail out
    (``disassociation``, ``partition``, ``lgr``, ...). ``privtool anonymize
    --method NAME`` runs one."""


@hookspec
def privtool_claim_models() -> list[ClaimModel | LazyComponent]:
    """Register privacy models that a release can claim.

    A claim model (:class:`~privtool.components.ClaimModel`) is the vocabulary of
    the ``claims`` of a release: its name, its parameters with their validation
    (``k >= 2``), the WP29 criteria it addresses (singling out, linkability,
    inference), the adversary models it can hold against and the release kinds
    that can carry it. Anonymizers and sanitizers declare the claims their
    releases make (``claims``); verifiers name the models they prove
    (``proves``) and attacks the models they refute (``refutes``). Built-ins:
    ``km-anonymity``, ``k-anonymity``, ``cover-freedom``, ``rule-hiding``
    (docs/guarantees.md).
    """


@hookspec
def privtool_attacks() -> list[Attack | LazyComponent]:
    """Register attacks: what an adversary can learn from a release of the kinds
    in ``applies_to``. ``refutes`` names the claim models a finding can refute:
    a finding is a breach only when the release claims that model against the
    attack's ``adversary``. ``privtool attack`` and ``privtool audit`` run them."""


@hookspec
def privtool_verifiers() -> list[Verifier | LazyComponent]:
    """Register verifiers: each proves or refutes the claims of the models in
    ``proves`` on releases of the kinds in ``applies_to``; a verifier proving no
    model is an integrity check (faithfulness, hierarchy, removal-only).
    ``privtool verify`` (and every command through the assessment engine) runs
    them."""


@hookspec
def privtool_metrics() -> list[Metric | LazyComponent]:
    """Register utility and risk metrics of releases of the kinds in
    ``applies_to``. ``privtool metrics`` computes them."""


@hookspec
def privtool_formats() -> list[Format | LazyComponent]:
    """Register dataset file formats (FIMI, SPMF, CSV, JSON Lines, ...)."""


HOOKS: dict[str, str] = {
    "partitioner": "privtool_partitioners",
    "vertical_chunker": "privtool_vertical_chunkers",
    "refiner": "privtool_refiners",
    "sanitizer": "privtool_sanitizers",
    "anonymizer": "privtool_anonymizers",
    "claim_model": "privtool_claim_models",
    "attack": "privtool_attacks",
    "verifier": "privtool_verifiers",
    "metric": "privtool_metrics",
    "format": "privtool_formats",
}
"""Component kind -> the hook that registers it."""


def plugin_registering(kind: str, *components: LazyComponent) -> SimpleNamespace:
    """A plugin object whose one hook (the one of ``kind``) registers
    ``components``: how a plugin whose only module is its implementation (each
    built-in attack) is registered without importing that module."""
    return SimpleNamespace(**{HOOKS[kind]: hookimpl(lambda: list(components))})
