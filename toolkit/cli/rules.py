"""``privtool rules DATA --min-support S --min-confidence C``: the strong rules, with ids.

Rules have one consequent item and are listed by decreasing confidence, then
decreasing support, then canonical rule order. Each id is
:func:`privtool.mining.rule_id` (a hash of the rule's canonical text), so a file
of ids given to ``privtool hide`` later names the same rules.
"""

from __future__ import annotations

import click
from rich.table import Table

from ..mining import Thresholds, association_rules, strongest_first
from .common import FORMAT_ARGS, FORMAT_EPILOG, echo_json, read_data_argument, stdout_console


@click.command("rules", context_settings=FORMAT_ARGS, epilog=FORMAT_EPILOG)
@click.argument("data")
@click.option(
    "--min-support", type=float, required=True, help="A fraction in (0, 1) of the records, or a record count >= 1."
)
@click.option("--min-confidence", type=float, required=True, help="Minimum confidence in [0, 1].")
@click.option("--top", type=click.IntRange(min=1), default=None, help="List only the first N rules.")
@click.option("--format", "fmt", default=None, help="Input format (default: from the extension).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_context
def command(
    ctx: click.Context,
    data: str,
    min_support: float,
    min_confidence: float,
    top: int | None,
    fmt: str | None,
    as_json: bool,
) -> int:
    """List the association rules of DATA with stable ids."""
    dataset = read_data_argument(ctx, data, fmt)
    thresholds = Thresholds.of(min_support, min_confidence, dataset.n_records)
    mined = strongest_first(association_rules(dataset, thresholds))
    total = len(mined)
    shown = mined[:top] if top else mined
    if as_json:
        echo_json(
            {
                "file": data,
                "records": dataset.n_records,
                "min_support": thresholds.min_support,
                "min_confidence": min_confidence,
                "rules_total": total,
                "rules": [
                    {
                        "id": m.rule.id,
                        "antecedent": list(m.rule.antecedent),
                        "consequent": list(m.rule.consequent),
                        "support": m.support,
                        "antecedent_support": m.antecedent_support,
                        "confidence": m.confidence,
                    }
                    for m in shown
                ],
            }
        )
        return 0
    table = Table(
        title=(
            f"{data}: {total:,} rules at support >= {thresholds.min_support:,} records, "
            f"confidence >= {min_confidence:g}"
        )
        + (f" (first {len(shown):,})" if len(shown) < total else "")
    )
    for column, justify in (("id", "left"), ("rule", "left"), ("support", "right"), ("confidence", "right")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for m in shown:
        table.add_row(m.rule.id, m.rule.text, f"{m.support:,}", f"{m.confidence:.3f}")
    stdout_console().print(table)
    return 0
