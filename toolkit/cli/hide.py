"""``privtool hide DATA (--rules RULES | --sensitive N) --min-support S --min-confidence C
--sanitizer NAME -o SANITIZED``.

Hides the sensitive rules of RULES (``a b => c`` lines or ids from ``privtool
rules``) with a rule-hiding sanitizer. SANITIZED is written in the input's
format, records in the ORIGINAL order (it is the owner's own file); the
``--release`` JSON is the canonical published form and ``--trail`` the private
list of removed occurrences. ``--sensitive N [--pick random|top]`` chooses the
rules instead (:mod:`privtool.hiding`, the code path ``compare`` shares).
Extra sanitizer options (``--time-limit 30`` for ``exact``) are passed as free
arguments.
"""

from __future__ import annotations

import click

from ..atomic import atomic_unit
from ..executors import SerialExecutor
from ..hiding import dataset_sanitizer, hide
from ..io import choose_format, read_dataset, write_dataset
from ..outputs import check_outputs
from ..removals import apply_trail_removals
from .common import RunSettings, app, options_and_format_options, running, stderr_console

RULE_OPTIONS = {"sensitive_rules", "min_support", "min_confidence"}


@click.command("hide", context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("data")
@click.option(
    "--rules", "rules_file", default=None, metavar="RULES", help="Sensitive rules: `a b => c` lines or rule ids."
)
@click.option(
    "--sensitive",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Instead of --rules: hide N of the strong rules.",
)
@click.option(
    "--pick",
    type=click.Choice(["random", "top"]),
    default="random",
    show_default=True,
    help="How --sensitive rules are chosen (random: with --seed).",
)
@click.option(
    "--min-support", type=float, required=True, help="A fraction in (0, 1) of the records, or a record count >= 1."
)
@click.option("--min-confidence", type=float, required=True, help="Minimum confidence in [0, 1].")
@click.option("--sanitizer", default="mfi-relevance", show_default=True, help="mfi-relevance, fhsar, mdsrrc or exact.")
@click.option("-o", "--output", required=True, metavar="SANITIZED", help="The sanitized data, in the input's format.")
@click.option("--release", default=None, metavar="RELEASE.json", help="Also write the canonical sanitized release.")
@click.option(
    "--trail", default=None, metavar="TRAIL.json", help="Also write the private trail of removed occurrences."
)
@click.option("--format", "fmt", default=None, help="Input (and output) format (default: from the input's extension).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed (the exact solver's random seed).")
@click.option("--quiet", "-q", is_flag=True, help="No progress or summary.")
@click.pass_context
def command(
    ctx: click.Context,
    data: str,
    rules_file: str | None,
    sensitive: int | None,
    pick: str,
    min_support: float,
    min_confidence: float,
    sanitizer: str,
    output: str,
    release: str | None,
    trail: str | None,
    fmt: str | None,
    seed: int,
    quiet: bool,
) -> int:
    """Hide the sensitive association rules of RULES in DATA."""
    check_outputs({"-o": output, "--release": release, "--trail": trail}, {"DATA": data, "--rules": rules_file})
    registry = app(ctx).registry
    component = dataset_sanitizer(registry, sanitizer)
    extra_spec = [p for p in component.params if p.name not in RULE_OPTIONS]
    extra, format_options = options_and_format_options(
        registry, data, fmt, ctx.args, extra_spec, f"sanitizer {sanitizer!r}"
    )
    fmt_name = choose_format(registry, data, fmt).name
    dataset = read_dataset(registry, data, fmt_name, format_options)
    choice = {"rules": rules_file, "sensitive": sensitive, "pick": pick if sensitive else None}
    options = {
        **{k: v for k, v in choice.items() if v is not None},
        "min_support": min_support,
        "min_confidence": min_confidence,
        **extra,
    }
    with running(RunSettings(seed, SerialExecutor(), quiet)) as run_ctx:
        outcome = hide(registry, dataset, sanitizer, options, run_ctx)
    with atomic_unit() as unit:
        sanitized = apply_trail_removals(dataset, outcome.trail.removed_items)
        write_dataset(registry, sanitized, output, fmt_name, format_options, unit)
        if release:
            unit.write_text(release, outcome.release_text or outcome.release.dumps())
        if trail:
            unit.write_text(trail, outcome.trail.dumps())
    if not quiet:
        stats = {**outcome.release.stats, **outcome.trail.stats}
        stderr_console().print(
            f"hid {len(outcome.trail.sensitive_rules)} rules with {sanitizer}: removed "
            f"{stats['removed_item_occurrences']:,} item occurrences "
            f"from {stats['modified_records']:,} of {stats['records_in']:,} records; wrote {output}"
        )
    return 0
