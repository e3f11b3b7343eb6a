"""The audit: everything a privacy officer needs to sign off a release.

:func:`build_audit` runs the assessment engine with the widest scope (structure,
claims, integrity checks, every attack and metric that applies, through the
registry, so third-party components take part too) and arranges the result for
a reader: the verdict and the three criteria of the Article 29 Working Party's
Opinion 05/2014 on anonymisation techniques (singling out, linkability,
inference), per adversary model, first; then each claim with the adversary it
holds against, what was lost (suppressed records, removed occurrences) and the
utility metrics with the direction that is better, the attack findings
summarised, and the full findings in an appendix. The verdict and the criteria
come from :class:`~privtool.assess.Assessment`, so ``verify``, ``attack`` and
``audit`` cannot disagree. Renderers: :mod:`.render` (terminal, Markdown, JSON)
and :mod:`.html`.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import __version__
from ..assess import AUDIT, DEFAULT_TIME_LIMIT, Assessment, AttackRun, CriterionResult, MetricResult, assess
from ..assessment_tables import redact
from ..components import Evidence
from ..context import Context
from ..publishable import private_fields
from ..registry import Registry
from ..release import Release
from ..results import Finding
from ..trail import Trail

CRITERION_TITLES = {"singling-out": "Singling out", "linkability": "Linkability", "inference": "Inference"}
CRITERION_QUESTIONS = {
    "singling-out": "Can a person's record be isolated from a few known items?",
    "linkability": "Can records be linked to a person with background knowledge?",
    "inference": "Can an item be deduced with certainty, or a hidden pattern recovered?",
}
ADVERSARY_TITLES = {
    "consistent-reconstruction": "Adversary who knows the release and some items",
    "algorithm-aware": "Adversary who also knows the algorithm",
}
WORST_SHOWN = 5
"""Findings shown per attack in the main text; the rest are in the appendix."""


@dataclass
class Loss:
    """One thing the release gave up to protect people, with a sentence."""

    figure: str
    value: float
    sentence: str


def losses(release: Release, trail: Trail | None = None) -> list[Loss]:
    """What was lost, from the stats of the release and its trail (the counts a
    release does not publish, :mod:`privtool.publishable`, are in the trail):
    suppressed records, removed item occurrences, occurrences published only in
    term chunks, ghost records added."""
    stats = {**release.stats, **(trail.stats if trail is not None else {})}
    out = []
    records = stats.get("records_in")

    def share(n: float, total: Any) -> str:
        return f" ({100 * n / total:.2f} %)" if isinstance(total, int) and total else ""

    suppressed = stats.get("suppressed_records")
    if isinstance(suppressed, int):
        out.append(
            Loss(
                "suppressed records",
                suppressed,
                f"{suppressed:,} of {records:,} records{share(suppressed, records)} are not published."
                if isinstance(records, int)
                else f"{suppressed:,} records are not published.",
            )
        )
    occurrences = stats.get("item_occurrences_in")
    for key, what in (
        ("removed_item_occurrences", "item occurrences were removed"),
        ("suppressed_item_occurrences", "item occurrences were suppressed from chunks"),
    ):
        n = stats.get(key)
        if isinstance(n, int):
            out.append(Loss(key.replace("_", " "), n, f"{n:,} {what}{share(n, occurrences)}."))
    term = stats.get("item_occurrences_in_term_chunks")
    if isinstance(term, int):
        out.append(
            Loss(
                "occurrences in term chunks",
                term,
                f"{term:,} item occurrences{share(term, occurrences)} are published only in term chunks, "
                "without the records they belong to.",
            )
        )
    for key, what in (("ghost_records", "ghost records"), ("ghost_subrecords", "ghost sub-records")):
        n = stats.get(key)
        if isinstance(n, int) and n:
            out.append(Loss(what, n, f"{n:,} {what} were added (invented, to hide real ones)."))
    return out


@dataclass
class Audit:
    """The assembled audit; see the module docstring."""

    release_path: str
    assessment: Assessment
    input_sha256_given: str | None
    reproduce: str
    include_examples: bool
    metric_notes: Mapping[str, str]
    privtool_version: str = __version__
    trail: Trail | None = None
    """The private trail, when given (its stats and seed feed the report)."""
    warnings: list[str] = field(default_factory=list)
    """What the release file carries that belongs in the private trail."""

    @property
    def seed(self) -> int | None:
        """The seed the trail states (or a release written before it moved there)."""
        if self.trail is not None and self.trail.seed is not None:
            return self.trail.seed
        seed = self.release.provenance.get("seed")
        return seed if isinstance(seed, int) else None

    @property
    def release(self) -> Release:
        return self.assessment.release

    @property
    def release_sha256(self) -> str:
        return self.assessment.release_sha256

    @property
    def verdict(self) -> str:
        return self.assessment.verdict

    @property
    def criteria(self) -> list[CriterionResult]:
        return self.assessment.criteria()

    @property
    def seconds(self) -> float:
        return self.assessment.seconds

    @property
    def metrics(self) -> dict[str, dict[str, Any]]:
        return {m.name: m.values for m in self.assessment.metrics if m.status == "ok"}

    @property
    def skipped_metrics(self) -> dict[str, str]:
        return {m.name: m.reason for m in self.assessment.metrics if m.status != "ok"}

    @property
    def ok_metrics(self) -> list[MetricResult]:
        return [m for m in self.assessment.metrics if m.status == "ok"]

    @property
    def losses(self) -> list[Loss]:
        return losses(self.release, self.trail)

    @property
    def input_matches(self) -> bool | None:
        if self.input_sha256_given is None or not self.assessment.input_sha256:
            return None
        return self.input_sha256_given == self.assessment.input_sha256

    def worst(self, run: AttackRun) -> list[Finding]:
        """The findings of ``run`` shown in the main text: breaches, then risks, at most :data:`WORST_SHOWN`."""
        ordered = [f for f in run.findings if f.severity == "breach"] + [
            f for f in run.findings if f.severity == "risk"
        ]
        return ordered[:WORST_SHOWN]

    def to_json(self) -> dict[str, Any]:
        body = self.assessment.to_json(
            attacks=[
                run.to_json([redact(f, self.include_examples) for f in run.findings]) for run in self.assessment.attacks
            ]
        )
        return {
            "release": self.release_path,
            **body,
            "params": self.release.params,
            "provenance": self.release.provenance,
            "stats": self.release.stats,
            "seed": self.seed,
            "warnings": self.warnings,
            "input_sha256_checked": self.input_sha256_given,
            "input_matches_release": self.input_matches,
            "losses": [{"figure": x.figure, "value": x.value, "sentence": x.sentence} for x in self.losses],
            "metric_notes": dict(self.metric_notes),
            "reproduce": self.reproduce,
        }


def reproduce_command(release: Release, release_path: str, seed: int | None = None) -> str:
    """The ``privtool`` command that makes this release again from its input
    (``hide`` for a rule-hiding release, whose rules stay a placeholder: they
    are a secret of the trail; so is ``SEED`` without the trail, and a file the
    release names by its content hash, such as ``HIERARCHY``)."""
    params = dict(release.params)
    method = params.pop("method", None)
    if method is None:
        return ""
    if method == "rule-hiding":
        params.pop("min_support_relative", None)
        args = ["privtool", "hide", "INPUT", "--rules", "RULES", "--sanitizer", str(params.pop("sanitizer", ""))]
        args += ["-o", "SANITIZED", "--release", release_path]
    else:
        args = ["privtool", "anonymize", "INPUT", "--method", str(method)]
        for name in params.pop("sanitizers", []):
            args += ["--sanitizer", str(name)]
        args += ["-o", release_path]
    for name, value in params.items():
        option = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            args.append(option if value else "--no-" + option[2:])
        elif isinstance(value, str) and value.startswith("sha256:"):
            args += [option, name.upper()]  # a file known by its content hash
        elif isinstance(value, (int, float, str)):
            args += [option, str(value)]
    args += ["--seed", "SEED" if seed is None else str(seed)]
    return shlex.join(args)


def metric_notes(registry: Registry, results: Sequence[MetricResult]) -> dict[str, str]:
    """Per metric: what it measures and which direction is better."""
    notes = {}
    for result in results:
        metric = registry.get("metric", result.name)
        better = {"lower": " Lower is better.", "higher": " Higher is better."}.get(metric.better, "")
        notes[result.name] = f"{metric.summary[:1].upper()}{metric.summary[1:].rstrip('.')}.{better}"
    return notes


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
    metrics: Sequence[str] = (),
    time_limit: float | None = DEFAULT_TIME_LIMIT,
) -> Audit:
    """Verify, attack and measure ``release`` (``attacks``, ``metrics``: only
    these, each must apply; default every one that applies); see the module docstring."""
    evidence = Evidence(evidence.original, evidence.trail, {**evidence.extra, "release_sha256": release_sha256})
    result = assess(
        registry,
        release,
        evidence,
        ctx,
        AUDIT,
        options=options,
        attacks=attacks,
        metrics=list(metrics) or None,
        time_limit=time_limit,
    )
    audit = Audit(
        release_path=release_path,
        assessment=result,
        input_sha256_given=evidence.original.content_sha256() if evidence.original is not None else None,
        reproduce="",
        include_examples=include_examples,
        metric_notes=metric_notes(registry, result.metrics),
        trail=evidence.trail,
        warnings=[
            f"the release publishes {path}, which belongs in the private trail; remove it before publishing"
            for path in private_fields(release)
        ],
    )
    audit.reproduce = reproduce_command(release, release_path, audit.seed)
    return audit
