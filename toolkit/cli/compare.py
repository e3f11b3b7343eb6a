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

from ..compare.methods import check as check_spec
from ..compare.methods import declared
from ..compare.report import write_outputs
from ..compare.runner import grid, load_cell, run_cell
from ..compare.spec import parse_spec
from ..context import Context, SeedSplitter, SilentProgress
from ..dataset import Dataset
from ..errors import EXIT_INTERNAL, ParameterError
from ..executors import make_executor
from .common import FORMAT_ARGS, FORMAT_EPILOG, RunSettings, app, read_data_argument, run_options, stderr_console


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
            {True: "[green]yes[/]", False: "[red]NO[/]"}.get(row["verified"], "") if "verified" in row else "",
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
    labels = [s.label for s in specs]
    if len(set(labels)) != len(labels):
        raise ParameterError("two --method specs have the same label; name them LABEL=SPEC.")
    for name in metrics:
        registry.get("metric", name)
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
    for spec in specs:
        check_spec(registry, spec, axes)
    known = {p.name for spec in specs for p in declared(registry, spec)}
    for name in axes:
        if name not in known:
            option = {"k": "--k", "m": "--m"}.get(name, f"--grid {name}")
            raise ParameterError(f"{option}: no --method takes a parameter {name!r}.")
    out_dir = Path(output)
    if out_dir.exists() and not out_dir.is_dir():
        raise ParameterError(f"-o {output} exists and is not a folder.")
    for sub in ("cells", "releases", "trails", "plots"):
        (out_dir / sub).mkdir(parents=True, exist_ok=True)
    dataset = read_data_argument(ctx, data, fmt)
    if sample is not None and sample < dataset.n_records:
        dataset = sample_records(dataset, sample, run.seed)
    input_sha = dataset.content_sha256()
    cells = grid(specs, axes, repeat, run.seed)
    meta = {
        "data": data,
        "sample": sample,
        "records": dataset.n_records,
        "input_sha256": input_sha,
        "command": shlex.join(["privtool", *sys.argv[1:]]) if sys.argv else "",
        "verified": not no_verify,
        "metrics": list(metrics) or "all that apply",
    }
    status: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    run_executor = make_executor(run.executor, run.workers, run.scheduler)
    try:
        live_view = (
            nullcontext()
            if run.quiet
            else Live(_live_table(status, list(axes)), console=stderr_console(), refresh_per_second=4)
        )
        with live_view as live:
            for cell in cells:
                key = cell.key(input_sha, (not no_verify, *metrics))
                entry = {"method": cell.spec.label, **dict(cell.point), "repeat": cell.repeat, "status": "running"}
                status.append(entry)
                if live is not None:
                    live.update(_live_table(status, list(axes)))
                row = load_cell(out_dir, key)
                if row is None:
                    run_ctx = Context(seed=cell.seed, executor=run_executor, progress=SilentProgress())
                    row = run_cell(registry, dataset, cell, out_dir, run_ctx, verify=not no_verify, metrics=metrics)
                    entry["status"] = "failed" if row.get("failures") else "no solution" if row.get("error") else "done"
                else:
                    entry["status"] = "resumed"
                entry.update(seconds=row.get("seconds"), verified=row.get("verified"))
                rows.append(row)
                if live is not None:
                    live.update(_live_table(status, list(axes)))
    finally:
        run_executor.close()
    write_outputs(out_dir, meta, rows, list(axes))
    if not run.quiet:
        stderr_console().print(
            f"{len(rows)} runs; results in {out_dir}/results.csv, index.html and plots/", markup=False
        )
    failed = [row["failures"] for row in rows if row.get("failures")]
    for sentences in failed:
        click.echo(f"privtool: error: {sentences}", err=True)
    return EXIT_INTERNAL if failed else 0
