"""Rule-hiding experiments: side effects and time of every sanitizer.

    .venv/bin/python benchmarks/rule_hiding.py --out benchmarks/results/rule_hiding.json
    .venv/bin/python benchmarks/rule_hiding.py --speed
    .venv/bin/python benchmarks/rule_hiding.py --report benchmarks/results/rule_hiding.json \
        --plot docs/results/rule-hiding-10-rules

For each dataset of ../shared/data at the thresholds below, 5, 10 and 20
sensitive rules are drawn from the mined rules with numpy's generator seeded by
(seed, count); each sanitizer hides them and the side-effect metric
(plugins/rulehiding/side_effects.py) measures the result. ``exact`` runs only its
first stage (fewest removals) with a time limit (default 60 s) and is reported
as optimal only when CP-SAT proved it. ``--speed`` times reading, mining and
hiding 10 rules on retail with mfi-relevance. ``--sample N`` runs on N records
of each dataset drawn uniformly with the seed (kept in file order), small enough
for the exact model to finish.
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
        if args.sample and args.sample < dataset.n_records:
            picked = np.random.default_rng([args.seed, 7]).choice(dataset.n_records, args.sample, replace=False)
            dataset = dataset.subset(np.sort(picked)).compact()
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


COLUMNS = (("sanitizer", "sanitizer"), ("seconds", "s"), ("removed_item_occurrences", "removed"),
           ("modified_transactions", "modified"), ("hiding_failure", "HF"), ("lost_rules", "lost"),
           ("misses_cost", "MC"), ("ghost_rules", "ghost"), ("artifactual_patterns", "AP"),
           ("dissimilarity", "diss"), ("side_effect_factor", "SEF"))


def report(args: argparse.Namespace) -> None:
    """Markdown tables (one per dataset and rule count) from a results file."""
    rows = json.loads(Path(args.report).read_text())
    groups: dict[tuple, list] = {}
    for row in rows:
        groups.setdefault((row["data"], row["rules"]), []).append(row)
    for (data, count), members in groups.items():
        first = next((r for r in members if "error" not in r), members[0])
        print(f"\n**{data}**, {first.get('records', '?')} records, MST {first.get('min_support')}, "
              f"MCT {first.get('min_confidence')}, {first.get('mined_rules')} rules, {count} sensitive\n")
        print("| " + " | ".join(title for _, title in COLUMNS) + " | exact status |")
        print("|" + "---|" * (len(COLUMNS) + 1))
        for row in members:
            if "error" in row:
                print(f"| {row['sanitizer']} | " + " | ".join("-" for _ in COLUMNS[1:]) + f" | {row['error'][:60]} |")
                continue
            cells = []
            for key, _ in COLUMNS:
                value = row[key]
                cells.append(f"{value:.4f}" if isinstance(value, float) and key != "seconds" else str(value))
            status = ""
            if row["sanitizer"] == "exact":
                status = "optimal" if row["optimal"] else f"not proved (bound {row['bound']})"
            print("| " + " | ".join(cells) + f" | {status} |")


def gaps(args: argparse.Namespace) -> None:
    """How far each heuristic's removals are above the optimum (when proved) or
    above the solver's proven lower bound (an upper bound on the gap)."""
    rows = json.loads(Path(args.report).read_text())
    print("\n| data | sensitive | exact | " + " | ".join(HEURISTICS) + " |")
    print("|---|---|---|" + "---|" * len(HEURISTICS))
    groups: dict[tuple, dict] = {}
    for row in rows:
        groups.setdefault((row["data"], row["rules"]), {})[row["sanitizer"]] = row
    for (data, count), by_name in groups.items():
        exact = by_name.get("exact", {})
        if "error" in exact or not exact:
            continue
        reference = exact["removed_item_occurrences"] if exact["optimal"] else exact["bound"]
        label = f"optimum {reference}" if exact["optimal"] else f"bound {reference} (best {exact['removed_item_occurrences']})"
        cells = []
        for name in HEURISTICS:
            removed = by_name[name]["removed_item_occurrences"]
            ratio = f"{removed / reference:.2f}x" if reference else "-"
            cells.append(f"{removed} ({'' if exact['optimal'] else '<= '}{ratio})")
        print(f"| {data} | {count} | {label} | " + " | ".join(cells) + " |")


def plot(args: argparse.Namespace) -> None:
    """Lost rules and removed occurrences per sanitizer, 10 sensitive rules (PNG + SVG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in json.loads(Path(args.report).read_text()) if r["rules"] == 10 and "error" not in r]
    datasets = [d for d in SETTINGS if any(r["data"] == d for r in rows)]
    names = (*HEURISTICS, "exact")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    width = 0.2
    for k, name in enumerate(names):
        for ax, key in zip(axes, ("lost_rules", "removed_item_occurrences")):
            values = [next((r[key] for r in rows if r["data"] == d and r["sanitizer"] == name), 0) for d in datasets]
            ax.bar([x + (k - 1.5) * width for x in range(len(datasets))], values, width, label=name)
    for ax, title in zip(axes, ("lost non-sensitive rules", "removed item occurrences")):
        ax.set_xticks(range(len(datasets)), datasets)
        ax.set_title(f"{title} (10 sensitive rules)")
        ax.set_yscale("log")
    axes[0].legend()
    fig.tight_layout()
    for suffix in ("png", "svg"):
        fig.savefig(Path(args.plot).with_suffix(f".{suffix}"), dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    parser.add_argument("--counts", nargs="+", type=int, default=[5, 10, 20])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--sample", type=int, default=None, help="use N records of each dataset drawn with the seed")
    parser.add_argument("--out", default=None)
    parser.add_argument("--speed", action="store_true")
    parser.add_argument("--report", default=None, metavar="RESULTS.json", help="print Markdown tables of a results file")
    parser.add_argument("--plot", default=None, metavar="FIGURE", help="with --report: also draw FIGURE.png and FIGURE.svg")
    args = parser.parse_args()
    if args.report:
        report(args)
        gaps(args)
        if args.plot:
            plot(args)
    elif args.speed:
        speed(args)
    else:
        experiments(args)


if __name__ == "__main__":
    main()
