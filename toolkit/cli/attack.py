"""``privtool attack RELEASE``: what an adversary can learn from a release.

The assessment engine with scope ``attack``: the release's claims are verified
and every attack that applies to the release kind (or the ``--attack`` ones)
runs; a finding is a breach only when it refutes a model the release claims
against the attack's adversary, a risk otherwise. The verdict and exit code are
``verify``'s, computed from the claims: 0 when every claim holds and none is
breached, 1 otherwise (docs/commands/attack.md).
"""

from __future__ import annotations

import click

from ..assess import ATTACK, assess
from ..assessment_tables import print_attack, print_claims, print_integrity, print_structure, print_verdict
from ..params import merge_specs
from .common import (
    RunSettings,
    app,
    echo_json,
    load_evidence,
    options_and_format_options,
    read_command_release,
    report_failures,
    run_options,
    running,
    stdout_console,
)


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
    """Attack RELEASE as an adversary would; exit 1 if a finding breaches a claim (or a claim does not hold)."""
    registry = app(ctx).registry
    release = read_command_release(release_path)
    spec = merge_specs(registry.get("attack", n).params for n in (attacks or registry.names("attack")))
    options, read_options = options_and_format_options(registry, original, fmt, ctx.args, spec, "attack")
    evidence = load_evidence(registry, original, fmt, trail, read_options)
    evidence.extra = {"release_sha256": release.source_sha256}  # read once: a FIFO works
    if known is not None:
        options["known"] = known
    if targets is not None:
        options["targets"] = targets
    options = {k: v for k, v in options.items() if k in {p.name for p in spec}}
    with running(run, progress=not as_json) as run_ctx:
        result = assess(registry, release, evidence, run_ctx, ATTACK, options=options, attacks=attacks)
    if as_json:
        echo_json({"release": release_path, "breaches": sum(r.breaches for r in result.attacks), **result.to_json()})
    else:
        console = stdout_console()
        for note in result.notes:
            console.print(note, markup=False)
        print_structure(console, result)
        print_claims(console, result)
        print_integrity(console, result)
        if not result.attacks and not result.structure:
            console.print(f"No attack applies to this {release.kind} release.")
        for attack_run in result.attacks:
            print_attack(console, attack_run, max_rows)
        print_verdict(console, result)
    report_failures(ctx, result.failures)
    return result.exit_code
