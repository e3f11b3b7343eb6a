"""CPU time of building a :class:`Dataset` from Python and pandas input.

Usage (from the repository root)::

    .venv/bin/python benchmarks/dataset_input.py [--data FILE] [--repeat N]

Reads ``--data`` (default ``../shared/data/retail.dat.gz``, 88,162 records,
908,576 item occurrences) once as Python lists, then prints the best-of-``N``
CPU time (``time.process_time``, so other load on the machine counts less) of

* ``Dataset.from_records`` on string items (what the basket, csv, csv-long and
  jsonl readers call),
* ``Dataset.from_records`` on integer items (what the data README's own loader
  gives),
* ``Dataset.from_pandas`` on the same data as a long frame (two int64 columns)
  and as a long frame of strings, when pandas is installed,

with the time per million item occurrences. Each figure is checked against the
string-item dataset, so a faster but wrong path cannot report a number.
"""

from __future__ import annotations

import argparse
import gzip
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from privtool.dataset import Dataset

DEFAULT = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "retail.dat.gz"


def best_cpu(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeat):
        started = time.process_time()
        result = fn()
        best = min(best, time.process_time() - started)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with gzip.open(args.data, "rt") as handle:
        text_records = [line.split() for line in handle]
    int_records = [[int(item) for item in record] for record in text_records]
    occurrences = sum(map(len, text_records))
    print(f"{args.data.name}: {len(text_records):,} records, {occurrences:,} item occurrences")
    reference = Dataset.from_records(text_records)
    cases: list[tuple[str, Callable[[], Dataset]]] = [
        ("from_records, str items", lambda: Dataset.from_records(text_records)),
        ("from_records, int items", lambda: Dataset.from_records(int_records)),
    ]
    try:
        import pandas as pd
    except ImportError:
        print("(pandas is not installed: the from_pandas rows are left out)")
    else:
        ids = [i for i, record in enumerate(int_records) for _ in record]
        items = [item for record in int_records for item in record]
        long_ints = pd.DataFrame({"basket": ids, "item": items})
        long_text = pd.DataFrame({"basket": [f"b{i}" for i in ids], "item": [str(item) for item in items]})
        cases += [
            (
                "from_pandas, long, int64 columns",
                lambda: Dataset.from_pandas(long_ints, transaction="basket", item="item"),
            ),
            (
                "from_pandas, long, str columns",
                lambda: Dataset.from_pandas(long_text, transaction="basket", item="item"),
            ),
        ]
    for name, build in cases:
        seconds, dataset = best_cpu(build, args.repeat)
        if dataset != reference:
            raise SystemExit(f"{name}: the dataset differs from the string-item reference")
        print(f"{name:36s} {seconds:7.3f} s CPU  ({seconds / occurrences * 1e6:.3f} s per million occurrences)")


if __name__ == "__main__":
    main()
