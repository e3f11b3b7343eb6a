"""Speed of the safe-disassociation sanitizer against the disassociation it follows.

    .venv/bin/python benchmarks/safe_disassociation.py [--data ../shared/data] [--synthetic FILE]

For bms-webview-2 and (when ``--synthetic`` names one, e.g. a file written by
``privtool synth --like bms-pos --records 515597 --seed 0 -o pos.dat.gz``) a
515,597-record synthetic file: the CPU seconds of the ``disassociation`` method
(defaults: adding partitioner, REFINE, k=5, m=2, max cluster size 30; serial
executor, one process) and of the ``safe-disassociation`` sanitizer on its
release, and the counts the sanitizer reports. Prints one JSON object per file.
"""

from __future__ import annotations

import argparse
import json
import time

from privtool.components import Outcome
from privtool.context import Context
from privtool.io import read_dataset
from privtool.pipeline import apply_sanitizers, run_method
from privtool.registry import load_registry


def measure(registry, path: str) -> dict:
    data = read_dataset(registry, path, None)
    ctx = Context(seed=0)
    started = time.process_time()
    plain = run_method(registry, data, "disassociation", {"k": 5, "m": 2, "max_cluster_size": 30}, ctx)
    middle = time.process_time()
    chain = [registry.get("sanitizer", "safe-disassociation")]
    safe = apply_sanitizers(
        registry, Outcome(plain.release.canonical(), plain.trail), chain, {"k": 5, "m": 2, "max_cluster_size": 30}, ctx
    )
    done = time.process_time()
    keys = ("vulnerable_chunks", "partially_suppressed_chunks", "suppressed_chunks", "ghost_records")
    return {
        "file": path,
        "records": data.n_records,
        "seconds_disassociation": round(middle - started, 2),
        "seconds_sanitizer": round(done - middle, 2),
        **{key: safe.release.stats[key] for key in keys},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--synthetic", default=None)
    args = parser.parse_args()
    registry = load_registry()
    files = [f"{args.data}/bms-webview-2.dat.gz"] + ([args.synthetic] if args.synthetic else [])
    for path in files:
        print(json.dumps(measure(registry, path)), flush=True)


if __name__ == "__main__":
    main()
