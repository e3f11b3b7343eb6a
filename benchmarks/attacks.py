"""Speed of the largest supports behind background-knowledge linkage on a
disassociated release: the per-itemset ``ReconstructionModel.max_support`` (the
reference), optionally an earlier ``MaxSupportIndex`` (``--baseline``, a
``reconstruction.py`` file from git history), and the current
``MaxSupportIndex.max_supports``, all on the same known itemsets.

    .venv/bin/python benchmarks/attacks.py --release R.json \\
        --data ../shared/data/bms-webview-2.dat.gz --targets 300 \\
        [--baseline before.py] [--reference-targets 100] [--attack-targets 10000]

``R.json``: ``privtool anonymize DATA --method disassociation --k 5 --m 2
--max-cluster-size 30 -o R.json``; ``before.py``: ``git show
7ad93ce:attacks/reconstruction.py > before.py`` (the index before the interval
rewrite). The known itemsets are those the ``linkage`` attack tries (every 1-
and 2-itemset of each target, seeded sample of targets); the slow reference runs
on the first ``--reference-targets`` of them only. Prints one JSON object with
CPU seconds (``time.process_time``: the machine is shared, wall time is not
comparable) and ratios, which do not depend on the machine. Every answer is
checked equal to the reference's. ``--attack-targets N`` also times the whole
``linkage`` attack (serial executor) on N seeded targets with the current
index and, with ``--baseline``, the earlier one (summaries checked equal).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from collections.abc import Callable
from typing import Any
from unittest.mock import patch

import numpy as np

from privtool.attacks import reconstruction
from privtool.attacks.linkage import known_itemsets
from privtool.attacks.reconstruction import ReconstructionModel
from privtool.components import Evidence
from privtool.context import Context
from privtool.io import read_dataset
from privtool.registry import load_registry
from privtool.release import read_release


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    started = time.process_time()
    result = fn()
    return result, time.process_time() - started


def index_run(module: Any, release: Any, largest: int, queries: list) -> tuple[list[int], float, float]:
    """(answers, index build CPU s, queries CPU s) of ``module.MaxSupportIndex``."""
    index, build = timed(lambda: module.MaxSupportIndex(module.ReconstructionModel(release, term_max_support=largest)))
    answers, query = timed(lambda: index.max_supports(queries))
    return answers, build, query


def load_baseline(path: str) -> Any:
    spec = importlib.util.spec_from_file_location("baseline_reconstruction", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def attack_run(release: Any, original: Any, targets: int, known: int, module: Any) -> tuple[dict, float, float]:
    """(summary, CPU s, wall s) of the ``linkage`` attack, serial, with the index
    and model classes of ``module``."""
    attack = load_registry(()).get("attack", "linkage")
    params = {"known": known, "targets": targets, "max_itemsets": 1000}
    with patch.multiple(
        reconstruction, MaxSupportIndex=module.MaxSupportIndex, ReconstructionModel=module.ReconstructionModel
    ):
        wall = time.perf_counter()
        findings, cpu = timed(lambda: attack.run(release, Evidence(original=original), params, Context()))
        wall = time.perf_counter() - wall
    return findings[0].evidence, cpu, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--release", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--targets", type=int, default=300)
    parser.add_argument("--reference-targets", type=int, default=100)
    parser.add_argument("--known", type=int, default=2)
    parser.add_argument("--baseline", help="an earlier attacks/reconstruction.py to time as well")
    parser.add_argument(
        "--attack-targets", type=int, default=0, help="also time the whole linkage attack (serial) on this many targets"
    )
    args = parser.parse_args()
    release = read_release(args.release)
    original = read_dataset(load_registry(()), args.data, None, {})
    rng = np.random.default_rng(0)
    targets = rng.choice(original.n_records, size=min(args.targets, original.n_records), replace=False)
    per_target = [known_itemsets(original.record_labels(int(t)), args.known, 1000, lambda: rng) for t in targets]
    queries = [q for target in per_target for q in target]
    reference_queries = [q for target in per_target[: args.reference_targets] for q in target]
    largest = max(c.size for c in release.clusters)
    model, model_s = timed(lambda: ReconstructionModel(release, term_max_support=largest))
    reference, reference_s = timed(lambda: [model.max_support(q) for q in reference_queries])
    after, after_build, after_query = index_run(reconstruction, release, largest, queries)
    if after[: len(reference)] != reference:
        raise SystemExit("the index's largest supports differ from the per-itemset ones")
    out: dict[str, Any] = {
        "targets": len(targets),
        "queries": len(queries),
        "distinct_queries": len({frozenset(q) for q in queries}),
        "model_cpu_s": round(model_s, 2),
        "reference_queries": len(reference_queries),
        "reference_cpu_s": round(reference_s, 2),
        "reference_ms_per_query": round(1000 * reference_s / len(reference_queries), 3),
        "after_index_build_cpu_s": round(after_build, 2),
        "after_queries_cpu_s": round(after_query, 2),
        "after_ms_per_query": round(1000 * after_query / len(queries), 4),
    }
    if args.baseline:
        module = load_baseline(args.baseline)
        before, before_build, before_query = index_run(module, release, largest, queries)
        if before != after:
            raise SystemExit("the baseline index answers differently")
        out |= {
            "before_index_build_cpu_s": round(before_build, 2),
            "before_queries_cpu_s": round(before_query, 2),
            "before_ms_per_query": round(1000 * before_query / len(queries), 4),
            "speedup_queries_vs_before": round(before_query / after_query, 1),
            "speedup_with_build_vs_before": round((before_build + before_query) / (after_build + after_query), 1),
        }
    out["speedup_per_query_vs_reference"] = round(out["reference_ms_per_query"] / out["after_ms_per_query"], 1)
    if args.attack_targets:
        summary, cpu, wall = attack_run(release, original, args.attack_targets, args.known, reconstruction)
        out |= {
            "attack_targets": args.attack_targets,
            "attack_after_cpu_s": round(cpu, 2),
            "attack_after_wall_s": round(wall, 2),
        }
        if args.baseline:
            before_summary, before_cpu, before_wall = attack_run(
                release, original, args.attack_targets, args.known, load_baseline(args.baseline)
            )
            if before_summary != summary:
                raise SystemExit("the attack's summary differs with the baseline index")
            out |= {
                "attack_before_cpu_s": round(before_cpu, 2),
                "attack_before_wall_s": round(before_wall, 2),
                "attack_speedup_cpu": round(before_cpu / cpu, 1),
            }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
