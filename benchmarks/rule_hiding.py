"""Rule-hiding experiments: side effects and time of every sanitizer.

    .venv/bin/python benchmarks/rule_hiding.py --out benchmarks/results/rule_hiding.json
    .venv/bin/python benchmarks/rule_hiding.py --speed

For each dataset of ../shared/data at the thresholds below, 5, 10 and 20
sensitive rules are drawn from the mined rules with numpy's generator seeded by
(seed, count); each sanitizer hides them and the side-effect metric
(plugins/rulehiding/side_effects.py) measures the result. ``exact`` runs only its
first stage (fewest removals) with a time limit (default 60 s) and is reported
as optimal only when CP-SAT proved it. ``--speed`` times reading, mining and
hiding 10 rules on retail with mfi-relevance.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from privtool.context import Context
from privtool.dataset import Dataset
from privtool.io import read_dataset
from privtool.mining import Thresholds, association_rules
from privtool.params import resolve
from privtool.plugins.rulehiding.side_effects import side_effects
from privtool.registry import load_registry

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
SETTINGS = {
    "mushroom": (0.4, 0.8),
    "chess": (0.9, 0.95),
    "retail": (0.005, 0.5),
    "t10i4d100k": (0.005, 0.5),
}
HEURISTICS = ("mfi-relevance", "fhsar", "mdsrrc")


def choose(rules: list, count: int, seed: int) -> list:
    rng = np.random.default_rng([seed, count])
    picked = rng.choice(len(rules), size=count, replace=False)
    return [rules[i] for i in sorted(picked.tolist())]


def run(registry, name: str, dataset: Dataset, sensitive: list, support: float, confidence: float, extra: dict) -> tuple:
    component = registry.get("sanitizer", name)
    params = resolve(component.params, {"sensitive_rules": "; ".join(r.text for r in sensitive),
                                        "min_support": support, "min_confidence": confidence, **extra}, name)
    start = time.perf_counter()
    outcome = component.sanitize(dataset, params, Context(seed=0))
    return outcome, time.perf_counter() - start


def experiments(args: argparse.Namespace) -> None:
    registry = load_registry()
    rows = []
    for data_name in args.datasets:
        support, confidence = SETTINGS[data_name]
        dataset = read_dataset(registry, DATA / f"{data_name}.dat.gz")
        if args.head:
            dataset = dataset.subset(range(min(args.head, dataset.n_records))).compact()
        thresholds = Thresholds.of(support, confidence, dataset.n_records)
        mined = [m.rule for m in association_rules(dataset, thresholds)]
        for count in args.counts:
            sensitive = choose(mined, count, args.seed)
            for name in (*HEURISTICS, "exact"):
                extra = {"time_limit": args.time_limit, "second_objective": False} if name == "exact" else {}
                try:
                    outcome, seconds = run(registry, name, dataset, sensitive, support, confidence, extra)
                except Exception as exc:  # an exact run without a solution in time is a result, not a crash
                    rows.append({"data": data_name, "rules": count, "sanitizer": name, "error": str(exc)})
                    print(json.dumps(rows[-1]), flush=True)
                    continue
                sanitized = Dataset.from_records(outcome.release.records)
                report = side_effects(dataset, sanitized, sensitive, thresholds, outcome.trail)
                row = {"data": data_name, "records": dataset.n_records, "min_support": support, "min_confidence": confidence,
                       "mined_rules": len(mined), "rules": count, "sanitizer": name,
                       "seconds": round(seconds, 3), **report}
                if name == "exact":
                    row["optimal"] = outcome.trail.notes["removal_optimal"]
                    row["bound"] = outcome.trail.notes["removal_bound"]
                rows.append(row)
                print(json.dumps(row), flush=True)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")


def speed(args: argparse.Namespace) -> None:
    registry = load_registry()
    support, confidence = SETTINGS["retail"]
    start = time.perf_counter()
    dataset = read_dataset(registry, DATA / "retail.dat.gz")
    read = time.perf_counter() - start
    start = time.perf_counter()
    thresholds = Thresholds.of(support, confidence, dataset.n_records)
    mined = [m.rule for m in association_rules(dataset, thresholds)]
    sensitive = choose(mined, 10, args.seed)
    mining = time.perf_counter() - start
    outcome, hiding = run(registry, "mfi-relevance", dataset, sensitive, support, confidence, {})
    print(json.dumps({"read_seconds": round(read, 2), "mining_seconds": round(mining, 2),
                      "hiding_seconds": round(hiding, 2), "mining_plus_hiding": round(mining + hiding, 2),
                      "removed": outcome.release.stats["removed_item_occurrences"]}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    parser.add_argument("--counts", nargs="+", type=int, default=[5, 10, 20])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--head", type=int, default=None, help="use only the first N records of each dataset")
    parser.add_argument("--out", default=None)
    parser.add_argument("--speed", action="store_true")
    args = parser.parse_args()
    speed(args) if args.speed else experiments(args)


if __name__ == "__main__":
    main()
