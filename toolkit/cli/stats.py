"""``privtool stats FILE``: counts, record-size histogram and top items."""

from __future__ import annotations

import click
import numpy as np
from rich.table import Table

from .. import examples
from ..dataset import Dataset
from ..errors import ParameterError
from ..io import read_dataset
from .common import app, echo_json, stdout_console


def dataset_stats(dataset: Dataset, top: int = 10) -> dict:
    """The figures ``stats`` prints, as a JSON-ready dict."""
    sizes = dataset.sizes
    supports = dataset.supports
    order = np.argsort(-supports, kind="stable")[:top]
    edges = [1, 2, 3, 5, 10, 20, 50, 100]
    histogram = []
    for low, high in zip([0, *edges], [*edges, None]):
        mask = sizes >= low if high is None else (sizes >= low) & (sizes < high)
        label = f"{low}+" if high is None else (str(low) if high == low + 1 else f"{low}-{high - 1}")
        histogram.append({"size": label, "records": int(mask.sum())})
    return {
        "records": dataset.n_records,
        "items": int((supports > 0).sum()),
        "occurrences": dataset.n_occurrences,
        "max_size": int(sizes.max()) if len(sizes) else 0,
        "avg_size": round(float(sizes.mean()), 3) if len(sizes) else 0.0,
        "size_histogram": histogram,
        "top_items": [{"item": dataset.labels[j], "support": int(supports[j])} for j in order],
    }


@click.command("stats")
@click.argument("file", required=False, type=click.Path(dir_okay=True))
@click.option("--example", default=None, metavar="NAME", help="Describe an embedded example instead of a file (see privtool.examples).")
@click.option("--format", "fmt", default=None, help="Input format (default: from the extension).")
@click.option("--top", type=click.IntRange(min=0), default=10, show_default=True, help="How many top items to list.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
@click.pass_context
def command(ctx: click.Context, file: str | None, example: str | None, fmt: str | None, top: int, as_json: bool) -> int:
    """Counts, record-size histogram and most frequent items of a dataset FILE
    (or of an embedded --example)."""
    if file is not None and example is not None:
        raise ParameterError("stats takes a FILE or --example NAME, not both.")
    if example is not None:
        dataset = examples.load(example)
        source = {"example": example}
    elif file is not None:
        dataset = read_dataset(app(ctx).registry, file, fmt)
        source = {"file": file}
    else:
        raise ParameterError("stats needs a FILE or --example NAME.")
    stats = dataset_stats(dataset, top)
    if as_json:
        echo_json({**source, **stats})
        return 0
    console = stdout_console()
    summary = Table(title=file or f"example {example}")
    summary.add_column("measure")
    summary.add_column("value", justify="right")
    for key in ("records", "items", "occurrences", "max_size", "avg_size"):
        value = stats[key]
        summary.add_row(key.replace("_", " "), f"{value:,}" if isinstance(value, int) else f"{value:.3f}")
    console.print(summary)
    histogram = Table(title="record sizes")
    histogram.add_column("items per record")
    histogram.add_column("records", justify="right")
    for row in stats["size_histogram"]:
        histogram.add_row(row["size"], f"{row['records']:,}")
    console.print(histogram)
    if top:
        items = Table(title=f"top {top} items")
        items.add_column("item")
        items.add_column("support", justify="right")
        for row in stats["top_items"]:
            items.add_row(row["item"], f"{row['support']:,}")
        console.print(items)
    return 0
