"""``privtool metrics RELEASE [--original DATA] [--metric NAME ...]``: utility and
risk figures of a release from every registered metric that applies to it.

Metric options are free ``--name value`` arguments (``--top-k 50``), as for
``anonymize``; ``--samples`` sets the number of sampled reconstructions of every
metric that averages over them. A metric that needs evidence that was not given
is listed as skipped with the reason, unless it was named with ``--metric``
(then the command fails with that reason, exit 2).
"""

from __future__ import annotations

from typing import Any

import click
from rich.table import Table

from ..assess import MetricResult, measure, select
from ..errors import EXIT_INTERNAL, ParameterError
from ..params import merge_specs
from .common import (
    RunSettings,
    app,
    describe_params,
    echo_json,
    load_evidence,
    options_and_format_options,
    read_command_release,
    report_failures,
    run_options,
    running,
    stdout_console,
)


@click.command(
    "metrics",
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    epilog="Run `privtool metrics --list` to see every metric and its options.",
)
@click.argument("release", required=False)
@click.option("--original", default=None, metavar="DATA", help="The original dataset (needed by metrics that compare).")
@click.option("--format", "fmt", default=None, help="Format of --original (default: from the extension).")
@click.option("--trail", default=None, metavar="TRAIL.json", help="The private audit trail of the release.")
@click.option("--metric", "names", multiple=True, metavar="NAME", help="Compute only this metric (repeatable).")
@click.option(
    "--samples",
    type=click.IntRange(min=1),
    default=None,
    help="Reconstructions sampled per metric (default: each metric's own).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option("--list", "list_metrics", is_flag=True, help="List the metrics with their options.")
@run_options
@click.pass_context
def command(
    ctx: click.Context,
    release: str | None,
    original: str | None,
    fmt: str | None,
    trail: str | None,
    names: tuple[str, ...],
    samples: int | None,
    as_json: bool,
    list_metrics: bool,
    run: RunSettings,
) -> int:
    """Utility and risk metrics of RELEASE."""
    registry = app(ctx).registry
    if list_metrics:
        for metric in registry.all("metric"):
            needs = f"; needs {', '.join(metric.needs)}" if metric.needs else ""
            click.echo(f"metric {metric.name} ({', '.join(metric.applies_to)}{needs}): {metric.summary}")
            click.echo(describe_params(metric.params))
        return 0
    if release is None:
        raise ParameterError("metrics needs a RELEASE file.")
    published = read_command_release(release)
    metrics = select(registry, "metric", published, names)
    spec = merge_specs(m.params for m in metrics)
    options, read_options = options_and_format_options(registry, original, fmt, ctx.args, spec, "privtool metrics")
    if samples is not None:
        options["samples"] = samples
    evidence = load_evidence(registry, original, fmt, trail, read_options)
    with running(run, progress=not as_json) as run_ctx:
        results = measure(registry, published, evidence, names, options, run_ctx)
    if as_json:
        echo_json(
            {"release": release, "kind": published.kind, "seed": run.seed, "metrics": [r.to_json() for r in results]}
        )
    else:
        _print_table(release, results)
    failures = [r.failure for r in results if r.failure is not None]
    report_failures(ctx, failures)
    return EXIT_INTERNAL if failures else 0


def _format(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def _print_table(release: str, results: list[MetricResult]) -> None:
    table = Table(title=f"metrics of {release}")
    table.add_column("metric")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for result in results:
        if result.status in ("skipped", "error"):
            table.add_row(result.name, result.status, result.reason)
            continue
        for key, value in result.values.items():
            if not key.endswith("_detail"):
                table.add_row(result.name, key, _format(value))
    if not results:
        table.add_row("-", "no metric applies to this release", "")
    stdout_console().print(table)
