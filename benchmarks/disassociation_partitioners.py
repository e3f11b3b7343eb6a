"""Where the horizontal partitioners differ, record by record (issue 19 item 4).

Usage (from the repository root)::

    .venv/bin/python benchmarks/disassociation_partitioners.py [--ks 5] [--max-cluster-size 30]

For bms-webview-1 and bms-webview-2 and each k, runs the partitioners alone
(:func:`privtool.plugins.disassociation.horpart.partition`, no VERPART) and
prints one JSON line per dataset and k with, as shares of all records:

* ``low_support``: records in parts that became final because their most
  frequent unused term has support below k while they had more than
  ``max_cluster_size`` records (``notes["low_support_records"]``). On such a
  part ``horpart`` abandons every split and ``adding`` adds every carved part
  straight back to its sibling, so the two agree there (it is the same count
  for both, checked);
* ``same_cluster``: records whose cluster is the same set of records under
  ``horpart`` and ``adding``;
* ``skip_sibling_same_cluster``: the same between ``adding`` and
  ``adding-skip-sibling``;
* ``horpart_oversized``: records of ``horpart`` clusters larger than
  ``max_cluster_size`` (made by abandoned splits), and how many such clusters;
* ``literal_small``: records of ``horpart-literal`` clusters smaller than k,
  and how many such clusters.

tlost of the same partitioners is made by ``benchmarks/disassociation_tlost.py
--partitioners ...``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from privtool.components import Partitioning
from privtool.io import read_dataset
from privtool.plugins.disassociation.horpart import partition
from privtool.registry import load_registry

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"


def cluster_ids(result: Partitioning, n_records: int) -> np.ndarray:
    """Per record, the smallest record position of its cluster (-1 if suppressed)."""
    ids = np.full(n_records, -1, dtype=np.int64)
    for rows in result.clusters:
        ids[rows] = rows.min()
    return ids


def same_cluster(a: Partitioning, b: Partitioning, n_records: int) -> int:
    """Records whose cluster is the same set of records in ``a`` and ``b``."""
    ids_a, ids_b = cluster_ids(a, n_records), cluster_ids(b, n_records)
    sizes_a = np.bincount(ids_a[ids_a >= 0], minlength=n_records)
    pairs, counts = np.unique(np.stack([ids_a, ids_b]), axis=1, return_counts=True)
    # a cluster of a equals one of b when all its records share one b-cluster of the same size
    sizes_b = np.bincount(ids_b[ids_b >= 0], minlength=n_records)
    equal = (pairs[0] >= 0) & (pairs[1] >= 0) & (counts == sizes_a[pairs[0]]) & (counts == sizes_b[pairs[1]])
    return int(counts[equal].sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ks", default="5")
    parser.add_argument("--max-cluster-size", type=int, default=30)
    args = parser.parse_args()
    registry = load_registry()
    size = args.max_cluster_size
    for name in ("bms-webview-1", "bms-webview-2"):
        dataset = read_dataset(registry, SHARED / f"{name}.dat.gz")
        n = dataset.n_records
        for k in (int(x) for x in args.ks.split(",")):
            runs = {
                s: partition(dataset, k, size, s)
                for s in ("horpart", "horpart-literal", "adding", "adding-skip-sibling")
            }
            oversized = [len(c) for c in runs["horpart"].clusters if len(c) > size]
            small = [len(c) for c in runs["horpart-literal"].clusters if len(c) < k]
            row = {
                "data": name,
                "k": k,
                "max_cluster_size": size,
                "records": n,
                "low_support_horpart": round(runs["horpart"].notes["low_support_records"] / n, 4),
                "low_support_adding": round(runs["adding"].notes["low_support_records"] / n, 4),
                "same_cluster": round(same_cluster(runs["horpart"], runs["adding"], n) / n, 4),
                "skip_sibling_same_cluster": round(same_cluster(runs["adding"], runs["adding-skip-sibling"], n) / n, 4),
                "horpart_oversized": round(sum(oversized) / n, 4),
                "horpart_oversized_clusters": len(oversized),
                "literal_small": round(sum(small) / n, 4),
                "literal_small_clusters": len(small),
                "clusters": {s: len(r.clusters) for s, r in runs.items()},
            }
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
