"""``privtool compare DATA --method SPEC ... -o DIR``: methods side by side."""

from __future__ import annotations

import shlex
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import click
import numpy as np
from rich.live import Live
from rich.table import Table
from rich.text import Text

from ..comparison.runner import Cell
from ..comparison.session import check_comparison, prepare_folder, run_comparison
from ..comparison.spec import parse_spec
from ..context import SeedSplitter
from ..dataset import Dataset
from ..errors import EXIT_INTERNAL, ParameterError
from ..outputs import inside
from .common import (
    FORMAT_ARGS,
    FORMAT_EPILOG,
    RunSettings,
    app,
    read_data_argument,
    run_options,
    stderr_console,
    styled,
)


def _value(text: str) -> Any:
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return text


def _axis(option: str, text: str) -> list[Any]:
    values = [_value(v.strip()) for v in text.split(",") if v.strip()]
    if not values:
        raise ParameterError(f"{option} needs at least one value.")
    return values


def _live_table(rows: list[dict[str, Any]], axes: list[str]) -> Table:
    table = Table(title="privtool compare")
    for column in ("method", *axes, "repeat", "status", "seconds", "verified"):
        table.add_column(column)
    for row in rows[-40:]:
        table.add_row(
            str(row["method"]),
            *(str(row.get(a, "")) for a in axes),
            str(row["repeat"]),
            row["status"],
            f"{row['seconds']:.2f}" if isinstance(row.get("seconds"), (int, float)) else "",
            {True: styled("yes", "green"), False: styled("NO", "red")}.get(row["verified"], Text(""))
            if "verified" in row
            else Text(""),
        )
    return table


def sample_records(dataset: Dataset, n: int, seed: int) -> Dataset:
    """``n`` records drawn uniformly without replacement (``rng("compare-sample", n)``
    of ``seed``), in file order, over the labels they use."""
    picked = SeedSplitter(seed).rng("compare-sample", n).choice(dataset.n_records, n, replace=False)
    return dataset.subset(np.sort(picked)).compact()


@click.command("compare", context_settings=FORMAT_ARGS, epilog=FORMAT_EPILOG)
@click.argument("data")
@click.option(
    "--method",
    "methods",
    multiple=True,
    required=True,
    metavar="SPEC",
    help="[LABEL=]METHOD[:OPT=V,...][+SANITIZER...] (repeatable).",
)
@click.option("--k", "ks", default=None, metavar="K1,K2,...", help="Values of k to sweep.")
@click.option("--m", "ms", default=None, metavar="M1,M2,...", help="Values of m to sweep.")
@click.option("--grid", "grids", multiple=True, metavar="NAME=V1,V2", help="Any other parameter to sweep (repeatable).")
@click.option(
    "--repeat",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Runs per cell, with seeds seed, seed+1, ...",
)
@click.option("--format", "fmt", default=None, help="Input format (default: from the extension).")
@click.option(
    "--sample",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Run on N records of DATA drawn with the seed (kept in file order).",
)
@click.option(
    "-o", "--output", required=True, metavar="DIR", help="Output folder (created; finished cells in it are reused)."
)
@click.option("--no-verify", is_flag=True, help="Skip verification (faster; the results say so).")
@click.option(
    "--metric",
    "metrics",
    multiple=True,
    help="Compute only this metric (repeatable; default: every metric that applies).",
)
@run_options
@click.pass_context
def command(
    ctx: click.Context,
    data: str,
    methods: tuple[str, ...],
    ks: str | None,
    ms: str | None,
    grids: tuple[str, ...],
    repeat: int,
    fmt: str | None,
    sample: int | None,
    output: str,
    no_verify: bool,
    metrics: tuple[str, ...],
    run: RunSettings,
) -> int:
    """Run each method on DATA over a grid, verify and measure every release, and
    write results.csv, results.json, plots and index.html to DIR (resumable)."""
    registry = app(ctx).registry
    specs = [parse_spec(m) for m in methods]
    axes: dict[str, list[Any]] = {}
    if ks:
        axes["k"] = _axis("--k", ks)
    if ms:
        axes["m"] = _axis("--m", ms)
    for item in grids:
        name, eq, values = item.partition("=")
        if not eq or not name:
            raise ParameterError(f"--grid expects NAME=V1,V2, got {item!r}.")
        axes[name.replace("-", "_")] = _axis(f"--grid {name}", values)
    check_comparison(registry, specs, axes, metrics)
    out_dir = Path(output)
    if inside(data, out_dir):
        raise ParameterError(f"DATA {data} lies in the output folder -o {output}, which compare fills; move one.")
    prepare_folder(out_dir)
    dataset = read_data_argument(ctx, data, fmt)
    if sample is not None and sample < dataset.n_records:
        dataset = sample_records(dataset, sample, run.seed)
    meta = {
        "data": data,
        "sample": sample,
        "command": shlex.join(["privtool", *sys.argv[1:]]) if sys.argv else "",
    }
    status: list[dict[str, Any]] = []
    live_view = (
        nullcontext()
        if run.quiet
        else Live(_live_table(status, list(axes)), console=stderr_console(), refresh_per_second=4)
    )
    with live_view as live:

        def show(cell: Cell, state: str, row: dict[str, Any] | None) -> None:
            if state == "running":
                status.append({"method": cell.spec.label, **dict(cell.point), "repeat": cell.repeat})
            status[-1]["status"] = state
            if row is not None:
                status[-1].update(seconds=row.get("seconds"), verified=row.get("verified"))
            if live is not None:
                live.update(_live_table(status, list(axes)))

        rows = run_comparison(
            registry, dataset, specs, axes, out_dir, run.executor, repeat=repeat, seed=run.seed,
            verify=not no_verify, metrics=metrics, meta=meta, on_cell=show,
        )  # fmt: skip
    if not run.quiet:
        stderr_console().print(
            f"{len(rows)} runs; results in {out_dir}/results.csv, index.html and plots/", markup=False
        )
    failed = [row["failures"] for row in rows if row.get("failures")]
    for sentences in failed:
        click.echo(f"privtool: error: {sentences}", err=True)
    return EXIT_INTERNAL if failed else 0
