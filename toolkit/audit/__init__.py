"""The audit: everything a privacy officer needs to sign off a release.

:func:`build_audit` runs every verifier, attack and metric that applies to the
release (through the registry, so third-party components take part too) and
arranges the results by the three criteria of the Article 29 Working Party's
Opinion 05/2014 on anonymisation techniques — singling out, linkability,
inference — plus faithfulness (nothing lost, nothing invented). The verdict
comes first: FAIL when any certificate is refuted or any finding breaks the
release's stated guarantee, INCOMPLETE when nothing certifies it against
singling out. Renderers live in :mod:`privtool.audit.render`.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import __version__
from ..assess import DEFAULT_TIME_LIMIT, options_for, run_attacks, run_metrics, run_verifier, select
from ..components import CRITERIA, Evidence
from ..context import Context
from ..publishable import private_fields
from ..registry import Registry
from ..release import Release
from ..results import Certificate, Finding

CRITERION_TITLES = {
    "singling-out": "Singling out",
    "linkability": "Linkability",
    "inference": "Inference",
    "faithfulness": "Faithfulness",
}
CRITERION_QUESTIONS = {
    "singling-out": "Can a person's record be isolated from a few known items?",
    "linkability": "Can records be linked to a person with background knowledge?",
    "inference": "Can an item be deduced with certainty, or a hidden pattern recovered?",
    "faithfulness": "Was every input record published or counted, and nothing invented?",
}


@dataclass
class Section:
    """One criterion: the certificates and findings that inform it."""

    criterion: str
    certificates: list[tuple[str, Certificate]] = field(default_factory=list)
    findings: list[tuple[str, Finding]] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(c.holds is False for _, c in self.certificates) or any(f.breaks_guarantee for _, f in self.findings)

    @property
    def status(self) -> str:
        if self.failed:
            return "FAIL"
        if not self.certificates and not self.findings:
            return "NOT ASSESSED"
        return "PASS"


@dataclass
class Audit:
    """The assembled audit; see the module docstring."""

    release_path: str
    release: Release
    release_sha256: str
    input_sha256_given: str | None
    sections: list[Section]
    metrics: dict[str, dict[str, Any]]
    skipped_metrics: dict[str, str]
    reproduce: str
    include_examples: bool
    seconds: float
    privtool_version: str = __version__
    stated_input_sha256: str | None = None
    """The input SHA-256 the trail states (or a release written before it moved there)."""
    seed: int | None = None
    """The seed the trail states (or a release written before it moved there)."""
    warnings: list[str] = field(default_factory=list)
    """What the release file carries that belongs in the private trail."""

    @property
    def verdict(self) -> str:
        """FAIL when anything failed; INCOMPLETE when no certificate proves the
        release safe from singling out (nothing to sign off); PASS otherwise."""
        if any(s.failed for s in self.sections):
            return "FAIL"
        if any(c.details.get("timed_out") for s in self.sections for _, c in s.certificates):
            return "INCOMPLETE"  # a certificate stopped at the time limit proves nothing
        singling_out = next(s for s in self.sections if s.criterion == "singling-out")
        if not any(c.holds is True for _, c in singling_out.certificates):
            return "INCOMPLETE"
        return "PASS"

    @property
    def input_matches(self) -> bool | None:
        if self.input_sha256_given is None or not self.stated_input_sha256:
            return None
        return self.input_sha256_given == self.stated_input_sha256

    def to_json(self) -> dict[str, Any]:
        from .render import redact

        return {
            "verdict": self.verdict,
            "release": self.release_path,
            "kind": self.release.kind,
            "release_sha256": self.release_sha256,
            "params": self.release.params,
            "provenance": self.release.provenance,
            "stats": self.release.stats,
            "stated_input_sha256": self.stated_input_sha256,
            "seed": self.seed,
            "warnings": self.warnings,
            "input_sha256_checked": self.input_sha256_given,
            "input_matches_release": self.input_matches,
            "sections": [
                {
                    "criterion": s.criterion,
                    "status": s.status,
                    "certificates": [{"verifier": v, **c.to_json()} for v, c in s.certificates],
                    "findings": [{"attack": a, **redact(f, self.include_examples).to_json()} for a, f in s.findings],
                }
                for s in self.sections
            ],
            "metrics": self.metrics,
            "skipped_metrics": self.skipped_metrics,
            "reproduce": self.reproduce,
            "seconds": round(self.seconds, 3),
        }


def reproduce_command(release: Release, release_path: str, seed: int | None = None) -> str:
    """The ``privtool`` command that makes this release again from its input
    (``SEED`` and ``HIERARCHY`` stand for what only the trail and the owner know)."""
    params = dict(release.params)
    method = params.pop("method", None)
    if method is None:
        return ""
    sanitizers = params.pop("sanitizers", [])
    args = ["privtool", "anonymize", "INPUT", "--method", str(method)]
    for name in sanitizers:
        args += ["--sanitizer", str(name)]
    for name, value in params.items():
        option = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            args.append(option if value else "--no-" + option[2:])
        elif isinstance(value, str) and value.startswith("sha256:"):
            args += [option, name.upper()]  # a file known by its content hash
        elif isinstance(value, (int, float, str)):
            args += [option, str(value)]
    args += ["--seed", "SEED" if seed is None else str(seed), "-o", release_path]
    return shlex.join(args)


def build_audit(
    registry: Registry,
    release: Release,
    release_path: str,
    release_sha256: str,
    evidence: Evidence,
    options: Mapping[str, Any],
    ctx: Context,
    include_examples: bool = False,
    attacks: Sequence[str] = (),
    time_limit: float | None = DEFAULT_TIME_LIMIT,
) -> Audit:
    """Verify, attack and measure ``release``; see the module docstring."""
    start = time.perf_counter()
    sections = {criterion: Section(criterion) for criterion in CRITERIA}
    for verifier in select(registry, "verifier", release, ()):
        params = options_for(verifier, options)
        with ctx.stage(f"verify {verifier.name}"):
            for certificate in run_verifier(verifier, release, evidence, params, ctx, time_limit):
                sections[verifier.criterion].certificates.append((verifier.name, certificate))
    attack_params = {p.name for a in select(registry, "attack", release, attacks) for p in a.params}
    attack_options = {k: v for k, v in options.items() if k in attack_params}
    for run in run_attacks(registry, release, evidence, attacks, attack_options, ctx):
        criterion = registry.get("attack", run.attack).criterion
        sections[criterion].findings.extend((run.attack, f) for f in run.findings)
    metrics: dict[str, dict[str, Any]] = {}
    skipped: dict[str, str] = {}
    with ctx.stage("metrics"):
        for result in run_metrics(select(registry, "metric", release, ()), release, evidence, options, ctx):
            if result.status == "ok":
                metrics[result.name] = result.values
            else:
                skipped[result.name] = result.reason
    trail = evidence.trail
    seed = trail.seed if trail is not None and trail.seed is not None else release.provenance.get("seed")
    stated_input = (trail.input_sha256 if trail is not None else "") or release.provenance.get("input_sha256")
    return Audit(
        release_path=release_path,
        release=release,
        release_sha256=release_sha256,
        input_sha256_given=evidence.original.content_sha256() if evidence.original is not None else None,
        sections=[sections[c] for c in CRITERIA],
        metrics=metrics,
        skipped_metrics=skipped,
        reproduce=reproduce_command(release, release_path, seed),
        include_examples=include_examples,
        seconds=time.perf_counter() - start,
        stated_input_sha256=stated_input,
        seed=seed,
        warnings=[
            f"the release publishes {path}, which belongs in the private trail; remove it before publishing"
            for path in private_fields(release)
        ],
    )
