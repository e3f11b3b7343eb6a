"""Markdown tables from a `privtool compare` folder (its results.csv), mean over repeats.

One measure, methods as rows, the swept parameter as columns:

    python benchmarks/compare_table.py DIR MEASURE [--axis k] [--digits 3] [--scale 100]

Several measures, methods as rows, one table per value of --by (the rule-hiding
tables); a column is MEASURE or MEASURE=TITLE; runs that found no solution show
their error instead:

    python benchmarks/compare_table.py DIR --by sensitive \\
        --columns seconds=s rule-side-effects.lost_rules=lost [--digits 4]
"""

from __future__ import annotations

import argparse
import csv
from collections import defaultdict
from pathlib import Path


def read_rows(folder: Path) -> list[dict[str, str]]:
    with (folder / "results.csv").open() as handle:
        return list(csv.DictReader(handle))


def mean(values: list[float], digits: int) -> str:
    value = sum(values) / len(values)
    return str(int(value)) if value.is_integer() else f"{value:.{digits}f}"


def by_axis(rows: list[dict[str, str]], measure: str, axis: str, digits: int, scale: float) -> None:
    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        if row.get(measure) not in (None, ""):
            values[row["method"]][row[axis]].append(float(row[measure]) * scale)
    columns = sorted({x for by_x in values.values() for x in by_x}, key=float)
    print("| method | " + " | ".join(f"{axis}={x}" for x in columns) + " |")
    print("|---|" + "---:|" * len(columns))
    for method, by_x in values.items():
        cells = [f"{sum(v) / len(v):.{digits}f}" if (v := by_x.get(x)) else "" for x in columns]
        print(f"| {method} | " + " | ".join(cells) + " |")


def by_group(rows: list[dict[str, str]], group: str, columns: list[str], digits: int) -> None:
    measures = [c.partition("=")[0] for c in columns]
    titles = [c.partition("=")[2] or c for c in columns]
    errors = any(row.get("error") for row in rows)
    for value in sorted({row[group] for row in rows}, key=float):
        members = [row for row in rows if row[group] == value]
        print(f"\n**{group} = {value}**\n")
        print("| method | " + " | ".join(titles) + (" | no solution |" if errors else " |"))
        print("|---|" + "---:|" * len(titles) + ("---|" if errors else ""))
        for method in dict.fromkeys(row["method"] for row in members):
            runs = [row for row in members if row["method"] == method]
            failed = [row["error"] for row in runs if row.get("error")]
            cells = []
            for measure in measures:
                found = [float(row[measure]) for row in runs if row.get(measure) not in (None, "")]
                cells.append(mean(found, digits) if found else "-")
            print(
                f"| {method} | "
                + " | ".join(cells)
                + (f" | {failed[0].split(';')[0] if failed else ''} |" if errors else " |")
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path)
    parser.add_argument("measure", nargs="?", help="One measure against --axis.")
    parser.add_argument("--axis", default="k")
    parser.add_argument("--by", default=None, help="With --columns: one table per value of this grid parameter.")
    parser.add_argument("--columns", nargs="+", default=None, metavar="MEASURE[=TITLE]")
    parser.add_argument("--digits", type=int, default=3)
    parser.add_argument("--scale", type=float, default=1.0, help="Multiply values (100 for percentages).")
    opts = parser.parse_args()
    rows = read_rows(opts.folder)
    if opts.columns:
        if not opts.by:
            parser.error("--columns needs --by")
        by_group(rows, opts.by, opts.columns, opts.digits)
    elif opts.measure:
        by_axis(rows, opts.measure, opts.axis, opts.digits, opts.scale)
    else:
        parser.error("give a MEASURE, or --by and --columns")


if __name__ == "__main__":
    main()
