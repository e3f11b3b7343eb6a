"""``privtool hierarchy build|check|show``: make, validate and inspect generalisation hierarchies."""

from __future__ import annotations

import click
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from ..errors import ParameterError
from ..hierarchy import Hierarchy, parse_lengths, read_hierarchy
from ..outputs import check_outputs
from .common import (
    FORMAT_ARGS,
    FORMAT_EPILOG,
    echo_json,
    read_data_argument,
    stderr_console,
    stdout_console,
    styled,
)

_IN_FORMATS = click.Choice(["auto", "edges", "paths"])


@click.group("hierarchy")
def command() -> None:
    """Build, check and show generalisation hierarchies (CSV of edges or paths)."""


@command.command("build", context_settings=FORMAT_ARGS, epilog=FORMAT_EPILOG)
@click.argument("data", required=False)
@click.option(
    "--prefix", default=None, metavar="LENGTHS", help="Code-prefix hierarchy with these prefix lengths, e.g. 1,2,3."
)
@click.option("--fanout", type=int, default=None, help="Balanced hierarchy with this fan-out over the sorted items.")
@click.option(
    "--from-paths", "from_paths", default=None, metavar="FILE", help="Convert a paths CSV (item,level1,...,root)."
)
@click.option("--from-edges", "from_edges", default=None, metavar="FILE", help="Convert an edges CSV (child,parent).")
@click.option("--format", "fmt", default=None, help="Format of DATA (default: from the extension).")
@click.option(
    "-o", "--output", required=True, metavar="FILE.csv", help="Where to write the hierarchy (.gz compresses)."
)
@click.option("--output-format", type=click.Choice(["paths", "edges"]), default="paths", show_default=True)
@click.pass_context
def build(
    ctx: click.Context,
    data: str | None,
    prefix: str | None,
    fanout: int | None,
    from_paths: str | None,
    from_edges: str | None,
    fmt: str | None,
    output: str,
    output_format: str,
) -> int:
    """Build a hierarchy over the items of DATA (--prefix or --fanout), or
    convert one (--from-paths / --from-edges; checked against DATA when given)."""
    sources = [
        name
        for name, value in (
            ("--prefix", prefix),
            ("--fanout", fanout),
            ("--from-paths", from_paths),
            ("--from-edges", from_edges),
        )
        if value is not None
    ]
    if len(sources) != 1:
        raise ParameterError("hierarchy build needs exactly one of --prefix, --fanout, --from-paths, --from-edges.")
    check_outputs({"-o": output}, {"DATA": data, "--from-paths": from_paths, "--from-edges": from_edges})
    dataset = read_data_argument(ctx, data, fmt) if data else None
    if prefix is not None or fanout is not None:
        if dataset is None:
            raise ParameterError(f"hierarchy build {sources[0]} needs a DATA file whose items become the leaves.")
        hierarchy = (
            Hierarchy.from_prefixes(dataset.labels, parse_lengths(prefix))
            if prefix is not None
            else Hierarchy.balanced(dataset.labels, fanout or 0)
        )
    else:
        hierarchy = read_hierarchy(from_paths or from_edges or "", "paths" if from_paths else "edges")
        if dataset is not None:
            hierarchy.leaf_ids(dataset)
    hierarchy.write(output, output_format)
    stderr_console().print(
        f"wrote {output} ({hierarchy.n_leaves} leaves, {hierarchy.n_nodes} nodes, depth {hierarchy.max_depth})"
    )
    return 0


@command.command("check", context_settings=FORMAT_ARGS, epilog=FORMAT_EPILOG)
@click.argument("hierarchy_file", metavar="HIERARCHY")
@click.argument("data")
@click.option("--hierarchy-format", type=_IN_FORMATS, default="auto", show_default=True)
@click.option("--format", "fmt", default=None, help="Format of DATA (default: from the extension).")
@click.pass_context
def check(ctx: click.Context, hierarchy_file: str, data: str, hierarchy_format: str, fmt: str | None) -> int:
    """Check that HIERARCHY is a valid tree with every item of DATA as a leaf."""
    hierarchy = read_hierarchy(hierarchy_file, hierarchy_format)
    dataset = read_data_argument(ctx, data, fmt)
    hierarchy.leaf_ids(dataset)
    unused = hierarchy.n_leaves - dataset.n_items
    click.echo(
        f"{hierarchy_file}: valid; all {dataset.n_items} items of {data} are leaves "
        f"({hierarchy.n_leaves} leaves, {unused} not in the data, depth {hierarchy.max_depth})."
    )
    return 0


@command.command("show")
@click.argument("hierarchy_file", metavar="HIERARCHY")
@click.option("--hierarchy-format", type=_IN_FORMATS, default="auto", show_default=True)
@click.option(
    "--depth", "max_depth", type=click.IntRange(min=0), default=2, show_default=True, help="Levels of the tree to draw."
)
@click.option("--json", "as_json", is_flag=True, help="Print the levels as JSON instead of tables.")
def show(hierarchy_file: str, hierarchy_format: str, max_depth: int, as_json: bool) -> int:
    """Levels (nodes, leaves, fan-out per depth) and the top of the tree with leaf counts."""
    hierarchy = read_hierarchy(hierarchy_file, hierarchy_format)
    levels = hierarchy.levels()
    if as_json:
        echo_json(
            {
                "file": hierarchy_file,
                "root": hierarchy.root,
                "leaves": hierarchy.n_leaves,
                "nodes": hierarchy.n_nodes,
                "levels": levels,
            }
        )
        return 0
    console = stdout_console()
    table = Table(title=f"{hierarchy_file}: {hierarchy.n_leaves} leaves, {hierarchy.n_nodes} nodes")
    for column in ("depth", "nodes", "leaves", "internal", "max_fanout"):
        table.add_column(column.replace("_", " "), justify="right")
    for row in levels:
        table.add_row(*(f"{row[c]:,}" for c in ("depth", "nodes", "leaves", "internal", "max_fanout")))
    console.print(table)
    console.print(_draw(hierarchy, max_depth))
    return 0


def _draw(hierarchy: Hierarchy, max_depth: int, max_children: int = 12) -> Tree:
    """A rich tree of the top ``max_depth`` levels, each node with its leaf count."""

    def label(v: int) -> Text:
        return Text.assemble(hierarchy.labels[v], " ", styled(f"({hierarchy.leaf_count[v]:,} leaves)", "dim"))

    tree = Tree(label(0))
    stack = [(0, tree)]
    while stack:
        v, branch = stack.pop()
        if hierarchy.depth[v] >= max_depth:
            continue
        children = hierarchy.children_of(v).tolist()
        for child in children[:max_children]:
            stack.append((child, branch.add(label(child))))
        if len(children) > max_children:
            branch.add(styled(f"... {len(children) - max_children} more", "dim"))
    return tree
