"""Test helpers around the assessment engine (:func:`privtool.assess.assess`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from privtool.assess import Assessment, assess, assess_claims, assess_integrity
from privtool.components import Evidence
from privtool.context import Context
from privtool.results import Certificate


def certificates_of(result: Assessment) -> dict[str, Certificate]:
    """Every certificate of an assessment (claims' verifiers and integrity checks), by guarantee."""
    return _by_guarantee(result.claims, result.integrity)


def _by_guarantee(claims: Iterable[Any], integrity: Iterable[Any]) -> dict[str, Certificate]:
    found = [c for claim in claims for run in claim.runs for c in run.certificates]
    found += [c for run in integrity for c in run.certificates]
    return {c.guarantee: c for c in found}


def certificates(registry, release, original=None, trail=None, **kwargs: Any) -> dict[str, Certificate]:
    """Assess ``release`` (scope verify) and return its certificates by guarantee."""
    return certificates_of(assess(registry, release, Evidence(original, trail), Context(), **kwargs))


def verifier_certificates(registry, release, original=None, trail=None, options=None) -> dict[str, Certificate]:
    """The certificates of the verifiers alone, without the structural gate that
    stops :func:`~privtool.assess.assess` before them: for oracle tests of the
    verifiers, which must refute a changed release even where a structural
    check would have refuted it first."""
    evidence = Evidence(original, trail, {"release_sha256": release.sha256()})
    ctx, options = Context(), dict(options or {})
    claims = assess_claims(registry, release, evidence, ctx, options, {}, (), None)
    integrity = assess_integrity(registry, release, evidence, ctx, options, (), None)
    return _by_guarantee(claims, integrity)


def failed(certs: Iterable[Certificate]) -> list[Certificate]:
    return [c for c in certs if c.holds is False]
