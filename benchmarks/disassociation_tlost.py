"""tlost of disassociation for k = 2..6 (m = 2) under the horizontal
partitioners (by default the four of the strategies paper), with and without
REFINE (issue 3, reproduction of the strategies paper's Figures 3-5).

Usage (from the repository root)::

    .venv/bin/python benchmarks/disassociation_tlost.py \\
        [--data bms-webview-1=../shared/data/bms-webview-1.dat.gz,...] \\
        [--ks 2,3,4,5,6] [--max-cluster-size 30] [--refine both|no|yes] \\
        [--partitioners horpart,adding,...] [--out docs/results/disassociation-tlost]

Every run is the real method (``run_method``: partitioner, VERPART, REFINE,
release building) in this process with the serial executor; tlost is the
registered metric computed on the release, with the trail. One JSON line per
run on stdout; ``--out PREFIX`` also writes PREFIX.json, PREFIX.png, PREFIX.svg.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from privtool.components import Evidence
from privtool.context import Context
from privtool.io import read_dataset
from privtool.pipeline import run_method
from privtool.registry import load_registry

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
DEFAULT_DATA = f"bms-webview-1={SHARED / 'bms-webview-1.dat.gz'},bms-webview-2={SHARED / 'bms-webview-2.dat.gz'}"
PARTITIONERS = ("horpart", "adding", "remaining-list", "suppression")
LABELS = {
    "horpart": "original, abandon rule (horpart)",
    "horpart-literal": "HORPART as printed (horpart-literal)",
    "adding": "adding",
    "adding-skip-sibling": "adding, skip the sibling",
    "remaining-list": "remaining list",
    "suppression": "suppression",
}


def run(args: argparse.Namespace) -> list[dict]:
    registry = load_registry()
    metric = registry.get("metric", "tlost")
    refine_values = {"both": (False, True), "no": (False,), "yes": (True,)}[args.refine]
    rows = []
    for spec in args.data.split(","):
        name, path = spec.split("=", 1)
        dataset = read_dataset(registry, path)
        for k in [int(x) for x in args.ks.split(",")]:
            for partitioner in args.partitioners.split(","):
                for refine in refine_values:
                    options = {
                        "partitioner": partitioner,
                        "k": k,
                        "m": 2,
                        "max_cluster_size": args.max_cluster_size,
                        "refiner": "refine" if refine else "none",
                    }
                    wall, cpu = time.perf_counter(), time.process_time()
                    outcome = run_method(registry, dataset, "disassociation", options, Context())
                    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                    values = metric.compute(outcome.release, Evidence(dataset, outcome.trail), {"k": None}, Context())
                    stats = outcome.release.stats
                    row = {
                        "data": name,
                        "records": dataset.n_records,
                        **{key: value for key, value in options.items() if key != "refiner"},
                        "refine": refine,
                        **values,
                        "suppressed_records": stats["suppressed_records"],
                        "clusters": stats["clusters"],
                        "joint_clusters": stats["joint_clusters"],
                        "wall_s": round(wall, 2),
                        "cpu_s": round(cpu, 2),
                    }
                    print(json.dumps(row), flush=True)
                    rows.append(row)
    return rows


def plot(rows: list[dict], prefix: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = list(dict.fromkeys(r["data"] for r in rows))
    refines = sorted({r["refine"] for r in rows})
    metrics = ("tlost_terms", "tlost_terms_everywhere", "tlost_occurrences")
    panels = [(d, metric, refine) for d in datasets for refine in refines for metric in metrics]
    cols = len(metrics) * len(refines)
    fig, axes = plt.subplots(len(datasets), cols, figsize=(3.3 * cols, 3.2 * len(datasets)), squeeze=False)
    for ax, (d, metric, refine) in zip(axes.flat, panels, strict=False):
        sub = [r for r in rows if r["data"] == d and r["refine"] == refine]
        ks = sorted({r["k"] for r in sub})
        parts = list(dict.fromkeys(r["partitioner"] for r in sub))
        width = 0.8 / len(parts)
        for j, p in enumerate(parts):
            values = [next(r[metric] for r in sub if r["k"] == k and r["partitioner"] == p) for k in ks]
            ax.bar([i + (j - (len(parts) - 1) / 2) * width for i in range(len(ks))], values, width, label=LABELS[p])
        ax.set_xticks(range(len(ks)), [str(k) for k in ks])
        ax.set_xlabel("k")
        ax.set_ylim(0, 1)
        ax.set_title(f"{d}\n{metric}, {'refine' if refine else 'no refine'}", fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    axes.flat[0].legend(fontsize=6, loc="lower left")
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(f"{prefix}.{ext}", dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=DEFAULT_DATA, help="NAME=PATH pairs, comma-separated")
    parser.add_argument("--ks", default="2,3,4,5,6")
    parser.add_argument("--partitioners", default=",".join(PARTITIONERS))
    parser.add_argument("--max-cluster-size", type=int, default=30)
    parser.add_argument("--refine", default="both", choices=("both", "no", "yes"))
    parser.add_argument("--out", default=None, metavar="PREFIX")
    parser.add_argument("--plot-only", action="store_true", help="re-plot PREFIX.json without running")
    args = parser.parse_args()
    if args.plot_only:
        rows = json.loads(Path(f"{args.out}.json").read_text())["runs"]
    else:
        rows = run(args)
        if args.out:
            Path(f"{args.out}.json").write_text(
                json.dumps({"command": " ".join(sys.argv), "runs": rows}, indent=1) + "\n"
            )
    if args.out:
        plot(rows, args.out)


if __name__ == "__main__":
    main()
