"""``privtool stats FILE``: counts, record-size histogram and top items."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import click
import numpy as np
from rich.table import Table
from rich.text import Text

from .. import examples
from ..dataset import Dataset, label_sort_key
from ..errors import ParameterError
from ..io import check_readable, read_dataset_blocks
from .common import app, echo_json, format_options, stdout_console


def size_bins(max_size: int) -> list[tuple[int, int]]:
    """Inclusive record-size ranges ``0, 1, 2, 3-4, 5-8, 9-16, ...`` up to ``max_size``:
    doubling widths keep the table short for long-tailed sizes (click streams,
    baskets) while the small sizes that dominate such data stay exact."""
    bins = [(0, 0), (1, 1)]
    high = 1
    while high < max_size:
        bins.append((high + 1, 2 * high))
        high *= 2
    return bins


def dataset_stats(dataset: Dataset, top: int = 10) -> dict:
    """The figures ``stats`` prints, as a JSON-ready dict (:func:`stream_stats`
    of the one block ``dataset``)."""
    return stream_stats([dataset], top)


def stream_stats(blocks: Iterable[Dataset], top: int = 10) -> dict:
    """The figures ``stats`` prints for the records of ``blocks`` read one after
    the other (each over its own vocabulary), holding one block at a time plus
    a support per distinct label and a count per record size.

    ``items`` counts the distinct items that occur; ``avg_size`` is rounded to
    3 decimals; ``median_size`` is the mean of the two middle sizes (numpy's
    median); ``size_histogram`` lists every bin of :func:`size_bins` from the
    first to the last non-empty one, with the share of records; ``top_items``
    are by descending support, ties in canonical label order."""
    size_counts = np.zeros(1, dtype=np.int64)
    supports: dict[str, int] = {}
    for block in blocks:
        counts = np.bincount(block.sizes)
        if len(counts) > len(size_counts):
            size_counts = np.r_[size_counts, np.zeros(len(counts) - len(size_counts), dtype=np.int64)]
        size_counts[: len(counts)] += counts
        for label, support in zip(block.labels, block.supports.tolist(), strict=True):
            supports[label] = supports.get(label, 0) + support
    labels = sorted(supports, key=label_sort_key)
    support = np.array([supports[label] for label in labels], dtype=np.int64)
    order = np.argsort(-support, kind="stable")[:top]
    records = int(size_counts.sum())
    occurrences = int(size_counts @ np.arange(len(size_counts)))
    sizes = np.flatnonzero(size_counts)
    max_size = int(sizes[-1]) if records else 0
    ends = np.cumsum(size_counts)
    histogram = []
    for low, high in size_bins(max_size):
        count = int(size_counts[low : high + 1].sum())
        label = str(low) if low == high else f"{low}-{high}"
        histogram.append({"size": label, "records": count, "share": round(count / max(records, 1), 4)})
    while histogram and histogram[0]["records"] == 0:
        histogram.pop(0)
    middle = np.searchsorted(ends, [(records - 1) // 2, records // 2], side="right")
    return {
        "records": records,
        "items": int((support > 0).sum()),
        "occurrences": occurrences,
        "max_size": max_size,
        "avg_size": round(occurrences / records, 3) if records else 0.0,
        "median_size": float(middle.mean()) if records else 0.0,
        "size_histogram": histogram,
        "top_items": [{"item": labels[j], "support": int(support[j])} for j in order],
    }


@click.command(
    "stats",
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    epilog="Options of the input format go after FILE, e.g. `privtool stats data.csv --delimiter ';'`.",
)
@click.argument("file", required=False)
@click.option(
    "--example",
    default=None,
    metavar="NAME",
    help="Describe an embedded example of the papers instead of a file (see docs/examples.md).",
)
@click.option("--format", "fmt", default=None, help="Input format (default: from the extension; see docs/formats.md).")
@click.option("--top", type=click.IntRange(min=0), default=10, show_default=True, help="How many top items to list.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
@click.pass_context
def command(ctx: click.Context, file: str | None, example: str | None, fmt: str | None, top: int, as_json: bool) -> int:
    """Counts, record-size histogram and most frequent items of a dataset FILE
    (or of an embedded --example)."""
    if file is not None and example is not None:
        raise ParameterError("stats takes a FILE or --example NAME, not both.")
    if example is not None:
        if ctx.args or fmt:
            raise ParameterError(
                f"format options ({' '.join([*(['--format'] if fmt else []), *ctx.args])}) "
                "apply to a FILE, not to --example."
            )
        stats = dataset_stats(examples.load(example), top)
        source: dict[str, str] = {"example": example}
        title = f"example {example}"
    elif file is not None:
        registry = app(ctx).registry
        check_readable(Path(file))
        name, options = format_options(registry, file, fmt, ctx.args)
        stats = stream_stats(read_dataset_blocks(registry, file, name, options), top)
        source, title = {"file": file, "format": name}, file
    else:
        raise ParameterError("stats needs a FILE or --example NAME.")
    if as_json:
        echo_json({**source, **stats})
        return 0
    print_stats(title, stats, top)
    return 0


def print_stats(file: str, stats: dict, top: int) -> None:
    """The rich tables of ``stats``."""
    console = stdout_console()
    console.print(Text(file, style="bold"))
    summary = Table()
    summary.add_column("measure")
    summary.add_column("value", justify="right")
    for key in ("records", "items", "occurrences", "max_size", "avg_size", "median_size"):
        value = stats[key]
        summary.add_row(key.replace("_", " "), f"{value:,}" if isinstance(value, int) else f"{value:.3f}")
    console.print(summary)
    histogram = Table(title="record sizes")
    histogram.add_column("items per record")
    histogram.add_column("records", justify="right")
    histogram.add_column("share", justify="right")
    histogram.add_column("")
    widest = max((row["share"] for row in stats["size_histogram"]), default=0) or 1
    for row in stats["size_histogram"]:
        bar = "█" * round(30 * row["share"] / widest)
        share = "<0.1%" if 0 < row["share"] < 0.001 else f"{100 * row['share']:.1f}%"
        histogram.add_row(row["size"], f"{row['records']:,}", share, bar)
    console.print(histogram)
    if top:
        items = Table(title=f"top {top} items")
        items.add_column("item")
        items.add_column("support", justify="right")
        for row in stats["top_items"]:
            items.add_row(row["item"], f"{row['support']:,}")
        console.print(items)
