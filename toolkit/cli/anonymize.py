"""``privtool anonymize DATA --method NAME -o RELEASE.json``: run any registered method.

A chained method's stages are chosen by name among the registered components
of their kind (``--partitioner balanced --refiner none`` for disassociation).
Options of the method, of its chosen stages and of each ``--sanitizer`` are
taken from the free arguments (``--k 5 --max-cluster-size 30``), from
``--config FILE.toml``, and from their defaults, in that order of precedence.
"""

from __future__ import annotations

import click

from ..errors import ParameterError
from ..io import read_dataset
from ..outputs import check_outputs
from ..pipeline import method_chain, run_chain, stage_param, write_outcome
from ..registry import Registry
from .common import (
    RunSettings,
    app,
    describe_params,
    load_config,
    options_and_format_options,
    peek_options,
    run_options,
    running,
    stderr_console,
)

LISTED_KINDS = ("anonymizer", "partitioner", "vertical_chunker", "refiner", "sanitizer")
"""What ``--list`` shows: the methods, every component a method's stage can use, the sanitizers."""


def list_components(registry: Registry) -> None:
    """Every method with its stages and options, then every stage component and sanitizer."""
    for kind in LISTED_KINDS:
        for component in registry.all(kind):
            click.echo(f"{kind.replace('_', ' ')} {component.name}: {component.summary}")
            stages = [stage_param(registry, stage) for stage in getattr(component, "stages", ())]
            if stages:
                click.echo(describe_params(stages))
            click.echo(describe_params(component.params))


@click.command(
    "anonymize",
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    epilog="Run `privtool anonymize --list` to see every method and its options.",
)
@click.argument("data", required=False)
@click.option("--method", default=None, help="The anonymizer to run (see --list).")
@click.option(
    "--sanitizer", "sanitizers", multiple=True, help="A sanitizer applied to the release (repeatable, in order)."
)
@click.option("--format", "fmt", default=None, help="Input format (default: from the extension).")
@click.option("-o", "--output", default=None, metavar="RELEASE.json", help="Where to write the release.")
@click.option(
    "--trail", default=None, metavar="TRAIL.json", help="Also write the private audit trail (never publish it)."
)
@click.option(
    "--config", default=None, metavar="FILE.toml", help="Parameters from a TOML file (command-line options win)."
)
@click.option(
    "--list",
    "list_methods",
    is_flag=True,
    help="List the methods, the components their stages can use and the sanitizers, with their options.",
)
@run_options
@click.pass_context
def command(
    ctx: click.Context,
    data: str | None,
    method: str | None,
    sanitizers: tuple[str, ...],
    fmt: str | None,
    output: str | None,
    trail: str | None,
    config: str | None,
    list_methods: bool,
    run: RunSettings,
) -> int:
    """Anonymize DATA with a method (and optional sanitizers) into a release."""
    registry = app(ctx).registry
    if list_methods:
        list_components(registry)
        return 0
    settings = load_config(config)
    method = method or settings.pop("method", None)
    settings.pop("method", None)
    if not sanitizers and "sanitizer" in settings:
        configured = settings.pop("sanitizer")
        sanitizers = tuple([configured] if isinstance(configured, str) else configured)
    settings.pop("sanitizer", None)
    if data is None:
        raise ParameterError("anonymize needs a DATA file.")
    if method is None:
        raise ParameterError("anonymize needs --method (see privtool anonymize --list).")
    if output is None:
        raise ParameterError("anonymize needs -o RELEASE.json.")
    check_outputs({"-o": output, "--trail": trail}, {"DATA": data, "--config": config})
    stages = [stage.name for stage in registry.get("anonymizer", method).stages]
    chain = method_chain(registry, method, sanitizers, {**settings, **peek_options(ctx.args, stages)})
    given, read_options = options_and_format_options(registry, data, fmt, ctx.args, chain.spec, chain.owner)
    options = {**settings, **given}
    dataset = read_dataset(registry, data, fmt, read_options)
    with running(run) as run_ctx:
        outcome = run_chain(chain, registry, dataset, options, run_ctx)
    write_outcome(outcome, output, trail)
    if not run.quiet:
        stats = outcome.release.stats
        stderr_console().print(
            f"wrote {output} ({outcome.release.kind}; {', '.join(f'{k}={v}' for k, v in stats.items())})"
        )
    return 0
