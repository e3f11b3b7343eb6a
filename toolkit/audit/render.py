"""Audit renderers for the terminal (rich), Markdown and JSON; HTML is
:mod:`.html`. All of them show the same :class:`~privtool.audit.Audit` in the
same order: the verdict and the criteria first, then the claims, what was lost
and the utility metrics, the attack findings summarised (counts, exposure, the
worst few), the integrity checks and the release's facts; every finding in an
appendix. Evidence is readable text (:func:`~privtool.evidence_text.evidence_text`),
never raw JSON; every label that comes from data is escaped for the target
format, and evidence drawn from the original data is withheld unless
``--include-examples`` was given.
"""

from __future__ import annotations

import json
import re
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..assess import Assessment, CriterionResult
from ..assessment_tables import attack_headline, claim_evidence, print_integrity, print_structure, redact, styled
from ..evidence_text import evidence_text
from ..results import Finding
from . import ADVERSARY_TITLES, CRITERION_QUESTIONS, CRITERION_TITLES, Audit


def number(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def metric_rows(audit: Audit) -> list[tuple[str, str]]:
    """``(metric.figure, value)`` for every number of every metric that ran."""
    return [
        (f"{result.name}.{key}", number(value))
        for result in audit.ok_metrics
        for key, value in result.values.items()
        if not key.endswith("_detail")
    ]


def criterion_cell(assessment: Assessment, criterion: CriterionResult) -> str:
    """The text of one criterion cell, after its status: the claims that
    address it (or what the release claims instead) and the measured exposure."""
    if criterion.claims:
        parts = [f"claims: {', '.join(criterion.claims)}"]
    else:
        stated = ", ".join(sorted({c.claim.model for c in assessment.claims})) or "nothing"
        parts = [f"no claim addresses it (the release claims {stated})"]
    parts += [f"measured: {e}" for e in criterion.exposure]
    return "; ".join(parts)


def print_criteria(console: Console, assessment: Assessment) -> None:
    """The criteria table: one row per WP29 criterion, one column per adversary
    model (so the algorithm-aware column is there for every release, NOT
    PROTECTED where no claim covers it)."""
    table = Table(title="Criteria (WP29): protected only where a claim covers them and holds")
    table.add_column("criterion")
    for adversary in ADVERSARY_TITLES.values():
        table.add_column(adversary, overflow="fold")
    by_key = {(c.criterion, c.adversary): c for c in assessment.criteria()}
    for criterion, title in CRITERION_TITLES.items():
        cells = []
        for adversary in ADVERSARY_TITLES:
            c = by_key[(criterion, adversary)]
            cells.append(Text.assemble(styled(c.status), "\n", criterion_cell(assessment, c)))
        table.add_row(title, *cells)
    console.print(table)


def render_json(audit: Audit) -> str:
    return json.dumps(audit.to_json(), indent=2, ensure_ascii=False, default=str) + "\n"


# ------------------------------------------------------------------ terminal


def render_terminal(audit: Audit, console: Console) -> None:
    """Print the audit with rich; every data label is passed as plain text."""
    result = audit.assessment
    style = {"FAIL": "bold white on red", "PASS": "bold white on green"}.get(audit.verdict, "bold white on grey42")
    console.print(Panel(Text(f"Verdict: {audit.verdict}\n{result.verdict_reason}"), style=style, expand=False))
    console.print(Text(f"release {audit.release_path} ({audit.release.kind}), SHA-256 {audit.release_sha256}"))
    for note in result.notes:
        console.print(Text(note, style="yellow"))
    for warning in audit.warnings:
        console.print(Text(f"WARNING: {warning}", style="bold yellow"))
    print_structure(console, result)
    print_criteria(console, result)
    if result.claims:
        claims = Table(title="Claims")
        for column in ("claim", "adversary", "status", "what it promises", "evidence"):
            claims.add_column(column, overflow="fold")
        for claim in result.claims:
            claims.add_row(
                Text(claim.claim.label),
                Text(claim.claim.adversary),
                styled(claim.status),
                Text(claim.statement),
                Text(claim_evidence(claim)),
            )
        console.print(claims)
    for loss in audit.losses:
        console.print(Text(f"Lost: {loss.sentence}"))
    rows = metric_rows(audit)
    if rows:
        table = Table(title="Utility metrics")
        table.add_column("metric")
        table.add_column("value", justify="right")
        for name, value in rows:
            table.add_row(Text(name), value)
        console.print(table)
        for name, note in audit.metric_notes.items():
            console.print(Text(f"{name}: {note}"))
    for run in result.attacks:
        console.print(Text(f"attack {attack_headline(run)}", style="bold"))
        if run.exposure:
            console.print(Text(f"  measured: {run.exposure}"))
        for finding in audit.worst(run):
            f = redact(finding, audit.include_examples)
            console.print(Text.assemble("  ", styled(f.severity), f" {f.title}: {evidence_text(f.evidence, 120)}"))
    print_integrity(console, result)
    if audit.reproduce:
        console.print(Text(f"Reproduce with: {audit.reproduce}"))


# ------------------------------------------------------------------ Markdown


def md_escape(text: Any) -> str:
    """Escape text for Markdown outside code (a table cell, a list item): no
    HTML, no pipes, no emphasis, strike-through, links or images, no line break."""
    out = str(text)
    for char, repl in (
        ("\\", "\\\\"),
        ("&", "&amp;"),
        ("<", "&lt;"),
        (">", "&gt;"),
        ("|", "\\|"),
        ("*", "\\*"),
        ("_", "\\_"),
        ("`", "\\`"),
        ("~", "\\~"),
        ("[", "\\["),
        ("]", "\\]"),
        ("\r", " "),
        ("\n", " "),
    ):
        out = out.replace(char, repl)
    return out


def _longest_backtick_run(text: str) -> int:
    return max((len(run) for run in re.findall("`+", text)), default=0)


def md_code(text: Any) -> str:
    """``text`` as a Markdown code span that nothing in it can close: the
    fence is longer than any run of backticks inside (CommonMark 6.1)."""
    body = " ".join(str(text).splitlines())
    fence = "`" * (_longest_backtick_run(body) + 1)
    pad = " " if body.startswith("`") or body.endswith("`") else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def md_block(text: str) -> list[str]:
    """``text`` as a fenced code block whose fence is longer than any run of
    backticks inside (CommonMark 4.5), so the text cannot end the block."""
    fence = "`" * max(3, _longest_backtick_run(text) + 1)
    return [fence, *text.splitlines(), fence]


def _finding_rows(audit: Audit, findings: list[Finding]) -> list[str]:
    rows = ["| severity | finding | evidence |", "|---|---|---|"]
    for finding in findings:
        f = redact(finding, audit.include_examples)
        why = f" {f.explanation}" if f.explanation else ""
        rows.append(f"| {f.severity} | {md_escape(f.title + '.' + why)} | {md_escape(evidence_text(f.evidence))} |")
    return rows


def render_markdown(audit: Audit) -> str:
    result = audit.assessment
    prov = audit.release.provenance
    adversaries = list(ADVERSARY_TITLES)
    lines = [
        f"# Privacy audit: **{audit.verdict}**",
        "",
        f"{md_escape(result.verdict_reason[:1].upper() + result.verdict_reason[1:])}.",
        "",
        f"Release {md_code(audit.release_path)} ({md_escape(audit.release.kind)}), "
        f"SHA-256 {md_code(audit.release_sha256)}.",
        "",
        *(f"> {md_escape(note)}" for note in result.notes),
        *(f"> **WARNING**: {md_escape(warning)}" for warning in audit.warnings),
        "",
        "## Criteria",
        "",
        "| criterion | " + " | ".join(ADVERSARY_TITLES[a] for a in adversaries) + " |",
        "|---|" + "---|" * len(adversaries),
    ]
    by_key = {(c.criterion, c.adversary): c for c in audit.criteria}
    for criterion, title in CRITERION_TITLES.items():
        cells = [by_key[(criterion, a)] for a in adversaries]
        texts = [f"**{c.status}**: {md_escape(criterion_cell(audit.assessment, c))}" for c in cells]
        lines.append(f"| {title} | " + " | ".join(texts) + " |")
    lines += ["", *(f"- {CRITERION_TITLES[c]}: _{q}_" for c, q in CRITERION_QUESTIONS.items()), ""]
    if result.structure:
        lines += ["## Structure", "", "| where | problem |", "|---|---|"]
        lines += [f"| {md_code(p.path)} | {md_escape(p.problem)} |" for p in result.structure]
        lines.append("")
    lines += ["## Claims", ""]
    if result.claims:
        lines += ["| claim | adversary | status | what it promises | evidence |", "|---|---|---|---|---|"]
        for claim in result.claims:
            lines.append(
                f"| {md_escape(claim.claim.label)} | {claim.claim.adversary} | **{claim.status}** | "
                f"{md_escape(claim.statement)} | {md_escape(claim_evidence(claim))} |"
            )
    else:
        lines.append("The release claims no privacy model.")
    lines.append("")
    if audit.losses:
        lines += ["## What was lost", "", *(f"- {md_escape(loss.sentence)}" for loss in audit.losses), ""]
    rows = metric_rows(audit)
    if rows:
        lines += ["## Utility metrics", "", "| metric | value |", "|---|---:|"]
        lines += [f"| {md_escape(name)} | {value} |" for name, value in rows]
        lines += ["", *(f"- {md_escape(name)}: {md_escape(note)}" for name, note in audit.metric_notes.items()), ""]
    if audit.skipped_metrics:
        lines += [
            "Not computed: " + "; ".join(f"{md_escape(k)} ({md_escape(v)})" for k, v in audit.skipped_metrics.items()),
            "",
        ]
    if result.attacks:
        lines += ["## Attacks", ""]
        for run in result.attacks:
            lines += [
                f"### {md_escape(attack_headline(run))}",
                "",
                f"_{md_escape(run.adversary_statement)}_" if run.adversary_statement else "",
                "",
            ]
            if run.failure is not None:
                lines += [md_escape(run.failure.sentence), ""]
            if run.exposure:
                lines += [f"Measured: {md_escape(run.exposure)}.", ""]
            worst = audit.worst(run)
            if worst:
                lines += [*_finding_rows(audit, worst), ""]
    if result.integrity:
        lines += ["## Integrity checks", "", "| check | result | evidence |", "|---|---|---|"]
        for check in result.integrity:
            witness = next((c.witness for c in check.certificates if c.holds is False and c.witness), None)
            detail = evidence_text(witness) if witness else check.why
            lines.append(f"| {md_escape(check.verifier)} | {check.outcome} | {md_escape(detail)} |")
        lines.append("")
    lines += [
        "## Release",
        "",
        f"- Format: {md_escape(audit.release.format)}",
        f"- Input SHA-256 (stated in the trail): {md_code(audit.assessment.input_sha256 or 'unknown')}"
        + (
            ""
            if audit.input_matches is None
            else f"; checked against the given original: {'matches' if audit.input_matches else 'DOES NOT MATCH'}"
        ),
        f"- privtool {audit.privtool_version}; plugins: "
        + ", ".join(f"{md_escape(k)} {md_escape(v)}" for k, v in prov.get("plugins", {}).items()),
        f"- Seed: {md_escape('unknown (in the trail)' if audit.seed is None else audit.seed)}",
        "- Parameters: "
        + "; ".join(f"{md_escape(k)} {md_escape(evidence_text(v, 80))}" for k, v in audit.release.params.items()),
        "",
    ]
    if audit.reproduce:
        lines += ["## Reproduce", "", *md_block(audit.reproduce), ""]
    if any(run.findings for run in result.attacks):
        lines += ["## Appendix: every finding", ""]
        for run in result.attacks:
            if run.findings:
                lines += [f"### {md_escape(run.attack)}", "", *_finding_rows(audit, run.findings), ""]
    return "\n".join(lines)
