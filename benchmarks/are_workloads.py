"""Why the ``are`` workload draws its count queries from records (docs/metrics.md):
on BMS-WebView-2, the ARE of one reconstruction of partition, lgr, aa (k = 5,
m = 2 for aa, the range hierarchy) and disassociation (k = 5, m = 2) under two
workloads of 1,000 pairs and two sanity bounds:

* ``records``: the metric's workload (a random record, then 2 of its items);
* ``distinct``: pairs drawn uniformly among the distinct pairs the data holds.

Usage (from the repository root)::

    .venv/bin/python benchmarks/are_workloads.py

Prints the support quartiles of each workload and one JSON line per release.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from privtool.context import Context
from privtool.dataset import Dataset
from privtool.io import read_dataset
from privtool.itemset_mining import itemset_counts, itemset_supports
from privtool.pipeline import run_method
from privtool.plugins.utility_metrics import count_query_workload, reconstruction_source
from privtool.registry import load_registry

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
HIERARCHY = str(SHARED / "hierarchies" / "bms-webview-2-ranges.csv.gz")
METHODS = {
    "partition": {"k": 5, "hierarchy": HIERARCHY},
    "lgr": {"k": 5, "hierarchy": HIERARCHY},
    "aa": {"k": 5, "m": 2, "hierarchy": HIERARCHY},
    "disassociation": {"k": 5, "m": 2},
}


def main() -> None:
    registry = load_registry()
    original = read_dataset(registry, SHARED / "bms-webview-2.dat.gz")
    rng = np.random.default_rng(0)
    rows, _ = itemset_counts(original.indptr, original.items, 2, original.n_items)
    picked = rows[np.sort(rng.choice(len(rows), size=1000, replace=False))]
    workloads = {
        "records": count_query_workload(original, 2, 1000, rng)[0],
        "distinct": [tuple(original.labels[i] for i in row) for row in picked.tolist()],
    }
    truths = {name: itemset_supports(original, w).astype(float) for name, w in workloads.items()}
    for name, truth in truths.items():
        quartiles = np.quantile(truth, [0.25, 0.5, 0.75]).tolist()
        print(json.dumps({"workload": name, "support_quartiles": quartiles, "below_5": float((truth < 5).mean())}))
    print(json.dumps({"distinct_pairs": len(rows)}))
    sanity = int(np.ceil(0.001 * original.n_records))
    for method, options in METHODS.items():
        outcome = run_method(registry, original, method, options, Context(seed=0))
        source = reconstruction_source(outcome.release)
        reconstruction = source if isinstance(source, Dataset) else source.sample(np.random.default_rng(1))
        row: dict[str, object] = {"method": method}
        for name, itemsets in workloads.items():
            got = itemset_supports(reconstruction, itemsets)
            for bound in (1, sanity):
                error = np.abs(truths[name] - got) / np.maximum(truths[name], bound)
                row[f"{name}_b{bound}"] = round(float(error.mean()), 4)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
