"""``privtool convert IN OUT``: rewrite a dataset in another format or compression."""

from __future__ import annotations

from pathlib import Path

import click

from ..io import check_output, check_readable, read_dataset, write_dataset
from ..outputs import check_outputs
from .common import app, two_format_options


@click.command(
    "convert",
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    epilog=(
        "Formats come from the extensions (data.csv.gz, data.long.csv, ...) unless --from/--to name them. "
        "Format options go after OUT: --delimiter applies to both sides, --in-delimiter/--out-delimiter to one."
    ),
)
@click.argument("source", metavar="IN")
@click.argument("target", metavar="OUT")
@click.option("--from", "from_fmt", default=None, metavar="FORMAT", help="Format of IN (default: from its extension).")
@click.option("--to", "to_fmt", default=None, metavar="FORMAT", help="Format of OUT (default: from its extension).")
@click.option("--quiet", "-q", is_flag=True, help="Do not report what was written.")
@click.pass_context
def command(ctx: click.Context, source: str, target: str, from_fmt: str | None, to_fmt: str | None, quiet: bool) -> int:
    """Convert the dataset IN to OUT (written atomically; .gz/.bz2/.xz compress)."""
    registry = app(ctx).registry
    check_readable(Path(source))
    check_output(Path(target))
    check_outputs({"OUT": target}, {"IN": source})
    (in_fmt, in_options), (out_fmt, out_options) = two_format_options(
        registry, (source, from_fmt), (target, to_fmt), ctx.args
    )
    dataset = read_dataset(registry, source, in_fmt, in_options)
    write_dataset(registry, dataset, target, out_fmt, out_options)
    if not quiet:
        click.echo(
            f"wrote {target} ({out_fmt}): {dataset.n_records:,} records, {int((dataset.supports > 0).sum()):,} items, "
            f"{dataset.n_occurrences:,} item occurrences",
            err=True,
        )
    return 0
