"""NCP and time of ``partition`` and ``lgr`` on BMS-WebView-2 with the staged
range hierarchy, for k = 2, 3, 5, 10, 25, 30 (issue 5).

Usage (from the repository root)::

    .venv/bin/python benchmarks/generalization.py [--ks 2,3,5,10,25,30] [--repeat 1] \
        [--plot docs/results/generalization]
    .venv/bin/python benchmarks/generalization.py --random 300   # lgr vs partition on random data
    .venv/bin/python benchmarks/generalization.py --methods lgr:m=1,lgr:m=2 --ks 3,5,10,25,30

A method is ``NAME`` or ``NAME:m=M`` (``lgr`` under k^m-anonymity).


Each run times the anonymizer call (reading the hierarchy, the algorithm, and
building the release and trail; the dataset is read once beforehand and its
reading time is printed separately): wall-clock seconds and the CPU seconds of
this process (the machine may be shared; CPU time shows the work itself). It
prints one JSON line per run and, with ``--plot``, writes PREFIX.png and
PREFIX.svg and PREFIX.json.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from privtool.context import Context
from privtool.io import read_dataset
from privtool.registry import load_registry

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
PUBLIC_PARTITION = {2: (11.2, 3.49), 5: (6.5, 5.14), 10: (5.2, 6.31)}
"""qiyuangong/Partition_for_Transaction on this machine (ALGORITHM-NOTES §8): k -> (seconds, NCP %)."""
PAPER_HGHS = {3: 0.29, 5: 0.38, 10: 0.5, 25: 0.93, 30: 2.44}
"""HgHs NCP % on BMS-WebView-2 as quoted in the LGR paper's text (§5.2)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ks", default="2,3,5,10,25,30")
    parser.add_argument("--methods", default="partition,lgr")
    parser.add_argument("--repeat", type=int, default=1, help="runs per point; the median time is kept")
    parser.add_argument("--gain", default="leaves", choices=("leaves", "exact"))
    parser.add_argument("--plot", default=None, metavar="PREFIX")
    parser.add_argument(
        "--random", type=int, default=0, metavar="N", help="instead: N random datasets and balanced trees"
    )
    args = parser.parse_args()
    if args.random:
        random_trials(args.random, args.gain)
        return
    registry = load_registry()
    start = time.perf_counter()
    dataset = read_dataset(registry, SHARED / "bms-webview-2.dat.gz")
    print(json.dumps({"read_dataset_seconds": round(time.perf_counter() - start, 3)}))
    hierarchy = str(SHARED / "hierarchies" / "bms-webview-2-ranges.csv.gz")
    rows = []
    for k in (int(x) for x in args.ks.split(",")):
        for method in args.methods.split(","):
            name, _, options = method.partition(":")
            params = {"k": k, "hierarchy": hierarchy, "hierarchy_format": "auto", "gain": args.gain}
            params.update((key, int(value)) for key, value in (o.split("=") for o in options.split(";") if o))
            walls, cpus = [], []
            for _ in range(args.repeat):
                wall, cpu = time.perf_counter(), time.process_time()
                outcome = registry.get("anonymizer", name).anonymize(dataset, params, Context(seed=0))
                walls.append(time.perf_counter() - wall)
                cpus.append(time.process_time() - cpu)
            stats = outcome.release.stats
            row = {
                "method": method,
                "k": k,
                "wall_seconds": round(sorted(walls)[len(walls) // 2], 3),
                "cpu_seconds": round(sorted(cpus)[len(cpus) // 2], 3),
                "ncp_percent": round(stats["ncp_percent"], 4),
                "groups": stats["groups"],
                "smallest_group": stats["smallest_group"],
                "moves": {key: value for key, value in outcome.trail.notes.items() if key not in ("groups", "method")},
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.plot:
        plot(rows, args.plot)


def random_trials(n: int, gain: str) -> None:
    """How often, and by how much, lgr's reallocation lowers partition's NCP on
    small random data (5-59 items, balanced trees of fan-out 2-4, 10-199
    records of 1-4 items, k = 2-5; seed 1)."""
    import numpy as np

    from privtool.dataset import Dataset
    from privtool.hierarchy import Hierarchy
    from privtool.plugins.generalization.reallocation import reallocate
    from privtool.plugins.generalization.topdown import top_down

    rng = np.random.default_rng(1)
    improved, gains = 0, []
    for _ in range(n):
        labels = [str(i) for i in range(int(rng.integers(5, 60)))]
        hier = Hierarchy.balanced(labels, int(rng.integers(2, 5)))
        records = [
            list(rng.choice(labels, size=int(rng.integers(1, 5)), replace=False))
            for _ in range(int(rng.integers(10, 200)))
        ]
        dataset = Dataset.from_records(records, labels=sorted(labels, key=int))
        occ_leaf = hier.leaf_ids(dataset)[dataset.items]
        k = int(rng.integers(2, 6))
        top = top_down(hier, dataset.indptr, occ_leaf, k, gain)
        after, _ = reallocate(hier, dataset.indptr, occ_leaf, k, top)
        gain_ncp = float(hier.ncp[top.gen].mean() - hier.ncp[after.gen].mean())
        improved += gain_ncp > 1e-12
        gains.append(gain_ncp)
    print(
        json.dumps(
            {"trials": n, "lgr_lower": improved, "largest_ncp_drop": max(gains), "mean_ncp_drop": float(np.mean(gains))}
        )
    )


def plot(rows: list[dict], prefix: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_ncp, ax_time) = plt.subplots(1, 2, figsize=(10, 4))
    for method, marker in zip(dict.fromkeys(r["method"] for r in rows), "osD^v", strict=False):
        points = [r for r in rows if r["method"] == method]
        ks = [r["k"] for r in points]
        ax_ncp.plot(ks, [r["ncp_percent"] for r in points], marker=marker, label=f"privtool {method}")
        ax_time.plot(ks, [r["cpu_seconds"] for r in points], marker=marker, label=f"privtool {method} (CPU s)")
    ax_ncp.plot(
        list(PUBLIC_PARTITION), [v[1] for v in PUBLIC_PARTITION.values()], "x--", label="public Partition (Python)"
    )
    ax_ncp.plot(list(PAPER_HGHS), list(PAPER_HGHS.values()), "^:", label="HgHs (LGR paper's text)")
    ax_time.plot(
        list(PUBLIC_PARTITION), [v[0] for v in PUBLIC_PARTITION.values()], "x--", label="public Partition (wall s)"
    )
    ax_ncp.set(xlabel="k", ylabel="NCP (%)", title="BMS-WebView-2, range hierarchy")
    ax_time.set(xlabel="k", ylabel="seconds", title="time per run")
    for ax in (ax_ncp, ax_time):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    Path(prefix).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(f"{prefix}.png", dpi=120)
    fig.savefig(f"{prefix}.svg")
    Path(f"{prefix}.json").write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
