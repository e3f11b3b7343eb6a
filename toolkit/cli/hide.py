"""``privtool hide DATA --rules RULES --min-support S --min-confidence C --sanitizer NAME -o SANITIZED``.

Hides the sensitive rules of RULES (``a b => c`` lines or ids from ``privtool
rules``) with a rule-hiding sanitizer. SANITIZED is written in the input's
format, records in the ORIGINAL order (it is the owner's own file); the
``--release`` JSON is the canonical published form and ``--trail`` the private
list of removed occurrences. Extra sanitizer options (``--time-limit 30`` for
``exact``) are passed as free arguments.
"""

from __future__ import annotations

from typing import Any

import click

from ..components import Outcome
from ..dataset import Dataset
from ..errors import ParameterError
from ..io import choose_format, read_dataset, write_dataset
from ..mining import Thresholds
from ..params import resolve
from ..pipeline import stamp, write_outcome
from ..registry import Registry
from ..removals import apply_trail_removals
from ..rulefile import read_rule_file, resolve_rules, rules_text
from ..trail import write_trail
from .common import RunSettings, app, parse_component_options, running, stderr_console

RULE_OPTIONS = {"sensitive_rules", "min_support", "min_confidence"}


def hide(registry: Registry, dataset: Dataset, sanitizer: str, options: dict[str, Any], ctx: Any) -> Outcome:
    """Run the rule-hiding ``sanitizer`` on ``dataset`` and stamp the release."""
    component = registry.get("sanitizer", sanitizer)
    if "dataset" not in getattr(component, "applies_to", ()):
        raise ParameterError(f"sanitizer {sanitizer!r} does not work on raw data; hide needs a rule-hiding sanitizer.")
    params = resolve(component.params, options, f"sanitizer {sanitizer!r}")
    outcome = component.sanitize(dataset, params, ctx)
    return stamp(registry, outcome, dataset.content_sha256(), ctx.seed)


@click.command("hide", context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("data")
@click.option("--rules", "rules_file", required=True, metavar="RULES", help="Sensitive rules: `a b => c` lines or rule ids.")
@click.option("--min-support", type=float, required=True, help="A fraction in (0, 1) of the records, or a record count >= 1.")
@click.option("--min-confidence", type=float, required=True, help="Minimum confidence in [0, 1].")
@click.option("--sanitizer", default="mfi-relevance", show_default=True, help="mfi-relevance, fhsar, mdsrrc or exact.")
@click.option("-o", "--output", required=True, metavar="SANITIZED", help="The sanitized data, in the input's format.")
@click.option("--release", default=None, metavar="RELEASE.json", help="Also write the canonical sanitized release.")
@click.option("--trail", default=None, metavar="TRAIL.json", help="Also write the private trail of removed occurrences.")
@click.option("--format", "fmt", default=None, help="Input (and output) format (default: from the input's extension).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed (the exact solver's random seed).")
@click.option("--quiet", "-q", is_flag=True, help="No progress or summary.")
@click.pass_context
def command(ctx: click.Context, data: str, rules_file: str, min_support: float, min_confidence: float, sanitizer: str,
            output: str, release: str | None, trail: str | None, fmt: str | None, seed: int, quiet: bool) -> int:
    """Hide the sensitive association rules of RULES in DATA."""
    registry = app(ctx).registry
    component = registry.get("sanitizer", sanitizer)
    extra_spec = [p for p in component.params if p.name not in RULE_OPTIONS]
    extra = parse_component_options(ctx.args, extra_spec, f"sanitizer {sanitizer!r}")
    entries = read_rule_file(rules_file)
    fmt_name = choose_format(registry, data, fmt).name
    dataset = read_dataset(registry, data, fmt_name)
    thresholds = Thresholds.of(min_support, min_confidence, dataset.n_records)
    rules = resolve_rules(entries, dataset, thresholds, rules_file)
    options = {"sensitive_rules": rules_text(rules), "min_support": min_support, "min_confidence": min_confidence, **extra}
    with running(RunSettings(seed, "serial", None, None, quiet)) as run_ctx:
        outcome = hide(registry, dataset, sanitizer, options, run_ctx)
    write_dataset(registry, apply_trail_removals(dataset, outcome.trail.removed_items), output, fmt_name)
    if release:
        write_outcome(outcome, release, trail)
    elif trail:
        write_trail(outcome.trail, trail)
    if not quiet:
        stats = outcome.release.stats
        stderr_console().print(
            f"hid {len(rules)} rules with {sanitizer}: removed {stats['removed_item_occurrences']:,} item occurrences "
            f"from {stats['modified_records']:,} of {stats['records_in']:,} records; wrote {output}"
        )
    return 0

