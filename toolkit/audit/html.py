"""The HTML audit: one self-contained file (inline CSS, inline SVG plots, no
script, no external resource), so it works offline and can be archived as is.
Every text from data goes through :func:`html.escape`."""

from __future__ import annotations

from html import escape

from . import CRITERION_QUESTIONS, CRITERION_TITLES, Audit
from .plots import release_shape_svg, results_svg
from .render import _number, certificate_status, redact, short_json

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:1100px;color:#1b1b1b}
body{padding:0 1rem}
h1{margin-bottom:.2rem}
.verdict{display:inline-block;padding:.6rem 1.2rem;border-radius:6px;font-size:1.6rem;font-weight:700;color:#fff}
.PASS{background:#2e7d32}
.FAIL{background:#c62828}
.INCOMPLETE,.NOTASSESSED{background:#757575}
table{border-collapse:collapse;width:100%;margin:.6rem 0 1.4rem}
th,td{border:1px solid #ccc;padding:.3rem .5rem;text-align:left;vertical-align:top;font-size:.9rem}
th{background:#f3f3f3}
code,pre{background:#f6f8fa;padding:.1rem .3rem;border-radius:3px;overflow-wrap:anywhere}
pre{padding:.6rem;white-space:pre-wrap}
.status{font-weight:700;color:#fff;padding:0 .4rem;border-radius:4px}
.plots{display:flex;flex-wrap:wrap;gap:1rem}
.plots figure{margin:0;flex:1 1 460px}
.muted{color:#666}
.breach{color:#8e0000;font-weight:700}
.risk{color:#a66f00}
"""


def _section_html(audit: Audit) -> list[str]:
    parts: list[str] = []
    for section in audit.sections:
        status = section.status
        parts.append(
            f'<section id="{escape(section.criterion)}"><h2>{escape(CRITERION_TITLES[section.criterion])}: '
            f'<span class="status {status.replace(" ", "")}">{escape(status)}</span></h2>'
            f'<p class="muted">{escape(CRITERION_QUESTIONS[section.criterion])}</p>'
        )
        if not section.certificates and not section.findings:
            parts.append("<p>No verifier or attack assesses this criterion for this kind of release.</p></section>")
            continue
        parts.append("<table><tr><th>source</th><th>result</th><th>detail</th></tr>")
        for verifier, cert in section.certificates:
            detail = (
                short_json(cert.witness, 600)
                if cert.witness
                else f"{cert.units} units, engine {cert.engine}, {cert.seconds:.2f} s"
            )
            parts.append(
                f"<tr><td>{escape(verifier)}: "
                f"{escape(cert.guarantee)}</td><td>{escape(certificate_status(cert.holds))}</td>"
                f"<td><code>{escape(detail)}</code></td></tr>"
            )
        for attack, finding in section.findings:
            f = redact(finding, audit.include_examples)
            parts.append(
                f'<tr><td>{escape(attack)}</td><td class="{escape(f.severity)}">{escape(f.severity)}</td>'
                f"<td>{escape(f.title)}<br><code>{escape(short_json(f.evidence, 600))}</code></td></tr>"
            )
        parts.append("</table></section>")
    return parts


def render_html(audit: Audit) -> str:
    release = audit.release
    prov = release.provenance
    match = (
        ""
        if audit.input_matches is None
        else (" — matches the given original" if audit.input_matches else " — DOES NOT MATCH the given original")
    )
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>privtool audit: {escape(audit.verdict)}</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>Privacy audit</h1>",
        f'<p><span id="verdict" class="verdict {audit.verdict}">Verdict: {escape(audit.verdict)}</span></p>',
        f"<p>Release <code>{escape(audit.release_path)}</code> ({escape(release.kind)}), "
        f"SHA-256 <code>{escape(audit.release_sha256)}</code></p>",
        *_section_html(audit),
        '<h2>Plots</h2><div class="plots">',
        f"<figure>{release_shape_svg(audit)}</figure>",
        f"<figure>{results_svg(audit)}</figure>",
        "</div>",
    ]
    if audit.metrics:
        parts.append("<h2>Utility and risk metrics</h2><table><tr><th>metric</th><th>value</th></tr>")
        for metric, values in audit.metrics.items():
            for key, value in values.items():
                if not key.endswith("_detail"):
                    parts.append(f"<tr><td>{escape(metric)}.{escape(key)}</td><td>{escape(_number(value))}</td></tr>")
        parts.append("</table>")
    if audit.skipped_metrics:
        parts.append(
            "<p class='muted'>Skipped metrics: "
            + escape(", ".join(f"{k} ({v})" for k, v in audit.skipped_metrics.items()))
            + "</p>"
        )
    parts.append("<h2>Parameters</h2><table><tr><th>parameter</th><th>value</th></tr>")
    for key, value in release.params.items():
        parts.append(f"<tr><td>{escape(str(key))}</td><td><code>{escape(short_json(value, 2000))}</code></td></tr>")
    parts.append("</table><h2>Provenance</h2><table>")
    rows = [
        ("privtool", prov.get("privtool", "unknown")),
        ("plugins", ", ".join(f"{k} {v}" for k, v in prov.get("plugins", {}).items())),
        ("input SHA-256", f"{prov.get('input_sha256', 'unknown')}{match}"),
        ("release SHA-256", audit.release_sha256),
        ("seed", prov.get("seed", "unknown")),
        ("audited by", f"privtool {audit.privtool_version} in {audit.seconds:.2f} s"),
    ]
    parts += [f"<tr><th>{escape(k)}</th><td><code>{escape(str(v))}</code></td></tr>" for k, v in rows]
    parts.append("</table>")
    if audit.reproduce:
        parts.append(f"<h2>Reproduce</h2><pre>{escape(audit.reproduce)}</pre>")
    parts.append("</body></html>\n")
    return "\n".join(parts)
