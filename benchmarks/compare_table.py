"""Print one measure of a `privtool compare` folder as a Markdown table
(methods as rows, the swept parameter as columns, mean over repeats).

    python benchmarks/compare_table.py DIR MEASURE [--axis k] [--digits 3]
"""

from __future__ import annotations

import argparse
import csv
from collections import defaultdict
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path)
    parser.add_argument("measure")
    parser.add_argument("--axis", default="k")
    parser.add_argument("--digits", type=int, default=3)
    parser.add_argument("--scale", type=float, default=1.0, help="Multiply values (100 for percentages).")
    opts = parser.parse_args()
    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    with (opts.folder / "results.csv").open() as handle:
        for row in csv.DictReader(handle):
            if row.get(opts.measure) not in (None, ""):
                values[row["method"]][row[opts.axis]].append(float(row[opts.measure]) * opts.scale)
    columns = sorted({x for by_x in values.values() for x in by_x}, key=float)
    print("| method | " + " | ".join(f"{opts.axis}={x}" for x in columns) + " |")
    print("|---|" + "---:|" * len(columns))
    for method, by_x in values.items():
        cells = [f"{sum(v) / len(v):.{opts.digits}f}" if (v := by_x.get(x)) else "" for x in columns]
        print(f"| {method} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
