"""``privtool sanitize RELEASE --sanitizer NAME -o OUT.json``: apply sanitizers to a
release that already exists (for instance ``safe-disassociation`` to a
disassociated release).

Parameters of each sanitizer come from the free arguments (``--k 5``), from
``--config FILE.toml``, then from the release's own ``params`` (so ``k``, ``m``
and ``max_cluster_size`` default to the values the release was made with), then
from their defaults. ``--trail`` reads the release's private trail (it must
belong to RELEASE) and ``--trail-out`` writes the sanitized release's trail.
"""

from __future__ import annotations

import click

from ..components import Outcome
from ..errors import InputError, ParameterError
from ..outputs import check_outputs
from ..params import merge_specs, resolve
from ..pipeline import apply_sanitizers, stamp, taking_part, write_outcome
from ..trail import Trail, read_trail
from .common import (
    RunSettings,
    app,
    load_config,
    parse_component_options,
    read_command_release,
    run_options,
    running,
    stderr_console,
)


@click.command("sanitize", context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("release_path", metavar="RELEASE")
@click.option("--sanitizer", "sanitizers", multiple=True, help="A sanitizer to apply (repeatable, in order).")
@click.option("-o", "--output", default=None, metavar="OUT.json", help="Where to write the sanitized release.")
@click.option("--trail", default=None, metavar="TRAIL.json", help="The private audit trail of RELEASE.")
@click.option("--trail-out", default=None, metavar="NEW_TRAIL.json", help="Write the trail of the sanitized release.")
@click.option(
    "--config", default=None, metavar="FILE.toml", help="Parameters from a TOML file (command-line options win)."
)
@run_options
@click.pass_context
def command(
    ctx: click.Context,
    release_path: str,
    sanitizers: tuple[str, ...],
    output: str | None,
    trail: str | None,
    trail_out: str | None,
    config: str | None,
    run: RunSettings,
) -> int:
    """Apply sanitizers to RELEASE and write the result."""
    registry = app(ctx).registry
    if not sanitizers:
        raise ParameterError("sanitize needs at least one --sanitizer (see privtool anonymize --list).")
    if output is None:
        raise ParameterError("sanitize needs -o OUT.json.")
    inputs = {"RELEASE": release_path, "--trail": trail, "--config": config}
    check_outputs({"-o": output, "--trail-out": trail_out}, inputs)
    chain = [registry.get("sanitizer", name) for name in sanitizers]
    spec = merge_specs(s.params for s in chain)
    release = read_command_release(release_path)
    if trail is not None:
        old_trail = read_trail(trail)
        if old_trail.release_sha256 and old_trail.release_sha256 != release.source_sha256:
            raise InputError(f"this trail belongs to another release, not to {release_path}", path=trail)
    else:  # a release written before the input SHA-256 moved to the trail still states it
        old_trail = Trail(input_sha256=str(release.provenance.get("input_sha256", "")))
    names = {p.name for p in spec}
    from_release = {k: v for k, v in release.params.items() if k in names}
    options = {**from_release, **load_config(config), **parse_component_options(ctx.args, spec, "sanitize")}
    values = resolve(spec, options, f"sanitizer {', '.join(sanitizers)}")
    with running(run) as run_ctx:
        outcome = apply_sanitizers(registry, Outcome(release, old_trail), chain, values, run_ctx)
    plugins = taking_part(registry, chain, earlier=release.provenance.get("plugins"))
    input_sha = old_trail.input_sha256 or str(release.provenance.get("input_sha256", ""))
    outcome = stamp(registry, outcome, plugins, input_sha, run.seed, chain[-1], None)
    write_outcome(outcome, output, trail_out)
    if not run.quiet:
        stats = outcome.release.stats
        stderr_console().print(f"wrote {output} ({', '.join(f'{k}={v}' for k, v in stats.items())})")
    return 0
