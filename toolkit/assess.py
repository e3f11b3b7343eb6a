"""The assessment engine: the one place that decides what to run on a release
and what the result means (docs/design.md, "Claims and the assessment engine").

``privtool verify``, ``attack``, ``audit``, ``compare`` and the Python API call
:func:`assess` with a :class:`Scope` and report its :class:`Assessment`:

1. **structure** (:func:`privtool.verifiers.structure.check_structure`); a problem
   stops everything else and the verdict is FAIL;
2. **claims**: each claim of the release is checked by every verifier whose
   ``proves`` holds its model, whose ``adversaries`` hold the claim's adversary
   and whose ``applies_to`` holds the release kind,
   with the claim's parameters (a stricter ``--k``/``--m`` may replace them; a
   weaker one leaves the claim unverified);
3. **integrity checks**: the verifiers that prove no model;
4. **attacks** (scope): each finding is a breach only when the release claims
   the model it refutes against the attack's adversary, a risk otherwise;
5. **metrics** (scope).

The verdict (:meth:`Assessment.verdict`) and the per-criterion statuses
(:meth:`Assessment.criteria`) are computed here and nowhere else, so the
commands cannot disagree. Every call into component code goes through
:func:`call_component`, which records a component that raises as status
``error`` (a :class:`ComponentFailure`) instead of crashing the run; user errors
(:class:`~privtool.errors.UserError`: bad input, exit 2) pass through.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from typing import Any, TypeVar

from .claims import ADVERSARIES, WP29_CRITERIA, Claim, adversary_strength
from .components import Attack, ClaimModel, Component, Evidence, Metric, Verifier
from .context import Context
from .dataset import Dataset
from .errors import EXIT_INTERNAL, MissingEvidence, ParameterError, PluginFault, TimedOut, UserError
from .memo import sharing
from .params import merge_specs, resolve
from .registry import Registry
from .release import Release
from .results import Certificate, Finding
from .trail import Trail

T = TypeVar("T")

# ------------------------------------------------------------------ selection


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


# ------------------------------------------------------- calling components


@dataclass
class ComponentFailure:
    """A component that raised (or broke its contract): which one, the plugin at
    fault, and what went wrong (``error`` completes "metric 'x' ...": ``raised
    ZeroDivisionError in compute(): division by zero``)."""

    kind: str
    name: str
    plugin: str
    error: str
    traceback: str = field(default="", repr=False)

    @property
    def sentence(self) -> str:
        """The one sentence of the error contract, as the CLI prints a plugin fault."""
        return f"plugin {self.plugin!r}: {self.kind.replace('_', ' ')} {self.name!r} {self.error}".rstrip(".") + "."

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "name": self.name, "plugin": self.plugin, "error": self.error}


def call_component(
    registry: Registry, component: Component, call: Callable[[], T]
) -> tuple[T | None, ComponentFailure | None]:
    """Run ``call`` (a call into ``component``'s code): its result, or the
    :class:`ComponentFailure` when it raised or returned what its contract
    forbids (the registry's guard reports both as a
    :class:`~privtool.errors.PluginFault` naming the plugin at fault, which may
    be another component's the call went through). A
    :class:`~privtool.errors.UserError` (bad input or missing evidence) is not a
    component failure and propagates."""
    try:
        return call(), None
    except (UserError, TimedOut):
        raise
    except PluginFault as fault:
        failure = ComponentFailure(component.kind, component.name, fault.plugin, fault.problem, fault.details)
        return None, failure
    except Exception as exc:  # not through a guarded view: still recorded, never a crash of the run
        try:
            plugin = registry.owner(component.kind, component.name)
        except KeyError:
            plugin = "unregistered"
        error = f"raised {type(exc).__name__}: {' '.join(str(exc).split())}"
        return None, ComponentFailure(component.kind, component.name, plugin, error, traceback.format_exc())


# ------------------------------------------------------------------ results

CLAIM_STATUSES = ("holds", "fails", "breached", "unverified", "unknown", "error")


@dataclass
class VerifierRun:
    """One verifier's run for one claim (or as an integrity check)."""

    verifier: str
    params: dict[str, Any]
    certificates: list[Certificate] = field(default_factory=list)
    failure: ComponentFailure | None = None
    reason: str = ""
    seconds: float = 0.0

    @property
    def outcome(self) -> str:
        """``proved``, ``refuted``, ``nothing to check`` (0 units: proves nothing),
        ``not checked`` (with :attr:`reason`), ``unknown`` (a time bound) or ``error``."""
        if self.failure is not None:
            return "error"
        if any(c.holds is False for c in self.certificates):
            return "refuted"
        if any(c.details.get("timed_out") for c in self.certificates):
            return "unknown"
        if not self.certificates or any(c.holds is None for c in self.certificates):
            return "not checked"
        if all(c.units == 0 for c in self.certificates):
            return "nothing to check"
        return "proved"

    @property
    def why(self) -> str:
        """The reason it did not prove or refute, in a few words."""
        if self.failure is not None:
            return self.failure.sentence
        if self.reason:
            return self.reason
        for c in self.certificates:
            if c.holds is None:
                return str(c.details.get("reason") or ("timed out" if c.details.get("timed_out") else "not checked"))
        return "nothing to check (0 units)" if self.outcome == "nothing to check" else ""

    def to_json(self) -> dict[str, Any]:
        return {
            "verifier": self.verifier,
            "outcome": self.outcome,
            "params": self.params,
            "reason": self.why,
            "seconds": round(self.seconds, 4),
            "certificates": [c.to_json() for c in self.certificates],
            "failure": self.failure.to_json() if self.failure else None,
        }


@dataclass
class ClaimResult:
    """The status of one claim and how it was reached."""

    claim: Claim
    statement: str
    criteria: tuple[str, ...]
    status: str
    reason: str
    checked: dict[str, Any]
    runs: list[VerifierRun] = field(default_factory=list)
    breaches: list[Finding] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "claim": self.claim.to_json(),
            "label": self.claim.label,
            "statement": self.statement,
            "criteria": list(self.criteria),
            "adversary": self.claim.adversary,
            "status": self.status,
            "reason": self.reason,
            "checked": self.checked,
            "verifiers": [run.to_json() for run in self.runs],
            "breaches": len(self.breaches),
        }


@dataclass
class AttackRun:
    """The findings of one attack on one release, judged against its claims."""

    attack: str
    params: dict[str, Any]
    findings: list[Finding] = field(default_factory=list)
    seconds: float = 0.0
    criteria: tuple[str, ...] = ()
    adversary: str = ADVERSARIES[0]
    adversary_statement: str = ""
    exposure: str | None = None
    failure: ComponentFailure | None = None

    @property
    def breaches(self) -> int:
        return sum(1 for f in self.findings if f.breaks_guarantee)

    @property
    def risks(self) -> int:
        return sum(1 for f in self.findings if f.severity == "risk")

    def to_json(self, findings: Sequence[Finding] | None = None) -> dict[str, Any]:
        return {
            "attack": self.attack,
            "params": self.params,
            "adversary": self.adversary,
            "adversary_statement": self.adversary_statement,
            "criteria": list(self.criteria),
            "exposure": self.exposure,
            "breaches": self.breaches,
            "risks": self.risks,
            "seconds": round(self.seconds, 3),
            "failure": self.failure.to_json() if self.failure else None,
            "findings": [f.to_json() for f in (self.findings if findings is None else findings)],
        }


EVIDENCE_OPTIONS = {"original": "--original DATA", "trail": "--trail TRAIL"}


@dataclass
class MetricResult:
    """One metric's outcome: ``ok`` with its ``values``, ``skipped`` with the
    ``reason`` (missing evidence), or ``error`` (the metric raised)."""

    name: str
    status: str
    values: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    seconds: float = 0.0
    failure: ComponentFailure | None = field(default=None, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "failure"}


@dataclass
class CriterionResult:
    """One WP29 criterion against one adversary model: ``PASS`` (a claim
    addresses it and every such claim holds), ``FAIL`` (one is refuted),
    ``INCOMPLETE`` (one is not verified) or ``NOT PROTECTED`` (no claim
    addresses it), with the claims and the attacks' measured exposure."""

    criterion: str
    adversary: str
    status: str
    claims: list[str]
    exposure: list[str]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Scope:
    """What an assessment runs after the structure: the claims and integrity
    checks (verifiers), the attacks, the metrics."""

    name: str
    verifiers: bool
    attacks: bool
    metrics: bool


VERIFY = Scope("verify", verifiers=True, attacks=False, metrics=False)
ATTACK = Scope("attack", verifiers=True, attacks=True, metrics=False)
AUDIT = Scope("audit", verifiers=True, attacks=True, metrics=True)
COMPARE = Scope("compare", verifiers=True, attacks=False, metrics=True)
METRICS = Scope("metrics", verifiers=False, attacks=False, metrics=True)
"""``METRICS`` measures only (``compare --no-verify``); its verdict is not a verdict on the claims."""

VERDICTS = ("PASS", "FAIL", "INCOMPLETE")


@dataclass
class Assessment:
    """Everything :func:`assess` found, and the one verdict."""

    release: Release
    release_sha256: str
    scope: Scope
    structure: list[Any] = field(default_factory=list)
    claims: list[ClaimResult] = field(default_factory=list)
    integrity: list[VerifierRun] = field(default_factory=list)
    attacks: list[AttackRun] = field(default_factory=list)
    metrics: list[MetricResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    input_sha256: str = ""
    """The input's content SHA-256 as the trail states it (a release written
    before it moved there states it in its provenance); "" when unknown."""

    @property
    def failures(self) -> list[ComponentFailure]:
        """Every component that raised."""
        runs = [*(run for claim in self.claims for run in claim.runs), *self.integrity]
        found = [run.failure for run in runs if run.failure is not None]
        found += [run.failure for run in self.attacks if run.failure is not None]
        found += [m.failure for m in self.metrics if m.failure is not None]
        return found

    @property
    def verdict(self) -> str:
        """FAIL when the structure is invalid, a claim fails or is breached, or an
        integrity check is refuted; INCOMPLETE when a claim is unverified,
        unknown or in error, a component failed, or the release claims nothing;
        PASS otherwise."""
        if self.structure:
            return "FAIL"
        if any(c.status in ("fails", "breached") for c in self.claims):
            return "FAIL"
        if any(run.outcome == "refuted" for run in self.integrity):
            return "FAIL"
        if not self.claims or any(c.status not in ("holds",) for c in self.claims):
            return "INCOMPLETE"
        if self.failures or any(m.status == "error" for m in self.metrics):
            return "INCOMPLETE"
        return "PASS"

    @property
    def exit_code(self) -> int:
        """0 for PASS, 1 for FAIL or INCOMPLETE, 3 when a component failed (the
        rest still ran and is reported; docs/design.md, "Error contract")."""
        if self.failures:
            return EXIT_INTERNAL
        return 0 if self.verdict == "PASS" else 1

    @property
    def verdict_reason(self) -> str:
        """One sentence saying why the verdict is what it is."""
        if self.structure:
            return f"the release is not well formed: {self.structure[0]}" + (
                f" (and {len(self.structure) - 1} more problem(s))" if len(self.structure) > 1 else ""
            )
        bad = [c for c in self.claims if c.status in ("fails", "breached")]
        if bad:
            return "; ".join(f"{c.claim.label} {c.status}: {c.reason}" for c in bad[:3])
        refuted = [run for run in self.integrity if run.outcome == "refuted"]
        if refuted:
            return f"integrity check {refuted[0].verifier} is refuted"
        if not self.claims:
            return "the release claims no privacy model, so there is nothing to hold it to"
        open_claims = [c for c in self.claims if c.status != "holds"]
        if open_claims:
            return "; ".join(f"{c.claim.label} {c.status}: {c.reason}" for c in open_claims[:3])
        if self.failures:
            return self.failures[0].sentence
        errors = [m for m in self.metrics if m.status == "error"]
        if errors:
            return f"metric {errors[0].name!r} failed: {errors[0].reason}"
        return "every claim holds" + (" and no attack refutes one" if self.scope.attacks else "")

    def criteria(self, models: Mapping[str, ClaimModel] | None = None) -> list[CriterionResult]:
        """Per WP29 criterion and adversary model (see :class:`CriterionResult`)."""
        out = []
        for criterion in WP29_CRITERIA:
            for adversary in ADVERSARIES:
                addressing = [c for c in self.claims if criterion in c.criteria and c.claim.covers(adversary)]
                exposure = [
                    _exposure(run)
                    for run in self.attacks
                    if criterion in run.criteria and adversary_strength(run.adversary) <= adversary_strength(adversary)
                ]
                if not addressing:
                    status = "NOT PROTECTED"
                elif any(c.status in ("fails", "breached") for c in addressing):
                    status = "FAIL"
                elif all(c.status == "holds" for c in addressing):
                    status = "PASS"
                else:
                    status = "INCOMPLETE"
                if self.structure:
                    status = "FAIL" if addressing else status
                out.append(CriterionResult(criterion, adversary, status, [c.claim.label for c in addressing], exposure))
        return out

    def to_json(self, attacks: Sequence[dict[str, Any]] | None = None) -> dict[str, Any]:
        """The assessment as JSON; ``attacks`` replaces the attack runs' own JSON
        (the audit passes them with redacted findings, made once)."""
        return {
            "verdict": self.verdict,
            "exit_code": self.exit_code,
            "reason": self.verdict_reason,
            "scope": self.scope.name,
            "kind": self.release.kind,
            "format": self.release.format,
            "release_sha256": self.release_sha256,
            "input_sha256": self.input_sha256,
            "notes": self.notes,
            "structure": [p.to_json() for p in self.structure],
            "claims": [c.to_json() for c in self.claims],
            "criteria": [c.to_json() for c in self.criteria()],
            "integrity": [run.to_json() for run in self.integrity],
            "attacks": list(attacks) if attacks is not None else [run.to_json() for run in self.attacks],
            "metrics": [m.to_json() for m in self.metrics],
            "failures": [f.to_json() for f in self.failures],
            "seconds": round(self.seconds, 3),
        }


def _exposure(run: AttackRun) -> str:
    """What one attack measured, for a criterion: its exposure sentence (or its
    counts) and how many of its findings breach a claim or lie outside every claim."""
    if run.failure is not None:
        return f"{run.attack}: not measured ({run.failure.error})"
    counts = f"{run.breaches} breach(es), {run.risks} risk(s) outside the claims"
    return f"{run.attack}: {run.exposure} ({counts})" if run.exposure else f"{run.attack}: {counts}"


# ------------------------------------------------------------------ engine


DEFAULT_TIME_LIMIT = 600.0
"""Seconds each verifier may run (``--time-limit``) before its certificate is
reported undecided: far above what the benchmarks' releases need, far below the
hour a bad release once took."""


def _verify_once(
    registry: Registry,
    verifier: Verifier,
    release: Release,
    evidence: Evidence,
    params: dict[str, Any],
    ctx: Context,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
) -> VerifierRun:
    """Run one verifier within ``time_limit`` seconds (None: no bound); missing
    evidence makes it ``not checked`` with the reason. The verifier gets a
    context whose deadline is that far away (:attr:`Context.deadline`); if it
    raises :class:`~privtool.errors.TimedOut` its certificate is undecided
    (``holds`` None, ``details["timed_out"]``): never ``holds`` for work it did
    not finish."""
    run = VerifierRun(verifier.name, params)
    started = time.perf_counter()
    bounded = ctx.with_time_limit(time_limit)
    try:
        certificates, run.failure = call_component(
            registry, verifier, lambda: list(verifier.verify(release, evidence, params, bounded))
        )
    except MissingEvidence as exc:
        certificates, run.reason = [], exc.message
    except TimedOut:
        limit = f" of {time_limit:g} s" if time_limit else ""
        certificates = [
            Certificate(verifier.name, None, "none", 0, 0.0, None, {"timed_out": True, "reason": f"time limit{limit}"})
        ]
    run.seconds = time.perf_counter() - started
    for certificate in certificates or []:
        if not certificate.seconds:
            certificate.seconds = round(run.seconds, 4)
        certificate.details["release_sha256"] = evidence.extra.get("release_sha256", "")
        certificate.details["input_sha256"] = stated_input_sha256(release, evidence)
        run.certificates.append(certificate)
    return run


def stated_input_sha256(release: Release, evidence: Evidence) -> str:
    """The input SHA-256 the trail states, else the one a version 1 release states."""
    from_trail = evidence.trail.input_sha256 if evidence.trail is not None else ""
    return from_trail or str(release.provenance.get("input_sha256", ""))


def _checked_params(
    claim: Claim, model: ClaimModel | None, overrides: Mapping[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    """The parameters to check ``claim`` at (claimed ones, replaced by the
    overrides) and the overrides that are weaker than the claim."""
    checked = dict(claim.params)
    weaker = []
    for name, value in overrides.items():
        if value is None or name not in checked:
            continue
        if model is not None and not model.is_stricter(name, value, checked[name]):
            weaker.append(f"--{name} {value} is weaker than the claimed {name} = {checked[name]}")
        checked[name] = value
    return checked, weaker


def _claim_status(
    runs: Sequence[VerifierRun], weaker: Sequence[str], only: Sequence[str], adversary: str = ADVERSARIES[0]
) -> tuple[str, str]:
    """A claim's status and reason from its verifier runs (before attacks)."""
    refuted = [run for run in runs if run.outcome == "refuted"]
    if refuted:
        witness = next(c.witness for c in refuted[0].certificates if c.holds is False)
        return "fails", f"{refuted[0].verifier} refutes it" + (f" (witness {_brief(witness)})" if witness else "")
    errors = [run for run in runs if run.outcome == "error"]
    if errors:
        return "error", errors[0].why
    unknown = [run for run in runs if run.outcome == "unknown"]
    if unknown:
        return "unknown", f"{unknown[0].verifier} hit its time bound"
    if not runs:
        return "unverified", (
            "no verifier selected by --only proves it"
            if only
            else f"no installed verifier proves it for this kind against the {adversary} adversary"
        )
    open_runs = [run for run in runs if run.outcome == "not checked"]
    if open_runs:
        return "unverified", f"{open_runs[0].verifier}: {open_runs[0].why}"
    if weaker:
        return "unverified", "; ".join(weaker) + ", so the claim itself is not verified"
    if all(run.outcome == "nothing to check" for run in runs):
        return "unverified", "nothing to check: every verifier found 0 units, which proves nothing"
    proved = [run.verifier for run in runs if run.outcome == "proved"]
    return "holds", f"proved by {', '.join(proved)}"


def _brief(value: Any, limit: int = 120) -> str:
    """A short, readable rendering of a witness for one-sentence reasons."""
    if isinstance(value, dict):
        text = ", ".join(f"{k}={_brief(v, 40)}" for k, v in value.items())
    elif isinstance(value, (list, tuple)):
        text = "{" + ", ".join(str(x) for x in value) + "}" if all(isinstance(x, str) for x in value) else str(value)
    else:
        text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def assess_claims(
    registry: Registry,
    release: Release,
    evidence: Evidence,
    ctx: Context,
    options: Mapping[str, Any],
    overrides: Mapping[str, Any],
    only: Sequence[str],
    time_limit: float | None = DEFAULT_TIME_LIMIT,
) -> list[ClaimResult]:
    """Step 2: every claim with the verifiers that prove its model against its adversary."""
    models = {m.name: m for m in registry.all("claim_model")}
    verifiers = [v for v in registry.all("verifier") if release.kind in v.applies_to]
    results = []
    for claim in release.claims:
        model = models[claim.model]  # structure checked that every model is registered
        checked, weaker = _checked_params(claim, model, overrides)
        provers = [
            v
            for v in verifiers
            if claim.model in v.proves and claim.adversary in v.adversaries and (not only or v.name in only)
        ]
        runs = []
        for verifier in provers:
            own = {p.name for p in verifier.params}
            params = options_for(verifier, {k: v for k, v in options.items() if k in own and k not in checked})
            params.update({name: value for name, value in checked.items() if name in own})
            with ctx.stage(f"verify {claim.label} with {verifier.name}"):
                runs.append(_verify_once(registry, verifier, release, evidence, params, ctx, time_limit))
        status, reason = _claim_status(runs, weaker, only, claim.adversary)
        results.append(ClaimResult(claim, model.statement(claim), tuple(model.criteria), status, reason, checked, runs))
    return results


def assess_integrity(
    registry: Registry,
    release: Release,
    evidence: Evidence,
    ctx: Context,
    options: Mapping[str, Any],
    only: Sequence[str],
    time_limit: float | None = DEFAULT_TIME_LIMIT,
) -> list[VerifierRun]:
    """Step 3: the verifiers that prove no model (faithfulness, hierarchy, removal-only)."""
    runs = []
    for verifier in registry.all("verifier"):
        if verifier.proves or release.kind not in verifier.applies_to or (only and verifier.name not in only):
            continue
        own = {p.name for p in verifier.params}
        params = options_for(verifier, {k: v for k, v in options.items() if k in own})
        with ctx.stage(f"check {verifier.name}"):
            runs.append(_verify_once(registry, verifier, release, evidence, params, ctx, time_limit))
    return runs


def judge(finding: Finding, attack: Attack, claims: Sequence[Claim]) -> Finding:
    """The finding with its severity decided from the release's claims: a
    ``breach`` iff it refutes a model the release claims against the attack's
    adversary (or a stronger one); otherwise a ``risk`` (``info`` stays
    ``info``) with a one-sentence explanation."""
    refutes = finding.refutes
    if refutes is None and finding.severity == "breach" and len(attack.refutes) == 1:
        refutes = attack.refutes[0]  # an attack that refutes one model may leave the field to its declaration
    if refutes is not None:
        holding = [c for c in claims if c.model == refutes and c.covers(attack.adversary)]
        if holding:
            return replace(
                finding,
                severity="breach",
                refutes=refutes,
                explanation=finding.explanation
                or f"It refutes the claim {holding[0].label} against the {holding[0].adversary} adversary.",
            )
    if finding.severity == "info":
        return finding
    stated = ", ".join(c.label for c in claims) or "nothing"
    why = (
        f"The release does not claim {refutes} against the {attack.adversary} adversary (it claims {stated})."
        if refutes is not None
        else f"No claim of the release covers it (it claims {stated})."
    )
    return replace(finding, severity="risk", refutes=refutes, explanation=finding.explanation or why)


def run_attacks(
    registry: Registry,
    release: Release,
    evidence: Evidence,
    names: Sequence[str],
    options: Mapping[str, Any],
    ctx: Context,
) -> list[AttackRun]:
    """Run the selected attacks on ``release``, each with its own resolved
    options; every finding judged against the release's claims (:func:`judge`)."""
    attacks = select(registry, "attack", release, names)
    check_options(attacks, options, "attack")
    runs = []
    for attack in attacks:
        params = options_for(attack, options)
        started = time.perf_counter()
        with ctx.stage(f"attack {attack.name}"):
            found, failure = call_component(registry, attack, partial(attack.run, release, evidence, params, ctx))
        findings = [judge(f, attack, release.claims) for f in found or []]
        exposure = None
        if failure is None:
            exposure, failure = call_component(registry, attack, partial(attack.exposure, findings))
        runs.append(
            AttackRun(
                attack.name,
                params,
                findings,
                time.perf_counter() - started,
                tuple(attack.criteria),
                attack.adversary,
                attack.adversary_statement,
                exposure,
                failure,
            )
        )
    return runs


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
    registry: Registry | None = None,
) -> list[MetricResult]:
    """Compute ``metrics``; each gets the ``options`` it declares. With ``named``
    (the user asked for these metrics) missing evidence is an error, otherwise
    the metric is skipped with the reason. With a ``registry``, a metric that
    raises is recorded as ``error`` (:func:`call_component`)."""
    results = []
    for metric in metrics:
        params = options_for(metric, options)
        started = time.perf_counter()
        try:
            reason = _missing(metric, evidence)
            if reason is not None:
                raise MissingEvidence(reason)
            compute = partial(metric.compute, release, evidence, params, ctx)
            values: dict[str, Any] | None
            if registry is None:
                values, failure = compute(), None
            else:
                values, failure = call_component(registry, metric, compute)
        except MissingEvidence as exc:
            if named:
                raise
            results.append(MetricResult(metric.name, "skipped", reason=exc.message))
            continue
        seconds = round(time.perf_counter() - started, 3)
        if failure is not None:
            results.append(
                MetricResult(metric.name, "error", reason=failure.sentence, seconds=seconds, failure=failure)
            )
        else:
            results.append(MetricResult(metric.name, "ok", values or {}, seconds=seconds))
    return results


def evidence_of(original: Dataset | None, trail: Trail | None, release_sha256: str) -> Evidence:
    """The evidence ``verify``, ``attack``, ``metrics``, ``audit`` and the Python
    API hand the engine: the original data and the trail when given, with the
    SHA-256 of the release and of the original (computed once, here)."""
    original_sha = original.content_sha256() if original is not None else None
    return Evidence(
        original=original, trail=trail, extra={"release_sha256": release_sha256, "original_sha256": original_sha}
    )


def measure(
    registry: Registry,
    release: Release,
    evidence: Evidence,
    names: Sequence[str],
    options: Mapping[str, Any],
    ctx: Context,
) -> list[MetricResult]:
    """What ``privtool metrics`` computes: the metrics ``names`` (each must apply,
    and missing evidence is then an error) or every one that applies (missing
    evidence skips it); every option must belong to a selected metric."""
    metrics = select(registry, "metric", release, names)
    check_options(metrics, options, "metric")
    return run_metrics(metrics, release, evidence, options, ctx, named=bool(names), registry=registry)


def assess(
    registry: Registry,
    release: Release,
    evidence: Evidence,
    ctx: Context,
    scope: Scope = VERIFY,
    *,
    options: Mapping[str, Any] | None = None,
    overrides: Mapping[str, Any] | None = None,
    only: Sequence[str] = (),
    attacks: Sequence[str] = (),
    metrics: Sequence[str] | None = None,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
) -> Assessment:
    """Assess ``release`` (see the module docstring).

    ``options`` are component options (``engine``, ``known``, ``targets``, ...),
    each given to the components that declare it; ``overrides`` replace claimed
    parameters (``{"k": 10}``: stricter checks; a weaker value leaves the claim
    unverified); ``only`` restricts the verifiers (the claims no selected
    verifier proves stay unverified); ``attacks`` and ``metrics`` name the ones
    to run within the scope (default: every one that applies); each verifier
    runs within ``time_limit`` seconds (None: no bound), after which its
    certificate is undecided and its claim ``unknown``."""
    with sharing():  # components may share what they derive from the release (privtool.memo)
        return _assess(registry, release, evidence, ctx, scope, options, overrides, only, attacks, metrics, time_limit)


def _assess(
    registry: Registry,
    release: Release,
    evidence: Evidence,
    ctx: Context,
    scope: Scope,
    options: Mapping[str, Any] | None,
    overrides: Mapping[str, Any] | None,
    only: Sequence[str],
    attacks: Sequence[str],
    metrics: Sequence[str] | None,
    time_limit: float | None,
) -> Assessment:
    """The body of :func:`assess`."""
    from .verifiers.structure import check_structure

    started = time.perf_counter()
    options = dict(options or {})
    overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
    for name in only:
        select(registry, "verifier", release, [name])  # each named verifier must exist and apply
    for name in overrides:
        if not any(name in claim.params for claim in release.claims):
            stated = ", ".join(c.label for c in release.claims) or "nothing"
            raise ParameterError(f"--{name} overrides no claimed parameter (the release claims {stated}).")
    release_sha = evidence.extra.get("release_sha256") or release.sha256()
    evidence = Evidence(evidence.original, evidence.trail, {**evidence.extra, "release_sha256": release_sha})
    result = Assessment(release, release_sha, scope, input_sha256=stated_input_sha256(release, evidence))
    if release.claims_derived:
        result.notes.append(
            "This is a privtool-release/1 file: it states no claims, so they were derived from its kind and "
            "parameters (" + (", ".join(c.label for c in release.claims) or "none") + ")."
        )
    models = {m.name: m for m in registry.all("claim_model")}
    with ctx.stage("structure"):
        result.structure = check_structure(release, evidence.original, models=models)
    if result.structure:
        result.seconds = time.perf_counter() - started
        return result
    if scope.verifiers:
        result.claims = assess_claims(registry, release, evidence, ctx, options, overrides, only, time_limit)
        result.integrity = assess_integrity(registry, release, evidence, ctx, options, only, time_limit)
    if scope.attacks:
        attack_params = {p.name for a in select(registry, "attack", release, attacks) for p in a.params}
        attack_options = {k: v for k, v in options.items() if k in attack_params}
        result.attacks = run_attacks(registry, release, evidence, attacks, attack_options, ctx)
        for claim in result.claims:
            claim.breaches = [
                f
                for run in result.attacks
                for f in run.findings
                if f.breaks_guarantee and f.refutes == claim.claim.model
            ]
            if claim.breaches and claim.status != "fails":
                claim.status = "breached"
                claim.reason = f"{len(claim.breaches)} attack finding(s) refute it, e.g. {claim.breaches[0].title}"
    if scope.metrics:
        chosen = [m for m in select(registry, "metric", release, ()) if metrics is None or m.name in metrics]
        with ctx.stage("metrics"):
            result.metrics = run_metrics(chosen, release, evidence, options, ctx, registry=registry)
    result.seconds = time.perf_counter() - started
    return result
