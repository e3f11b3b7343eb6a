"""``privtool plugins``: every plugin with its version, source and components."""

from __future__ import annotations

import click
from rich.table import Table

from .common import app, echo_json, stdout_console


@click.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_context
def command(ctx: click.Context, as_json: bool) -> int:
    """List every installed plugin with its version, source and components."""
    infos = app(ctx).registry.plugins()
    if as_json:
        echo_json(
            [
                {"name": i.name, "version": i.version, "source": i.source, "components": list(i.components)}
                for i in infos
            ]
        )
        return 0
    table = Table(title="privtool plugins")
    for column in ("plugin", "version", "source", "components"):
        table.add_column(column)
    for info in infos:
        table.add_row(info.name, info.version, info.source, "\n".join(info.components))
    stdout_console().print(table)
    return 0
