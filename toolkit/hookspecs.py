"""Hook specifications of privtool (pluggy project name ``privtool``).

Each hook registers components of one kind: an implementation returns a list of
component instances (subclasses of the bases in :mod:`privtool.components`).
Every built-in algorithm is registered through these hooks exactly as a
third-party plugin is; a third-party package declares an entry point in group
``privtool`` that names the module holding its ``@hookimpl`` functions.

Component names must be unique per kind across all plugins; a clash is an error
that names both plugins.
"""

from __future__ import annotations

import pluggy

from .components import Anonymizer, Attack, Format, Metric, Partitioner, Refiner, Sanitizer, Verifier, VerticalChunker

PROJECT = "privtool"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def privtool_partitioners() -> list[Partitioner]:
    """Register horizontal partitioners.

    A partitioner splits the records of a dataset into clusters and may
    suppress records (``Partitioner.partition`` returns a
    :class:`~privtool.components.Partitioning`). Built-ins: ``horpart`` and the
    small-cluster strategies ``suppression``, ``adding``, ``remaining-list``.
    """


@hookspec
def privtool_vertical_chunkers() -> list[VerticalChunker]:
    """Register vertical chunkers.

    A chunker turns one cluster into k^m-anonymous record chunks and a term
    chunk. Built-in: ``verpart``.
    """


@hookspec
def privtool_refiners() -> list[Refiner]:
    """Register refiners, which join clusters and publish shared chunks.
    Built-in: ``refine``."""


@hookspec
def privtool_sanitizers() -> list[Sanitizer]:
    """Register sanitizers: transformations of a release (``applies_to`` names
    the release kinds) or of raw data (``applies_to = ("dataset",)``) into one of
    the same kind. Built-ins: ``safe-disassociation`` and the rule-hiding ones."""


@hookspec
def privtool_anonymizers() -> list[Anonymizer]:
    """Register whole methods: dataset in, release and private trail out
    (``disassociation``, ``partition``, ``lgr``, ...). ``privtool anonymize
    --method NAME`` runs one."""


@hookspec
def privtool_attacks() -> list[Attack]:
    """Register attacks: what an adversary can learn from a release of the kinds
    in ``applies_to``. ``privtool attack`` runs them."""


@hookspec
def privtool_verifiers() -> list[Verifier]:
    """Register verifiers: each proves or refutes one guarantee of releases of
    the kinds in ``applies_to``. ``privtool verify`` runs them."""


@hookspec
def privtool_metrics() -> list[Metric]:
    """Register utility and risk metrics of releases of the kinds in
    ``applies_to``. ``privtool metrics`` computes them."""


@hookspec
def privtool_formats() -> list[Format]:
    """Register dataset file formats (FIMI, SPMF, CSV, JSON Lines, ...)."""


HOOKS: dict[str, str] = {
    "partitioner": "privtool_partitioners",
    "vertical_chunker": "privtool_vertical_chunkers",
    "refiner": "privtool_refiners",
    "sanitizer": "privtool_sanitizers",
    "anonymizer": "privtool_anonymizers",
    "attack": "privtool_attacks",
    "verifier": "privtool_verifiers",
    "metric": "privtool_metrics",
    "format": "privtool_formats",
}
"""Component kind -> the hook that registers it."""
