"""Time, peak memory and NCP of ``privtool anonymize --method aa`` on
BMS-WebView-2 with the range hierarchy of the partition/lgr results (issue 19,
item 5), against the public Python AA (qiyuangong/Apriori_based_Anonymization)
measured on this machine class: 126 s, 4.1 GB peak, NCP 5.79 % at k = 5, m = 2
(ALGORITHM-NOTES §8).

Usage (from the repository root)::

    .venv/bin/python benchmarks/aa.py [--cases 5:2,10:2,5:3] [--repeat 3] [--order itemset] [--cost ncp] [--work DIR]

Each case is the whole command in a fresh process (start-up, reading the data
and the hierarchy, AA, writing release and trail), measured with ``os.wait4``
(:func:`disassociation_speed.measure`): median wall and CPU seconds (user +
system) and the largest peak resident memory of ``--repeat`` runs. NCP is then
recomputed from the written release, trail and original by the ``ncp`` metric,
and the release is checked k^m-anonymous by an independent count of every
itemset of up to m published labels. One JSON line per case.
"""

from __future__ import annotations

import argparse
import itertools
import json
import tempfile
from collections import Counter
from pathlib import Path

from disassociation_speed import PRIVTOOL, SHARED, measure

from privtool.components import Evidence
from privtool.context import Context
from privtool.dataset import Dataset
from privtool.io import read_dataset
from privtool.itemset_mining import pair_supports
from privtool.registry import load_registry
from privtool.release import read_release
from privtool.trail import read_trail

HIERARCHY = SHARED / "hierarchies" / "bms-webview-2-ranges.csv.gz"
PUBLIC_AA = {"k": 5, "m": 2, "wall_s": 126.0, "peak_mb": 4.1 * 1024, "ncp_percent": 5.79}


def smallest_support(records: list[list[str]], m: int) -> int:
    """The least support of an itemset of 1..m labels that some record holds,
    counted independently of aa's own counter: one sparse product for the
    labels and pairs, Python counting for larger itemsets."""
    published = Dataset.from_records(records)
    supports = pair_supports(published, list(published.labels))
    smallest = int(supports[supports > 0].min()) if m >= 2 else int(published.supports.min())
    counts: Counter[tuple[str, ...]] = Counter()
    for record in records:
        for size in range(3, m + 1):
            counts.update(itertools.combinations(record, size))
    return min([smallest, *counts.values()])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default="5:2", help="k:m pairs, comma-separated")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--order", default="itemset", choices=("itemset", "support"))
    parser.add_argument("--cost", default="ncp", choices=("ncp", "leaves"))
    parser.add_argument("--work", default=None, help="folder for releases and trails (default: a temporary one)")
    args = parser.parse_args()
    registry = load_registry()
    data = SHARED / "bms-webview-2.dat.gz"
    original = read_dataset(registry, data)
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(args.work or scratch)
        work.mkdir(parents=True, exist_ok=True)
        for case in args.cases.split(","):
            k, m = (int(x) for x in case.split(":"))
            release_path, trail_path = work / f"aa-k{k}-m{m}.json", work / f"aa-k{k}-m{m}.trail.json"
            argv = [PRIVTOOL, "anonymize", str(data), "--method", "aa", "--k", str(k), "--m", str(m)]
            argv += ["--hierarchy", str(HIERARCHY), "--order", args.order, "--cost", args.cost, "-o", str(release_path)]
            argv += ["--trail", str(trail_path), "--executor", "serial", "-q"]
            runs = [measure(argv) for _ in range(args.repeat)]
            release, trail = read_release(release_path), read_trail(trail_path)
            ncp = registry.get("metric", "ncp").compute(release, Evidence(original, trail), {}, Context())
            row = {
                "k": k,
                "m": m,
                "order": args.order,
                "cost": args.cost,
                "wall_s": round(sorted(r["wall_s"] for r in runs)[len(runs) // 2], 2),
                "cpu_s": round(sorted(r["cpu_s"] for r in runs)[len(runs) // 2], 2),
                "peak_mb": round(max(r["peak_mb"] for r in runs), 1),
                "ncp_percent": round(ncp["ncp_percent"], 4),
                "smallest_itemset_support": smallest_support(release.records, m),
                "published_nodes": trail.stats["published_nodes"],
                "repairs": {key: v for key, v in trail.notes.items() if key.startswith("generalisations_")},
            }
            if (k, m) == (PUBLIC_AA["k"], PUBLIC_AA["m"]):
                row["public_aa"] = PUBLIC_AA
                row["times_faster_wall"] = round(PUBLIC_AA["wall_s"] / row["wall_s"], 1)
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
