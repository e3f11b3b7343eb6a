"""Test helpers around the assessment engine (:func:`privtool.assess.assess`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from privtool.assess import Assessment, assess
from privtool.components import Evidence
from privtool.context import Context
from privtool.results import Certificate


def certificates_of(result: Assessment) -> dict[str, Certificate]:
    """Every certificate of an assessment (claims' verifiers and integrity checks), by guarantee."""
    found = [c for claim in result.claims for run in claim.runs for c in run.certificates]
    found += [c for run in result.integrity for c in run.certificates]
    return {c.guarantee: c for c in found}


def certificates(registry, release, original=None, trail=None, **kwargs: Any) -> dict[str, Certificate]:
    """Assess ``release`` (scope verify) and return its certificates by guarantee."""
    return certificates_of(assess(registry, release, Evidence(original, trail), Context(), **kwargs))


def failed(certs: Iterable[Certificate]) -> list[Certificate]:
    return [c for c in certs if c.holds is False]
