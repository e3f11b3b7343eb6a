"""Running every applicable verifier on a release: what ``privtool verify`` does.

Parameters ``k`` and ``m`` default to the release's stated ones (inside each
verifier, :mod:`.levels`); explicit values override them (e.g. to verify at a
stricter level). Each certificate gets the release SHA-256 and the input SHA-256
in its details. A ``stated-parameters`` certificate says whether the release's
own k and m were checked at least as strictly as stated. A guarantee the release
does not claim (cover-freedom of a plain disassociated release) comes back with
``holds = None`` and what was found, so it never fails the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from privtool.assess import DEFAULT_TIME_LIMIT, run_verifier
from privtool.components import Evidence
from privtool.context import Context
from privtool.errors import ParameterError
from privtool.params import resolve
from privtool.registry import Registry
from privtool.release import Release
from privtool.results import Certificate


def applicable(registry: Registry, release: Release, only: Sequence[str] = ()) -> list[Any]:
    """The verifiers that apply to the release's kind (or the ``only`` ones, checked to apply)."""
    verifiers = [v for v in registry.all("verifier") if release.kind in v.applies_to]
    if only:
        chosen = []
        for name in only:
            verifier = registry.get("verifier", name)
            if release.kind not in verifier.applies_to:
                raise ParameterError(
                    f"verifier {name!r} applies to {', '.join(verifier.applies_to)} releases, not {release.kind}."
                )
            chosen.append(verifier)
        return chosen
    return verifiers


def stated_parameters_certificate(release: Release, checked: dict[str, Any]) -> Certificate:
    stated = {name: release.params[name] for name in ("k", "m") if name in release.params}
    weaker = {
        name: {"stated": stated[name], "checked": checked.get(name)}
        for name in stated
        if checked.get(name) is None or checked[name] < stated[name]
    }
    return Certificate(
        "stated-parameters",
        not weaker,
        "direct",
        len(stated),
        0.0,
        {"checked_below_stated": weaker} if weaker else None,
        {"stated": stated, "checked": checked},
    )


def verify_release(
    registry: Registry,
    release: Release,
    evidence: Evidence,
    ctx: Context,
    k: int | None = None,
    m: int | None = None,
    engine: str = "auto",
    only: Sequence[str] = (),
    time_limit: float | None = DEFAULT_TIME_LIMIT,
) -> list[Certificate]:
    """Every applicable verifier's certificates, plus ``stated-parameters``;
    each verifier within ``time_limit`` seconds (:func:`run_verifier`).

    The release SHA-256 (costly on a large release) is computed once and handed
    to the verifiers as ``evidence.extra["release_sha256"]``."""
    release_sha = evidence.extra.get("release_sha256") or release.sha256()
    evidence = Evidence(evidence.original, evidence.trail, {**evidence.extra, "release_sha256": release_sha})
    given = {"k": k, "m": m, "engine": engine}
    certificates: list[Certificate] = []
    checked: dict[str, Any] = {}
    for verifier in applicable(registry, release, only):
        names = {p.name for p in verifier.params}
        params = resolve(verifier.params, {n: v for n, v in given.items() if n in names}, f"verifier {verifier.name!r}")
        for name in ("k", "m"):
            if name in names:
                checked[name] = params[name] if params[name] is not None else release.params.get(name)
        certificates.extend(run_verifier(verifier, release, evidence, params, ctx, time_limit))
    if not only:
        certificates.append(stated_parameters_certificate(release, checked))
    input_sha = (evidence.trail.input_sha256 if evidence.trail is not None else "") or release.provenance.get(
        "input_sha256", ""
    )
    for certificate in certificates:
        certificate.details["release_sha256"] = release_sha
        certificate.details["input_sha256"] = input_sha
    return certificates


def failed(certificates: Sequence[Certificate]) -> list[Certificate]:
    """Certificates of guarantees that do not hold."""
    return [c for c in certificates if c.holds is False]
