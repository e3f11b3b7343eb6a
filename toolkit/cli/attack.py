"""``privtool attack RELEASE``: what an adversary can learn from a release.

Runs every attack that applies to the release kind (or the ``--attack`` ones),
prints the findings with severity and evidence, and exits 1 when any finding
breaks the release's stated guarantee.
"""

from __future__ import annotations

import json

import click
from rich.table import Table

from ..assess import run_attacks
from ..errors import EXIT_GUARANTEE_FAILED
from ..params import merge_specs
from ..release import read_release
from .common import (
    RunSettings,
    app,
    echo_json,
    load_evidence,
    options_and_format_options,
    run_options,
    running,
    stdout_console,
)

SEVERITY_STYLE = {"breach": "bold red", "risk": "yellow", "info": "dim"}


@click.command("attack", context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("release_path", metavar="RELEASE")
@click.option("--original", default=None, metavar="DATA", help="The original dataset (targets come from it).")
@click.option("--format", "fmt", default=None, help="Format of --original (default: from the extension).")
@click.option("--trail", default=None, metavar="TRAIL.json", help="The private audit trail of the release.")
@click.option("--attack", "attacks", multiple=True, help="Run only this attack (repeatable).")
@click.option(
    "--known", type=click.IntRange(min=1), default=None, help="Items the adversary knows (default: the release's m)."
)
@click.option(
    "--targets",
    type=click.IntRange(min=1),
    default=None,
    help="Attack a seeded sample of this many targets (default: all).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option(
    "--max-rows", type=click.IntRange(min=1), default=30, show_default=True, help="Findings shown in the table."
)
@run_options
@click.pass_context
def command(
    ctx: click.Context,
    release_path: str,
    original: str | None,
    fmt: str | None,
    trail: str | None,
    attacks: tuple[str, ...],
    known: int | None,
    targets: int | None,
    as_json: bool,
    max_rows: int,
    run: RunSettings,
) -> int:
    """Attack RELEASE as an adversary would; exit 1 if a finding breaks its guarantee."""
    registry = app(ctx).registry
    release = read_release(release_path)
    spec = merge_specs(registry.get("attack", n).params for n in (attacks or registry.names("attack")))
    options, read_options = options_and_format_options(registry, original, fmt, ctx.args, spec, "attack")
    evidence = load_evidence(registry, original, fmt, trail, read_options)
    if known is not None:
        options["known"] = known
    if targets is not None:
        options["targets"] = targets
    options = {k: v for k, v in options.items() if k in {p.name for p in spec}}
    with running(run, progress=not as_json) as run_ctx:
        runs = run_attacks(registry, release, evidence, attacks, options, run_ctx)
    breaches = sum(run.breaches for run in runs)
    if as_json:
        echo_json(
            {
                "release": release_path,
                "kind": release.kind,
                "breaches": breaches,
                "attacks": [
                    {
                        "attack": r.attack,
                        "params": r.params,
                        "seconds": round(r.seconds, 3),
                        "findings": [f.to_json() for f in r.findings],
                    }
                    for r in runs
                ],
            }
        )
    else:
        console = stdout_console()
        if not runs:
            console.print(f"No attack applies to this {release.kind} release.")
        for attack_run in runs:
            table = Table(
                title=f"attack {attack_run.attack} ({len(attack_run.findings)} findings, {attack_run.seconds:.2f} s)"
            )
            for column in ("severity", "finding", "evidence"):
                table.add_column(column, overflow="fold")
            ranked = sorted(attack_run.findings, key=lambda f: ("breach", "risk", "info").index(f.severity))
            for finding in ranked[:max_rows]:
                table.add_row(
                    f"[{SEVERITY_STYLE[finding.severity]}]{finding.severity}[/]",
                    finding.title,
                    json.dumps(finding.evidence, ensure_ascii=False)[:300],
                )
            if len(attack_run.findings) > max_rows:
                table.caption = f"{len(attack_run.findings) - max_rows} more findings: use --json to see all"
            console.print(table)
        verdict = "[bold red]BREACHED[/]" if breaches else "[bold green]no breach[/]"
        console.print(f"Verdict: {verdict} ({breaches} findings break the stated guarantee)")
    return EXIT_GUARANTEE_FAILED if breaches else 0
