"""The HTML audit: one self-contained file (inline CSS, inline SVG plots, no
script, no external resource), so it works offline and can be archived as is.

The first screen holds the verdict with its reason and the criteria table (per
WP29 criterion and adversary model); then the claims, what was lost and the
utility metrics, the attacks summarised (counts, exposure, the worst few
findings) and the integrity checks. Every finding is listed in a collapsible
appendix (``<details>``), never in the main text, and evidence is readable text,
never raw JSON. Every text from data goes through :func:`html.escape`."""

from __future__ import annotations

from html import escape

from ..assessment_tables import attack_headline, claim_evidence, redact
from ..evidence_text import evidence_text
from ..results import Finding
from . import ADVERSARY_TITLES, CRITERION_QUESTIONS, CRITERION_TITLES, Audit
from .plots import release_shape_svg, results_svg
from .render import criterion_cell, metric_rows

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:1.2rem auto;max-width:1100px;
color:#1b1b1b;padding:0 1rem}
h1{margin:.2rem 0 .4rem} h2{margin-top:1.6rem}
.verdict{display:inline-block;padding:.5rem 1.1rem;border-radius:6px;font-size:1.5rem;font-weight:700;color:#fff}
.reason{margin:.4rem 0 .8rem;font-size:1.05rem}
.PASS{background:#2e7d32} .FAIL{background:#c62828} .INCOMPLETE{background:#616161} .NOTPROTECTED{background:#b26a00}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1.2rem}
th,td{border:1px solid #ccc;padding:.3rem .5rem;text-align:left;vertical-align:top;font-size:.9rem}
th{background:#f3f3f3} code,pre{background:#f6f8fa;padding:.1rem .3rem;border-radius:3px;overflow-wrap:anywhere}
pre{padding:.6rem;white-space:pre-wrap}
.status{display:inline-block;font-weight:700;color:#fff;padding:0 .4rem;border-radius:4px}
.holds{background:#2e7d32} .fails,.breached{background:#c62828} .unverified,.unknown,.error{background:#616161}
.plots{display:flex;flex-wrap:wrap;gap:1rem} .plots figure{margin:0;flex:1 1 460px} .muted{color:#666}
.breach{color:#8e0000;font-weight:700} .risk{color:#8a5a00}
.note{background:#fff8e1;padding:.4rem .6rem;border-left:4px solid #b26a00}
details{margin:.6rem 0} summary{cursor:pointer;font-weight:600}
"""


def _status(text: str) -> str:
    return f'<span class="status {escape(text.replace(" ", ""))}">{escape(text)}</span>'


def _criteria(audit: Audit) -> list[str]:
    by_key = {(c.criterion, c.adversary): c for c in audit.criteria}
    parts = [
        '<table id="criteria"><tr><th>criterion</th>'
        + "".join(f"<th>{escape(title)}</th>" for title in ADVERSARY_TITLES.values())
        + "</tr>"
    ]
    for criterion, title in CRITERION_TITLES.items():
        parts.append(
            f'<tr><th title="{escape(CRITERION_QUESTIONS[criterion])}">{escape(title)}'
            f'<br><span class="muted">{escape(CRITERION_QUESTIONS[criterion])}</span></th>'
        )
        for adversary in ADVERSARY_TITLES:
            c = by_key[(criterion, adversary)]
            parts.append(f"<td>{_status(c.status)} {escape(criterion_cell(audit.assessment, c))}</td>")
        parts.append("</tr>")
    parts.append("</table>")
    return parts


def _findings_table(audit: Audit, findings: list[Finding]) -> list[str]:
    parts = ["<table><tr><th>severity</th><th>finding</th><th>evidence</th></tr>"]
    for finding in findings:
        f = redact(finding, audit.include_examples)
        why = f'<br><span class="muted">{escape(f.explanation)}</span>' if f.explanation else ""
        parts.append(
            f'<tr><td class="{escape(f.severity)}">{escape(f.severity)}</td><td>{escape(f.title)}{why}</td>'
            f"<td>{escape(evidence_text(f.evidence))}</td></tr>"
        )
    parts.append("</table>")
    return parts


def _claims(audit: Audit) -> list[str]:
    result = audit.assessment
    if result.structure:
        parts = ['<h2>Structure</h2><table id="structure"><tr><th>where</th><th>problem</th></tr>']
        parts += [
            f"<tr><td><code>{escape(p.path)}</code></td><td>{escape(p.problem)}</td></tr>" for p in result.structure
        ]
        return [*parts, "</table>"]
    if not result.claims:
        return ["<h2>Claims</h2><p>The release claims no privacy model: there is nothing to hold it to.</p>"]
    parts = [
        '<h2>Claims</h2><table id="claims"><tr><th>claim</th><th>adversary</th><th>status</th>'
        "<th>what it promises</th><th>evidence</th></tr>"
    ]
    for claim in result.claims:
        parts.append(
            f"<tr><td>{escape(claim.claim.label)}</td>"
            f"<td>{escape(ADVERSARY_TITLES.get(claim.claim.adversary, claim.claim.adversary))}</td>"
            f'<td><span class="status {escape(claim.status)}">{escape(claim.status)}</span></td>'
            f"<td>{escape(claim.statement)}</td><td>{escape(claim_evidence(claim))}</td></tr>"
        )
    parts.append("</table>")
    return parts


def _lost_and_utility(audit: Audit) -> list[str]:
    parts = []
    if audit.losses:
        parts.append('<h2>What was lost</h2><ul id="lost">')
        parts += [f"<li>{escape(loss.sentence)}</li>" for loss in audit.losses]
        parts.append("</ul>")
    rows = metric_rows(audit)
    if rows:
        parts.append('<h2>Utility metrics</h2><table id="metrics"><tr><th>metric</th><th>value</th></tr>')
        parts += [f"<tr><td>{escape(name)}</td><td>{escape(value)}</td></tr>" for name, value in rows]
        parts.append("</table><ul>")
        parts += [f"<li><b>{escape(name)}</b>: {escape(note)}</li>" for name, note in audit.metric_notes.items()]
        parts.append("</ul>")
    if audit.skipped_metrics:
        parts.append(
            "<p class='muted'>Not computed: "
            + escape("; ".join(f"{k} ({v})" for k, v in audit.skipped_metrics.items()))
            + "</p>"
        )
    return parts


def _attacks(audit: Audit) -> list[str]:
    result = audit.assessment
    if not result.attacks:
        return []
    parts = ['<h2>Attacks</h2><div id="attacks">']
    for run in result.attacks:
        parts.append(f"<h3>{escape(attack_headline(run))}</h3>")
        if run.adversary_statement:
            parts.append(f'<p class="muted">{escape(run.adversary_statement)}</p>')
        if run.failure is not None:
            parts.append(f"<p>{escape(run.failure.sentence)}</p>")
        if run.exposure:
            parts.append(f"<p>Measured: {escape(run.exposure)}.</p>")
        worst = audit.worst(run)
        if worst:
            parts.append(f"<p>The worst {len(worst)} (every finding is in the appendix):</p>")
            parts += _findings_table(audit, worst)
    parts.append("</div>")
    return parts


def _integrity(audit: Audit) -> list[str]:
    runs = audit.assessment.integrity
    if not runs:
        return []
    parts = ['<h2>Integrity checks</h2><table id="integrity"><tr><th>check</th><th>result</th><th>evidence</th></tr>']
    for run in runs:
        witness = next((c.witness for c in run.certificates if c.holds is False and c.witness), None)
        detail = evidence_text(witness) if witness else run.why
        parts.append(f"<tr><td>{escape(run.verifier)}</td><td>{escape(run.outcome)}</td><td>{escape(detail)}</td></tr>")
    parts.append("</table>")
    return parts


def _release_facts(audit: Audit) -> list[str]:
    release = audit.release
    prov = release.provenance
    match = (
        ""
        if audit.input_matches is None
        else (" — matches the given original" if audit.input_matches else " — DOES NOT MATCH the given original")
    )
    parts = ["<h2>Release</h2><table id='release'>"]
    rows = [
        ("kind", release.kind),
        ("format", release.format),
        ("parameters", "; ".join(f"{k} {evidence_text(v, 80)}" for k, v in release.params.items())),
        ("privtool", prov.get("privtool", "unknown")),
        ("plugins", ", ".join(f"{k} {v}" for k, v in prov.get("plugins", {}).items())),
        ("input SHA-256 (trail)", f"{audit.assessment.input_sha256 or 'unknown'}{match}"),
        ("release SHA-256", audit.release_sha256),
        ("seed (trail)", "unknown" if audit.seed is None else audit.seed),
        ("audited by", f"privtool {audit.privtool_version} in {audit.seconds:.2f} s"),
    ]
    parts += [f"<tr><th>{escape(k)}</th><td>{escape(str(v))}</td></tr>" for k, v in rows]
    parts.append("</table>")
    if audit.reproduce:
        parts.append(f"<h2>Reproduce</h2><pre>{escape(audit.reproduce)}</pre>")
    return parts


def _appendix(audit: Audit) -> list[str]:
    runs = [run for run in audit.assessment.attacks if run.findings]
    if not runs:
        return []
    total = sum(len(run.findings) for run in runs)
    parts = [f'<details id="appendix"><summary>Appendix: every finding ({total:,})</summary>']
    for run in runs:
        parts.append(f"<h3>{escape(run.attack)}</h3>")
        parts += _findings_table(audit, run.findings)
    parts.append("</details>")
    return parts


def render_html(audit: Audit) -> str:
    result = audit.assessment
    verdict = audit.verdict
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>privtool audit: {escape(verdict)}</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>Privacy audit</h1>",
        f'<p><span id="verdict" class="verdict {verdict}">Verdict: {escape(verdict)}</span></p>',
        f'<p class="reason">{escape(result.verdict_reason[:1].upper() + result.verdict_reason[1:])}.</p>',
        *_criteria(audit),
        *(f'<p class="note">{escape(note)}</p>' for note in result.notes),
        *(f'<p class="breach">WARNING: {escape(warning)}</p>' for warning in audit.warnings),
        f"<p class='muted'>Release <code>{escape(audit.release_path)}</code> ({escape(audit.release.kind)}).</p>",
        *_claims(audit),
        *_lost_and_utility(audit),
        *_attacks(audit),
        *_integrity(audit),
        '<h2>Plots</h2><div class="plots">',
        f"<figure>{release_shape_svg(audit)}</figure>",
        f"<figure>{results_svg(audit)}</figure>",
        "</div>",
        *_release_facts(audit),
        *_appendix(audit),
        "</body></html>\n",
    ]
    return "\n".join(parts)
