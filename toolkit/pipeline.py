"""Running a method: an anonymizer followed by a chain of sanitizers.

:func:`run_method` resolves the parameters of every stage against their specs
(a parameter shared by two stages, such as ``k``, takes one value), runs the
stages through the context, and stamps the release with every parameter used
and its provenance (privtool and plugin versions, input SHA-256, seed). The
release's claims are those the stages declare (``Anonymizer.claims``, then each
``Sanitizer.claims`` given the claims before it; :func:`declare_claims`). The
trail is tied to the release by its SHA-256.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from typing import Any

from . import __version__
from .atomic import write_text_atomic
from .claims import Claim
from .components import Anonymizer, Component, Outcome, Sanitizer
from .context import Context
from .dataset import Dataset
from .errors import ParameterError
from .params import Param, merge_specs, resolve
from .registry import Registry
from .trail import write_trail


def stage_specs(
    registry: Registry, method: str, sanitizers: Sequence[str]
) -> tuple[Anonymizer, list[Sanitizer], list[Param]]:
    """The anonymizer, the sanitizers and the merged parameter spec of a method chain."""
    anonymizer = registry.get("anonymizer", method)
    chain = [registry.get("sanitizer", name) for name in sanitizers]
    spec = merge_specs([anonymizer.params, *(s.params for s in chain)])
    return anonymizer, chain, spec


def _pick(values: Mapping[str, Any], spec: Sequence[Param]) -> dict[str, Any]:
    return {p.name: values[p.name] for p in spec}


def declare_claims(registry: Registry, component: Component, claims: Sequence[Claim], kind: str) -> list[Claim]:
    """``claims`` as ``component`` declared them, checked against the registered
    claim models: a claim of an unknown model, with invalid parameters or that
    the release ``kind`` cannot carry is a bug of the component (``ValueError``
    naming it), never written into a release."""
    from .verify.structure import claim_problems

    models = {model.name: model for model in registry.all("claim_model")}
    out = list(claims)
    for claim in out:
        if not isinstance(claim, Claim):
            raise ValueError(f"{component.kind} {component.name!r} declared {claim!r}, which is not a Claim.")
        problems = claim_problems(claim, kind, models)
        if problems:
            key, problem = problems[0]
            raise ValueError(
                f"{component.kind} {component.name!r} declares an invalid claim {claim.label}: {key}: {problem}."
            )
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


def stamp(registry: Registry, outcome: Outcome, input_sha256: str, seed: int) -> Outcome:
    """Fill in provenance and tie the trail to the (canonical) release."""
    release = outcome.release
    release.provenance = {
        "privtool": __version__,
        "plugins": registry.versions(),
        "input_sha256": input_sha256,
        "seed": seed,
    }
    outcome.release_text = release.dumps()
    outcome.trail.input_sha256 = input_sha256
    outcome.trail.release_sha256 = hashlib.sha256(outcome.release_text.encode("utf-8")).hexdigest()
    return outcome


def write_outcome(
    outcome: Outcome, release_path: str | os.PathLike[str], trail_path: str | os.PathLike[str] | None = None
) -> None:
    """Write the stamped release (and, when asked, its trail) atomically."""
    write_text_atomic(release_path, outcome.release_text or outcome.release.dumps())
    if trail_path is not None:
        write_trail(outcome.trail, trail_path)


def run_method(
    registry: Registry,
    dataset: Dataset,
    method: str,
    options: Mapping[str, Any],
    ctx: Context,
    sanitizers: Sequence[str] = (),
) -> Outcome:
    """Anonymize ``dataset`` with ``method`` then ``sanitizers``; ``options`` are raw
    parameter values (strings from the command line are fine)."""
    anonymizer, chain, spec = stage_specs(registry, method, sanitizers)
    values = resolve(spec, options, f"method {method!r}" + (f" with {', '.join(sanitizers)}" if sanitizers else ""))
    params = _pick(values, anonymizer.params)
    outcome = anonymizer.anonymize(dataset, params, ctx)
    outcome.release.claims = declare_claims(registry, anonymizer, anonymizer.claims(params), outcome.release.kind)
    outcome.release.params = {"method": method, **params, **outcome.release.params}
    outcome = apply_sanitizers(registry, outcome, chain, values, ctx)
    return stamp(registry, outcome, dataset.content_sha256(), ctx.seed)
