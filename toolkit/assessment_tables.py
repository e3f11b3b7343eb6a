"""Terminal tables of an :class:`~privtool.assess.Assessment`, shared by
``verify``, ``attack`` and ``audit`` so that they show one assessment the same
way. Every text that comes from data is printed as plain text (no rich markup),
and evidence is readable text (:func:`~privtool.evidence_text.evidence_text`),
never JSON cut mid-token."""

from __future__ import annotations

from dataclasses import replace

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .assess import Assessment, AttackRun, ClaimResult
from .evidence_text import evidence_text
from .results import ORIGINAL_DATA_KEYS, Finding

STATUS_STYLE = {
    "holds": "green",
    "PASS": "bold white on green",
    "fails": "bold red",
    "breached": "bold red",
    "FAIL": "bold white on red",
    "unverified": "yellow",
    "unknown": "yellow",
    "error": "bold yellow",
    "INCOMPLETE": "bold white on grey42",
    "NOT PROTECTED": "bold yellow",
    "proved": "green",
    "refuted": "bold red",
    "not checked": "yellow",
    "nothing to check": "yellow",
    "breach": "bold red",
    "risk": "yellow",
    "info": "dim",
}
SEVERITY_ORDER = ("breach", "risk", "info")
WITHHELD = "(withheld: private data; see --include-examples)"


def styled(status: str) -> Text:
    return Text(status, style=STATUS_STYLE.get(status, ""))


def redact(finding: Finding, include_examples: bool) -> Finding:
    """``finding`` without evidence from the original data, unless examples are included."""
    if include_examples or not any(key in finding.evidence for key in ORIGINAL_DATA_KEYS):
        return finding
    evidence = {k: (WITHHELD if k in ORIGINAL_DATA_KEYS else v) for k, v in finding.evidence.items()}
    return replace(finding, evidence=evidence)


def claim_evidence(claim: ClaimResult) -> str:
    """What a reader needs beside a claim's status: the witness that refutes it,
    or the reason it is not verified, or the units proved."""
    for run in claim.runs:
        for certificate in run.certificates:
            if certificate.holds is False and certificate.witness:
                return f"{run.verifier}: {evidence_text(certificate.witness)}"
    if claim.status == "holds":
        proved = [
            f"{run.verifier} ({sum(c.units for c in run.certificates):,} units)"
            for run in claim.runs
            if run.outcome == "proved"
        ]
        empty = [run.verifier for run in claim.runs if run.outcome == "nothing to check"]
        return f"proved by {', '.join(proved)}" + (f"; nothing to check for {', '.join(empty)}" if empty else "")
    return claim.reason


def print_structure(console: Console, result: Assessment) -> None:
    if not result.structure:
        return
    table = Table(title="Structure: the release is not well formed (nothing else was checked)")
    table.add_column("where", overflow="fold")
    table.add_column("problem", overflow="fold")
    for problem in result.structure:
        table.add_row(Text(problem.path), Text(problem.problem))
    console.print(table)


def print_claims(console: Console, result: Assessment) -> None:
    if result.structure:
        return
    if not result.claims:
        console.print("The release claims no privacy model.", style="yellow")
        return
    table = Table(title="Claims")
    table.add_column("claim", no_wrap=True)
    table.add_column("adversary", no_wrap=True)
    for column in ("status", "evidence"):
        table.add_column(column, overflow="fold")
    for claim in result.claims:
        table.add_row(
            Text(claim.claim.label), Text(claim.claim.adversary), styled(claim.status), Text(claim_evidence(claim))
        )
    console.print(table)


def print_integrity(console: Console, result: Assessment) -> None:
    if not result.integrity:
        return
    table = Table(title="Integrity checks (prove no privacy model)")
    for column in ("check", "result", "units", "seconds", "evidence"):
        table.add_column(column, overflow="fold", justify="right" if column in ("units", "seconds") else "left")
    for run in result.integrity:
        witness = next((c.witness for c in run.certificates if c.holds is False and c.witness), None)
        detail = evidence_text(witness) if witness else run.why
        units = sum(c.units for c in run.certificates)
        table.add_row(Text(run.verifier), styled(run.outcome), f"{units:,}", f"{run.seconds:.3f}", Text(detail))
    console.print(table)


def attack_headline(run: AttackRun) -> str:
    """``linkage: 2 breach(es), 5 risk(s) of 8 finding(s)``."""
    return f"{run.attack}: {run.breaches} breach(es), {run.risks} risk(s) of {len(run.findings)} finding(s)"


def print_attack(console: Console, run: AttackRun, max_rows: int, include_examples: bool = True) -> None:
    title = f"attack {attack_headline(run)}, {run.seconds:.2f} s"
    if run.failure is not None:
        console.print(Text(f"{title}: {run.failure.sentence}", style="bold yellow"))
        return
    table = Table(title=title, caption=run.exposure or None)
    for column in ("severity", "finding", "evidence"):
        table.add_column(column, overflow="fold")
    ordered = sorted(run.findings, key=lambda f: SEVERITY_ORDER.index(f.severity))
    for finding in ordered[:max_rows]:
        why = f" — {finding.explanation}" if finding.explanation else ""
        table.add_row(
            styled(finding.severity),
            Text(finding.title + why),
            Text(evidence_text(redact(finding, include_examples).evidence)),
        )
    if len(run.findings) > max_rows:
        table.caption = (table.caption + "; " if table.caption else "") + (
            f"{len(run.findings) - max_rows} more findings: use --json to see all"
        )
    console.print(table)


def print_engine_disagreements(console: Console, result: Assessment) -> None:
    """Where ``--engine both`` found the engines disagree (one of them is wrong)."""
    runs = [*(run for claim in result.claims for run in claim.runs), *result.integrity]
    for run in runs:
        for certificate in run.certificates:
            if certificate.details.get("engine_disagreements"):
                console.print(
                    Text.assemble(
                        Text(f"ENGINES DISAGREE on {certificate.guarantee}: ", style="bold red"),
                        evidence_text(certificate.details["engine_disagreements"], 300),
                    )
                )


def print_verdict(console: Console, result: Assessment) -> None:
    console.print(Text.assemble("Verdict: ", styled(result.verdict), f" ({result.verdict_reason})"))
