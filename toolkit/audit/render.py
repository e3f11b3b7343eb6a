"""Audit renderers for the terminal (rich), Markdown and JSON.

Every label that comes from data is escaped for the target format, and evidence
drawn from the original data is withheld unless ``--include-examples`` was given.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from ..results import ORIGINAL_DATA_KEYS, Finding
from . import CRITERION_QUESTIONS, CRITERION_TITLES, Audit

WITHHELD = "(withheld: original data; see --include-examples)"


def redact(finding: Finding, include_examples: bool) -> Finding:
    """``finding`` without evidence from the original data, unless examples are included."""
    if include_examples or not any(key in finding.evidence for key in ORIGINAL_DATA_KEYS):
        return finding
    evidence = {k: (WITHHELD if k in ORIGINAL_DATA_KEYS else v) for k, v in finding.evidence.items()}
    return replace(finding, evidence=evidence)


def certificate_status(holds: bool | None) -> str:
    return {True: "holds", False: "REFUTED", None: "not checked"}[holds]


def short_json(value: Any, limit: int = 240) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_json(audit: Audit) -> str:
    return json.dumps(audit.to_json(), indent=2, ensure_ascii=False, default=str) + "\n"


def render_terminal(audit: Audit, console: Console) -> None:
    """Print the audit with rich; every data label is passed as plain text."""
    style = {"FAIL": "bold white on red", "PASS": "bold white on green"}.get(audit.verdict, "bold white on grey42")
    console.print(Panel(f"Verdict: {audit.verdict}", style=style, expand=False))
    console.print(f"release {audit.release_path} ({audit.release.kind}), SHA-256 {audit.release_sha256}", markup=False)
    for section in audit.sections:
        if not section.certificates and not section.findings:
            console.print(
                f"[bold]{CRITERION_TITLES[section.criterion]}[/]: not assessed for a {audit.release.kind} release"
            )
            continue
        table = Table(
            title=f"{CRITERION_TITLES[section.criterion]}: {section.status}",
            caption=CRITERION_QUESTIONS[section.criterion],
        )
        for column in ("source", "result", "detail"):
            table.add_column(column, overflow="fold")
        for verifier, cert in section.certificates:
            detail = (
                short_json(cert.witness) if cert.witness else f"{cert.units} units, {cert.engine}, {cert.seconds:.2f} s"
            )
            table.add_row(f"{verifier}: {cert.guarantee}", certificate_status(cert.holds), detail)
        for attack, finding in section.findings:
            f = redact(finding, audit.include_examples)
            table.add_row(attack, f.severity, f"{f.title} {short_json(f.evidence)}")
        console.print(table)
    if audit.metrics:
        table = Table(title="Utility and risk metrics")
        table.add_column("metric")
        table.add_column("value", justify="right")
        for metric, values in audit.metrics.items():
            for key, value in values.items():
                if not key.endswith("_detail"):
                    table.add_row(f"{metric}.{key}", _number(value))
        console.print(table)
    if audit.reproduce:
        console.print("Reproduce with:", audit.reproduce, markup=False)


def _number(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def md_escape(text: Any) -> str:
    """Escape text for a Markdown table cell (no HTML, no pipes, no emphasis)."""
    out = str(text)
    for char, repl in (
        ("&", "&amp;"),
        ("<", "&lt;"),
        (">", "&gt;"),
        ("|", "\\|"),
        ("*", "\\*"),
        ("_", "\\_"),
        ("`", "\\`"),
        ("\n", " "),
    ):
        out = out.replace(char, repl)
    return out


def render_markdown(audit: Audit) -> str:
    lines = [
        f"# Privacy audit: **{audit.verdict}**",
        "",
        f"- Release: `{md_escape(audit.release_path)}` ({audit.release.kind}), SHA-256 `{audit.release_sha256}`",
        f"- Input SHA-256 (stated): `{audit.release.provenance.get('input_sha256', 'unknown')}`"
        + (
            ""
            if audit.input_matches is None
            else f"; checked against the given original: {'matches' if audit.input_matches else 'DOES NOT MATCH'}"
        ),
        f"- privtool {audit.privtool_version}; plugins: "
        + ", ".join(f"{md_escape(k)} {md_escape(v)}" for k, v in audit.release.provenance.get("plugins", {}).items()),
        f"- Seed: {audit.release.provenance.get('seed', 'unknown')}",
        "- Parameters: " + ", ".join(f"{md_escape(k)}={md_escape(v)}" for k, v in audit.release.params.items()),
        "",
    ]
    for section in audit.sections:
        lines += [
            f"## {CRITERION_TITLES[section.criterion]}: {section.status}",
            "",
            f"_{CRITERION_QUESTIONS[section.criterion]}_",
            "",
        ]
        if section.certificates or section.findings:
            lines += ["| source | result | detail |", "|---|---|---|"]
        for verifier, cert in section.certificates:
            detail = (
                short_json(cert.witness) if cert.witness else f"{cert.units} units, {cert.engine}, {cert.seconds:.2f} s"
            )
            lines.append(
                f"| {md_escape(verifier)}: {md_escape(cert.guarantee)} | {certificate_status(cert.holds)} | "
                f"{md_escape(detail)} |"
            )
        for attack, finding in section.findings:
            f = redact(finding, audit.include_examples)
            lines.append(
                f"| {md_escape(attack)} | {f.severity} | {md_escape(f.title)} {md_escape(short_json(f.evidence))} |"
            )
        lines.append("")
    if audit.metrics:
        lines += ["## Metrics", "", "| metric | value |", "|---|---:|"]
        for metric, values in audit.metrics.items():
            for key, value in values.items():
                if not key.endswith("_detail"):
                    lines.append(f"| {md_escape(metric)}.{md_escape(key)} | {_number(value)} |")
        lines.append("")
    if audit.skipped_metrics:
        lines += [
            "Skipped metrics: "
            + ", ".join(f"{md_escape(k)} ({md_escape(v)})" for k, v in audit.skipped_metrics.items()),
            "",
        ]
    if audit.reproduce:
        lines += ["## Reproduce", "", "```", audit.reproduce, "```", ""]
    return "\n".join(lines)
