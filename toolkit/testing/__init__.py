"""privtool's conformance kit for plugin authors (docs/plugin-testing.md).

One function per component kind runs every check of that kind
(:mod:`privtool.testing.checks`) and raises :class:`ConformanceError` at the
first failure::

    from privtool.testing import check_partitioner

    def test_my_partitioner_conforms():
        check_partitioner(Balanced())

Or, in the style of scikit-learn's ``parametrize_with_checks``, one test per
component and check, so that a report names each failing check::

    from privtool.testing import parametrize_with_checks

    @parametrize_with_checks([Balanced(), (KmGeneralisation(), {"hierarchy": "4", "hierarchy_format": "fanout"})])
    def test_conformance(component, check):
        check(component)

A component is given as the plugin's own object (the kit registers it, or finds
it among the installed plugins) or as a view the registry handed out; a pair
``(component, params)`` adds the options it needs (a required hierarchy, say).
The kit ships with a pytest plugin (entry point ``pytest11``) that stops the
shared process pool and Dask cluster at the end of the session. A check that has
nothing to check for a component (a verifier proving a model the kit cannot
tamper with) raises :class:`CheckSkipped`: skipped under pytest, listed in what
the ``check_*`` functions return.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import partial, update_wrapper
from typing import Any

from .checks import CHECKS, Check, CheckSkipped, ConformanceError, Subject, close_executors, subject

__all__ = [
    "CheckSkipped",
    "ConformanceError",
    "check_anonymizer",
    "check_attack",
    "check_chunker",
    "check_component",
    "check_format",
    "check_metric",
    "check_partitioner",
    "check_refiner",
    "check_sanitizer",
    "check_verifier",
    "checks_of",
    "close_executors",
    "parametrize_with_checks",
]

Given = Any
"""A component, or ``(component, params)``."""


def _split(given: Given) -> tuple[Any, Mapping[str, Any]]:
    return given if isinstance(given, tuple) else (given, {})


def checks_of(component: Any, params: Mapping[str, Any] | None = None) -> Iterator[Callable[[Any], None]]:
    """The checks of ``component``'s kind, each a callable taking the component
    (with ``params`` bound) and named after its check. Under pytest a check with
    nothing to check for this component is skipped, with the reason."""
    for check in CHECKS[component.kind]:
        yield _bound(check, params or {})


def _bound(check: Check, params: Mapping[str, Any]) -> Callable[[Any], None]:
    def run(component: Any) -> None:
        try:
            check(subject(component, params))
        except CheckSkipped as skipped:
            import pytest

            pytest.skip(str(skipped))

    return update_wrapper(partial(run), check)


def check_component(component: Any, params: Mapping[str, Any] | None = None) -> list[str]:
    """Run every check of ``component``'s kind: :class:`ConformanceError` at the
    first failure; returns the reasons of the checks that had nothing to check."""
    the_subject: Subject = subject(component, params)
    skipped = []
    for check in CHECKS[the_subject.kind]:
        try:
            check(the_subject)
        except CheckSkipped as reason:
            skipped.append(str(reason))
    return skipped


def _check_kind(kind: str) -> Callable[..., list[str]]:
    def check(component: Any, params: Mapping[str, Any] | None = None) -> list[str]:
        if component.kind != kind:
            given = component.kind.replace("_", " ")
            raise ConformanceError(f"{given} {component.name!r} is a {given}, not a {kind.replace('_', ' ')}.")
        return check_component(component, params)

    check.__doc__ = f"Every check of a {kind.replace('_', ' ')} (see :func:`check_component`)."
    return check


check_partitioner = _check_kind("partitioner")
check_chunker = _check_kind("vertical_chunker")
check_refiner = _check_kind("refiner")
check_anonymizer = _check_kind("anonymizer")
check_sanitizer = _check_kind("sanitizer")
check_metric = _check_kind("metric")
check_attack = _check_kind("attack")
check_verifier = _check_kind("verifier")
check_format = _check_kind("format")


def parametrize_with_checks(components: Iterable[Given]) -> Any:
    """A ``pytest.mark.parametrize`` over every (component, check) pair, with ids
    such as ``partitioner:balanced-check_executors``; the test receives
    ``component`` and ``check`` and calls ``check(component)``."""
    import pytest

    cases, ids = [], []
    for given in components:
        component, params = _split(given)
        for check in checks_of(component, params):
            cases.append((component, check))
            ids.append(f"{component.kind}:{component.name}-{check.__name__}")
    return pytest.mark.parametrize(("component", "check"), cases, ids=ids)
