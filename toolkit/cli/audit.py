"""``privtool audit RELEASE``: a compliance report with a verdict first.

The assessment engine with its widest scope (docs/commands/audit.md). Exit 0
when every claim holds and no attack breaches one (verdict PASS), 1 on FAIL or
INCOMPLETE (so it can gate a publishing pipeline), 2 on bad input: the same
verdict as ``verify`` and ``attack``.
"""

from __future__ import annotations

import click

from ..assess import select
from ..audit import build_audit
from ..audit.render import render_terminal
from ..audit.reports import report_format as report_format_for
from ..audit.reports import write_report
from ..outputs import check_outputs
from ..params import merge_specs
from .common import (
    RunSettings,
    app,
    load_evidence,
    options_and_format_options,
    read_command_release,
    report_failures,
    run_options,
    running,
    stderr_console,
    stdout_console,
    time_limit_option,
)


@click.command("audit", context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("release_path", metavar="RELEASE")
@click.option(
    "--original",
    default=None,
    metavar="DATA",
    help="The original dataset (enables faithfulness checks and linkage attacks).",
)
@click.option("--data-format", "data_format", default=None, help="Format of --original (default: from the extension).")
@click.option("--trail", default=None, metavar="TRAIL.json", help="The private audit trail of the release.")
@click.option(
    "--format",
    "report_format",
    type=click.Choice(["terminal", "json", "md", "html"]),
    default=None,
    help="Report format (default: from the extension of -o: .html/.htm, .md, .json; without -o, the terminal).",
)
@click.option(
    "-o",
    "--output",
    default=None,
    metavar="REPORT",
    help="Where to write the report (required for --format json, md and html).",
)
@click.option(
    "--include-examples",
    is_flag=True,
    help="Include original records in the evidence (never do this for a report you publish).",
)
@time_limit_option
@click.option("--attack", "attacks", multiple=True, help="Run only this attack (repeatable; default: all that apply).")
@click.option(
    "--metric", "metrics", multiple=True, help="Compute only this metric (repeatable; default: all that apply)."
)
@run_options
@click.pass_context
def command(
    ctx: click.Context,
    release_path: str,
    original: str | None,
    data_format: str | None,
    trail: str | None,
    report_format: str | None,
    output: str | None,
    include_examples: bool,
    attacks: tuple[str, ...],
    metrics: tuple[str, ...],
    time_limit: float,
    run: RunSettings,
) -> int:
    """Verify, attack and measure RELEASE, and write a compliance report."""
    report_format = report_format_for(output, report_format)
    check_outputs({"-o": output}, {"RELEASE": release_path, "--original": original, "--trail": trail})
    registry = app(ctx).registry
    release = read_command_release(release_path)
    components = [
        *select(registry, "verifier", release, ()),
        *select(registry, "attack", release, attacks),
        *select(registry, "metric", release, metrics),
    ]
    spec = merge_specs(c.params for c in components)
    options, read_options = options_and_format_options(registry, original, data_format, ctx.args, spec, "audit")
    evidence = load_evidence(registry, original, data_format, trail, read_options)
    with running(run) as run_ctx:
        audit = build_audit(
            registry,
            release,
            release_path,
            release.source_sha256,
            evidence,
            options,
            run_ctx,
            include_examples,
            attacks,
            metrics,
            time_limit or None,
        )
    if output is None:  # report_format_for: the terminal report, and only it, goes without -o
        render_terminal(audit, stdout_console())
    else:
        write_report(audit, output, report_format)
        if not run.quiet:
            stderr_console().print(f"Verdict: {audit.verdict}. Report written to {output}", markup=False)
    report_failures(ctx, audit.assessment.failures)
    return audit.assessment.exit_code
