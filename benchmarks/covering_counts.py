"""Speed of the counts behind background-knowledge linkage on a generalized or
sanitized release: the current ``CoveringRecordCounter`` against the counter of
an earlier ``attacks/linkage.py`` (``--baseline``, a file from git history), on
the same known itemsets, every answer checked equal.

    git show 4a13b18:attacks/linkage.py > benchmarks/out/before_linkage.py
    .venv/bin/python benchmarks/covering_counts.py --release R.json \\
        --data ../shared/data/bms-webview-2.dat.gz --baseline benchmarks/out/before_linkage.py [--targets N]

The known itemsets are those the ``linkage`` attack tries (every 1- and
2-itemset of each target, or its seeded sample; all original records, or a
seeded sample of ``--targets``). Prints one JSON object with CPU seconds
(``time.process_time``: the machine is shared, wall time is not comparable) of
building each counter and of answering the itemsets, and their ratios, which do
not depend on the machine.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import time
from functools import partial
from typing import Any

from privtool.attacks.linkage import _choose_targets, known_itemsets, match_counter
from privtool.context import Context
from privtool.io import read_dataset
from privtool.registry import load_registry
from privtool.release import read_release


def load_baseline(path: str) -> Any:
    spec = importlib.util.spec_from_file_location("baseline_linkage", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timed(build: Any, queries: list) -> tuple[list[int], float, float]:
    start = time.process_time()
    counter = build()
    built = time.process_time()
    counts = counter.many(queries)
    return counts, built - start, time.process_time() - built


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--release", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--baseline", required=True, help="an earlier attacks/linkage.py to time as well")
    parser.add_argument("--targets", type=int, default=None)
    parser.add_argument("--known", type=int, default=2)
    args = parser.parse_args()
    release = read_release(args.release)
    original = read_dataset(load_registry(()), args.data, None, {})
    ctx = Context()
    positions = _choose_targets(original, args.targets, ctx)
    queries = [
        q
        for p in positions
        for q in known_itemsets(
            original.record_labels(int(p)), args.known, 1000, partial(ctx.seeds.rng, "linkage-knowledge", int(p))
        )
    ]
    before, before_build, before_queries = timed(partial(load_baseline(args.baseline).match_counter, release), queries)
    after, after_build, after_queries = timed(partial(match_counter, release), queries)
    if before != after:
        raise SystemExit("the counters answer differently")
    print(
        json.dumps(
            {
                "release": args.release,
                "kind": release.kind,
                "targets": len(positions),
                "itemsets": len(queries),
                "distinct_itemsets": len(set(queries)),
                "before_cpu_s": {"build": round(before_build, 3), "queries": round(before_queries, 3)},
                "after_cpu_s": {"build": round(after_build, 3), "queries": round(after_queries, 3)},
                "ratio_queries": round(before_queries / after_queries, 1),
                "ratio_with_build": round((before_build + before_queries) / (after_build + after_queries), 1),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
