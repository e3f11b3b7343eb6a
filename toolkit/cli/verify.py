"""``privtool verify RELEASE``: check every claim of RELEASE with the verifiers
that prove it (the assessment engine, scope ``verify``); exit 0 when every
claim holds, 1 when one fails or is not verified (INCOMPLETE), 2 on bad input
(docs/commands/verify.md)."""

from __future__ import annotations

import click

from ..assess import VERIFY, assess, evidence_of
from ..assessment_tables import (
    print_claims,
    print_engine_disagreements,
    print_integrity,
    print_structure,
    print_verdict,
)
from ..audit.render import print_criteria
from ..errors import ParameterError
from ..io import read_dataset
from ..trail import read_trail
from .common import (
    FORMAT_ARGS,
    RunSettings,
    app,
    echo_json,
    options_and_format_options,
    read_command_release,
    report_failures,
    run_options,
    running,
    stdout_console,
    time_limit_option,
)

ENGINES = ("auto", "cpsat", "enum", "both")


@click.command(
    "verify",
    context_settings=FORMAT_ARGS,
    epilog="Options of --original's format go after RELEASE, e.g. `--original data.csv --delimiter ';'`.",
)
@click.argument("release")
@click.option(
    "--original",
    default=None,
    metavar="DATA",
    help="The original data, for faithfulness and removal/generalization checks.",
)
@click.option("--format", "fmt", default=None, help="Format of --original (default: from the extension).")
@click.option("--trail", default=None, metavar="TRAIL.json", help="The private audit trail written with the release.")
@click.option("--k", type=int, default=None, help="Check at this k instead of the release's stated one.")
@click.option("--m", type=int, default=None, help="Check at this m instead of the release's stated one.")
@click.option(
    "--engine",
    type=click.Choice(ENGINES),
    default="auto",
    show_default=True,
    help="cpsat, enum, both (cross-check) or auto (by chunk size).",
)
@time_limit_option
@click.option("--only", "only", multiple=True, metavar="NAME", help="Run only this verifier (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@run_options
@click.pass_context
def command(
    ctx: click.Context,
    release: str,
    original: str | None,
    fmt: str | None,
    trail: str | None,
    k: int | None,
    m: int | None,
    engine: str,
    only: tuple[str, ...],
    time_limit: float,
    as_json: bool,
    run: RunSettings,
) -> int:
    """Prove or refute every claim of RELEASE (trusting nothing the anonymizer says)."""
    registry = app(ctx).registry
    if k is not None and k < 2:
        raise ParameterError(f"--k must be at least 2, not {k}.")
    if m is not None and m < 1:
        raise ParameterError(f"--m must be at least 1, not {m}.")
    published = read_command_release(release)
    _, read_options = options_and_format_options(registry, original, fmt, ctx.args, (), "verify")
    dataset = read_dataset(registry, original, fmt, read_options) if original else None
    audit_trail = read_trail(trail) if trail else None
    release_sha = published.source_sha256  # of the bytes read (once: a FIFO works); canonical for privtool's files
    evidence = evidence_of(dataset, audit_trail, release_sha)
    original_sha = evidence.extra["original_sha256"]
    with running(run, progress=not as_json) as run_ctx:
        result = assess(
            registry,
            published,
            evidence,
            run_ctx,
            VERIFY,
            options={"engine": engine},
            overrides={"k": k, "m": m},
            time_limit=time_limit or None,
            only=only,
        )
    if as_json:
        certificates = [c for claim in result.claims for r in claim.runs for c in r.certificates]
        certificates += [c for r in result.integrity for c in r.certificates]
        echo_json(
            {
                "release": release,
                "original_sha256": original_sha,
                "holds": result.verdict == "PASS",
                **result.to_json(),
                "certificates": [c.to_json() for c in certificates],
            }
        )
    else:
        console = stdout_console()
        console.print(f"{release} ({published.kind})", markup=False)
        for note in result.notes:
            console.print(note, markup=False)
        print_structure(console, result)
        print_claims(console, result)
        if not result.structure:
            print_criteria(console, result)
        print_integrity(console, result)
        console.print(f"release SHA-256 {release_sha}", markup=False)
        console.print(
            f"input SHA-256   {result.input_sha256 or '(in the trail; not given)'}"
            + (f"; original {original_sha}" if original_sha else ""),
            markup=False,
        )
        print_engine_disagreements(console, result)
        print_verdict(console, result)
    report_failures(ctx, result.failures)
    return result.exit_code
