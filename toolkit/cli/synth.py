"""``privtool synth -o FILE``: synthetic basket data (IBM Quest style, :mod:`privtool.synth`)."""

from __future__ import annotations

from collections.abc import Iterator

import click

from ..dataset import Dataset
from ..io import write_dataset_blocks
from ..progress import RichProgress
from ..synth import PRESETS, SIZE_DISTRIBUTIONS, SynthSpec, generate
from .common import app, stderr_console


@click.command("synth")
@click.option(
    "-o",
    "--output",
    required=True,
    metavar="FILE",
    help="Where to write the data (format from the extension; .gz/.bz2/.xz compress).",
)
@click.option(
    "--like",
    type=click.Choice(sorted(PRESETS)),
    default=None,
    help="Start from a preset that imitates a real dataset; other options override it.",
)
@click.option("--records", type=int, default=None, help="Number of records [10000].")
@click.option("--items", type=int, default=None, help="Size of the item vocabulary [1000].")
@click.option("--avg-size", type=float, default=None, help="Target average record size [10].")
@click.option("--max-size", type=int, default=None, help="Largest record size [50].")
@click.option("--patterns", "n_patterns", type=int, default=None, help="Number of potentially large itemsets [2000].")
@click.option("--pattern-size", type=float, default=None, help="Average size of a potentially large itemset [4].")
@click.option(
    "--correlation",
    type=float,
    default=None,
    help="Mean fraction of a pattern's items taken from the previous pattern [0.5].",
)
@click.option("--corruption", type=float, default=None, help="Mean corruption level of a pattern [0.5].")
@click.option("--skew", type=float, default=None, help="Item popularity exponent: 0 uniform (Quest), 1 Zipf [1].")
@click.option(
    "--noise", type=float, default=None, help="Fraction of picks that are single popular-weighted items [0.05]."
)
@click.option(
    "--size-distribution",
    type=click.Choice(SIZE_DISTRIBUTIONS),
    default=None,
    help="Record sizes: poisson (Quest) or lognormal (heavy tail) [poisson].",
)
@click.option("--size-sigma", type=float, default=None, help="Spread of the lognormal record sizes [1].")
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Seed: the same options and seed give the same file."
)
@click.option("--format", "fmt", default=None, help="Output format (default: from the extension).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar or summary.")
@click.pass_context
def command(
    ctx: click.Context, output: str, like: str | None, seed: int, fmt: str | None, quiet: bool, **options: object
) -> int:
    """Write synthetic basket data with skewed item popularity and correlated itemsets."""
    spec = (PRESETS[like] if like else SynthSpec()).updated(**options)
    records = 0
    occurrences = 0
    with RichProgress(stderr_console(), enabled=not quiet) as progress:
        with progress.task("synthesising records", spec.records) as task:

            def blocks() -> Iterator[Dataset]:
                nonlocal records, occurrences
                for block in generate(spec, seed):
                    records += block.n_records
                    occurrences += block.n_occurrences
                    task.advance(block.n_records)
                    yield block

            write_dataset_blocks(app(ctx).registry, blocks(), output, fmt)
    if not quiet:
        stderr_console().print(f"wrote {output}: {records:,} records, {occurrences:,} item occurrences (seed {seed})")
    return 0
