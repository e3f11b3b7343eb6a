"""Running the assessment components of a release: attacks, metrics (and,
through the same selection rule, verifiers).

A component applies to a release when its ``applies_to`` holds the release
kind. Named components that do not apply are an error; unnamed ones that do not
apply are simply not run. Options are resolved per component against its own
spec, so ``--known 2`` reaches every attack that declares ``known``. A metric
whose evidence is missing is reported as skipped with the reason, or, when the
user named it, raises the :class:`~privtool.errors.MissingEvidence` sentence.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from .components import Component, Evidence, Metric
from .context import Context
from .errors import MissingEvidence, ParameterError
from .params import merge_specs, resolve
from .registry import Registry
from .release import Release
from .results import Finding


def select(registry: Registry, kind: str, release: Release, names: Sequence[str]) -> list[Any]:
    """The components of ``kind`` to run on ``release``: the named ones (each must
    apply) or every one that applies."""
    if names:
        chosen: list[Any] = [registry.get(kind, name) for name in names]
        for component in chosen:
            if release.kind not in component.applies_to:
                raise ParameterError(
                    f"{kind} {component.name!r} applies to {', '.join(component.applies_to)} releases, "
                    f"not to this {release.kind} release."
                )
        return chosen
    applicable: list[Any] = [c for c in registry.all(kind) if release.kind in getattr(c, "applies_to", ())]
    return applicable


def options_for(component: Component, options: Mapping[str, Any]) -> dict[str, Any]:
    """Resolve the subset of ``options`` that ``component`` declares."""
    names = {p.name for p in component.params}
    return resolve(
        component.params, {k: v for k, v in options.items() if k in names}, f"{component.kind} {component.name!r}"
    )


def check_options(components: Sequence[Component], options: Mapping[str, Any], what: str) -> None:
    """Every given option must belong to at least one selected component."""
    declared = {p.name for p in merge_specs(c.params for c in components)}
    for name in options:
        if name not in declared:
            raise ParameterError(f"no selected {what} has an option --{name.replace('_', '-')}.")


@dataclass
class AttackRun:
    """The findings of one attack on one release."""

    attack: str
    params: dict[str, Any]
    findings: list[Finding] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def breaches(self) -> int:
        return sum(1 for f in self.findings if f.breaks_guarantee)


def run_attacks(
    registry: Registry,
    release: Release,
    evidence: Evidence,
    names: Sequence[str],
    options: Mapping[str, Any],
    ctx: Context,
) -> list[AttackRun]:
    """Run the selected attacks on ``release``, each with its own resolved options."""
    attacks = select(registry, "attack", release, names)
    check_options(attacks, options, "attack")
    runs = []
    for attack in attacks:
        params = options_for(attack, options)
        start = time.perf_counter()
        findings = list(attack.run(release, evidence, params, ctx))
        runs.append(AttackRun(attack.name, params, findings, time.perf_counter() - start))
    return runs


EVIDENCE_OPTIONS = {"original": "--original DATA", "trail": "--trail TRAIL"}


@dataclass
class MetricResult:
    """One metric's outcome: ``status`` ``ok`` with its ``values``, or ``skipped``
    with the ``reason``."""

    name: str
    status: str
    values: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _missing(metric: Metric, evidence: Evidence) -> str | None:
    for need in metric.needs:
        if getattr(evidence, need, None) is None:
            option = EVIDENCE_OPTIONS.get(need, need)
            return f"metric {metric.name!r} needs the {'original data' if need == 'original' else need} ({option})."
    return None


def run_metrics(
    metrics: Sequence[Metric],
    release: Release,
    evidence: Evidence,
    options: Mapping[str, Any],
    ctx: Context,
    named: bool = False,
) -> list[MetricResult]:
    """Compute ``metrics``; each gets the ``options`` it declares. With ``named``
    (the user asked for these metrics) missing evidence is an error, otherwise
    the metric is skipped with the reason."""
    results = []
    for metric in metrics:
        params = options_for(metric, options)
        started = time.perf_counter()
        try:
            reason = _missing(metric, evidence)
            if reason is not None:
                raise MissingEvidence(reason)
            values = metric.compute(release, evidence, params, ctx)
        except MissingEvidence as exc:
            if named:
                raise
            results.append(MetricResult(metric.name, "skipped", reason=exc.message))
            continue
        results.append(MetricResult(metric.name, "ok", values, seconds=round(time.perf_counter() - started, 3)))
    return results
