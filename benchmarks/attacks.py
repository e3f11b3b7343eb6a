"""Speed of background-knowledge linkage on a disassociated release: the
per-itemset ``ReconstructionModel.max_support`` (before) against the batched,
cached ``MaxSupportIndex.max_supports`` (after), on the same known itemsets.

    .venv/bin/python benchmarks/attacks.py --release R.json \\
        --data ../shared/data/bms-webview-2.dat.gz --targets 300

``R.json``: ``privtool anonymize DATA --method disassociation --k 5 --m 2
--max-cluster-size 30 -o R.json``. The known itemsets are those the ``linkage``
attack tries (every 1- and 2-itemset of each target, seeded sample of targets).
Prints one JSON object with CPU seconds (``time.process_time``: the machine is
shared, wall time is not comparable) and their ratio, which does not depend on
the machine. Both answers are checked to be equal.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from privtool.attacks.linkage import known_itemsets
from privtool.attacks.reconstruction import MaxSupportIndex, ReconstructionModel
from privtool.io import read_dataset
from privtool.registry import load_registry
from privtool.release import read_release


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--release", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--targets", type=int, default=300)
    parser.add_argument("--known", type=int, default=2)
    args = parser.parse_args()
    release = read_release(args.release)
    original = read_dataset(load_registry(()), args.data, None, {})
    rng = np.random.default_rng(0)
    targets = rng.choice(original.n_records, size=min(args.targets, original.n_records), replace=False)
    queries = [q for t in targets for q in known_itemsets(original.record_labels(int(t)), args.known, 1000, lambda: rng)]
    largest = max(c.size for c in release.clusters)
    started = time.process_time()
    model = ReconstructionModel(release, term_max_support=largest)
    model_seconds = time.process_time() - started
    started = time.process_time()
    before = [model.max_support(q) for q in queries]
    before_seconds = time.process_time() - started
    started = time.process_time()
    index = MaxSupportIndex(model)
    index_seconds = time.process_time() - started
    started = time.process_time()
    after = index.max_supports(queries)
    after_seconds = time.process_time() - started
    if before != after:
        raise SystemExit("the batched maximum support differs from the per-itemset one")
    print(json.dumps({
        "targets": len(targets), "queries": len(queries), "distinct_queries": len({frozenset(q) for q in queries}),
        "model_cpu_s": round(model_seconds, 2), "per_itemset_cpu_s": round(before_seconds, 2),
        "index_build_cpu_s": round(index_seconds, 2), "batched_cpu_s": round(after_seconds, 2),
        "speedup_queries": round(before_seconds / after_seconds, 2),
        "speedup_including_index_build": round(before_seconds / (after_seconds + index_seconds), 2),
    }))


if __name__ == "__main__":
    main()
