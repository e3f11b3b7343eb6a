"""``privtool verify RELEASE``: a certificate per guarantee; exit 0 when every
claimed guarantee holds, 1 otherwise, 2 on bad input (docs/commands/verify.md)."""

from __future__ import annotations

import json

import click
from rich.table import Table

from ..components import Evidence
from ..errors import EXIT_GUARANTEE_FAILED, ParameterError
from ..io import file_sha256, read_dataset
from ..release import read_release
from ..results import Certificate
from ..trail import read_trail
from .common import (
    FORMAT_ARGS,
    RunSettings,
    app,
    echo_json,
    options_and_format_options,
    run_options,
    running,
    stdout_console,
)

ENGINES = ("auto", "cpsat", "enum", "both")


def _status(certificate: Certificate) -> str:
    if certificate.holds is None:
        return "[yellow]not claimed[/yellow]" if certificate.details.get("claimed") is False else "not checked"
    if certificate.holds:
        return "[green]holds[/green]"
    return "[bold red]FAILS[/bold red]"


def _short(obj: object, limit: int = 90) -> str:
    text = "" if obj is None else json.dumps(obj, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
    as_json: bool,
    run: RunSettings,
) -> int:
    """Prove or refute every guarantee of RELEASE (trusting nothing the anonymizer says)."""
    from ..verify.runner import failed, verify_release

    registry = app(ctx).registry
    if k is not None and k < 2:
        raise ParameterError(f"--k must be at least 2, not {k}.")
    if m is not None and m < 1:
        raise ParameterError(f"--m must be at least 1, not {m}.")
    published = read_release(release)
    _, read_options = options_and_format_options(registry, original, fmt, ctx.args, (), "verify")
    dataset = read_dataset(registry, original, fmt, read_options) if original else None
    audit_trail = read_trail(trail) if trail else None
    release_sha = file_sha256(release)  # = Release.sha256() for a file written by privtool (canonical)
    original_sha = dataset.content_sha256() if dataset is not None else None
    evidence = Evidence(
        original=dataset, trail=audit_trail, extra={"release_sha256": release_sha, "original_sha256": original_sha}
    )
    with running(run, progress=not as_json) as run_ctx:
        certificates = verify_release(registry, published, evidence, run_ctx, k, m, engine, only)
    bad = failed(certificates)
    if as_json:
        echo_json(
            {
                "release": release,
                "kind": published.kind,
                "release_sha256": release_sha,
                "input_sha256": published.provenance.get("input_sha256"),
                "original_sha256": original_sha,
                "holds": not bad,
                "certificates": [c.to_json() for c in certificates],
            }
        )
    else:
        console = stdout_console()
        table = Table(title=f"{release} ({published.kind})")
        for column in ("guarantee", "status", "engine", "units", "seconds", "witness / reason"):
            table.add_column(column, justify="right" if column in ("units", "seconds") else "left")
        for c in certificates:
            table.add_row(
                c.guarantee,
                _status(c),
                c.engine,
                f"{c.units:,}",
                f"{c.seconds:.3f}",
                _short(c.witness if c.witness is not None else c.details.get("reason")),
            )
        console.print(table)
        if any(c.holds is None and c.witness is not None for c in certificates):
            console.print("(a guarantee that is not claimed is reported with what was found; it does not fail the run)")
        console.print(f"release SHA-256 {release_sha}")
        console.print(
            f"input SHA-256   {published.provenance.get('input_sha256') or '(not stated)'}"
            + (f"; original {original_sha}" if original_sha else "")
        )
        for c in certificates:
            if c.details.get("engine_disagreements"):
                console.print(
                    f"[bold red]ENGINES DISAGREE on {c.guarantee}:[/bold red] "
                    f"{_short(c.details['engine_disagreements'], 300)}"
                )
        console.print(
            "[green]every claimed guarantee holds[/green]"
            if not bad
            else f"[bold red]{len(bad)} guarantee(s) fail[/bold red]"
        )
    return EXIT_GUARANTEE_FAILED if bad else 0
