"""Rule hiding: speed of one hide, and each heuristic's distance to the optimum.

The side-effect tables are made by `privtool compare` (one command per dataset,
docs/results/rule-hiding.md) and printed with `benchmarks/compare_table.py`;
this script adds what a single compare folder does not tabulate:

    .venv/bin/python benchmarks/rule_hiding.py --speed
    .venv/bin/python benchmarks/rule_hiding.py --gaps DIR [DIR ...]

``--speed`` times reading retail, then choosing 10 of its rules at MST 0.005 /
MCT 0.5 (mining) and hiding them with mfi-relevance, through
:func:`privtool.hiding.hide`, the code path of ``privtool hide`` and ``compare``.
``--gaps`` reads compare folders whose ``exact`` method ran with the heuristics
and prints, per folder and sensitive-rule count, each heuristic's removed
occurrences and their ratio to the proven optimum (or to CP-SAT's proven lower
bound, which makes the ratio an upper bound on the gap).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from compare_table import read_rows

from privtool.context import Context
from privtool.hiding import hide
from privtool.io import read_dataset
from privtool.registry import load_registry

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
REMOVED = "rule-side-effects.removed_item_occurrences"


def speed() -> None:
    registry = load_registry()
    start = time.perf_counter()
    dataset = read_dataset(registry, DATA / "retail.dat.gz")
    read = time.perf_counter() - start
    start = time.perf_counter()
    outcome = hide(
        registry,
        dataset,
        "mfi-relevance",
        {"sensitive": 10, "min_support": 0.005, "min_confidence": 0.5},
        Context(seed=0),
    )
    print(
        f"read {read:.2f} s; choosing 10 rules (mining) and hiding them: {time.perf_counter() - start:.2f} s; "
        f"removed {outcome.trail.stats['removed_item_occurrences']} occurrences"
    )


def gaps(folders: list[Path]) -> None:
    tables = [(folder, read_rows(folder)) for folder in folders]
    heuristics = list(dict.fromkeys(row["method"] for _, rows in tables for row in rows if row["method"] != "exact"))
    print("| data | sensitive | exact | " + " | ".join(heuristics) + " |")
    print("|---|---:|---|" + "---:|" * len(heuristics))
    for folder, rows in tables:
        for count in sorted({row["sensitive"] for row in rows}, key=int):
            members = {row["method"]: row for row in rows if row["sensitive"] == count}
            exact = members.get("exact")
            if exact is None or exact.get("error"):
                continue
            optimal = float(exact["notes.removal_optimal"]) == 1.0
            reference = int(float(exact[REMOVED] if optimal else exact["notes.removal_bound"]))
            label = f"optimum {reference}" if optimal else f"bound {reference} (best {exact[REMOVED]})"
            cells = []
            for method in heuristics:
                removed = int(float(members[method][REMOVED]))
                ratio = f"{removed / reference:.2f}x" if reference else "-"
                cells.append(f"{removed} ({'' if optimal else '<= '}{ratio})")
            print(f"| {folder.name} | {count} | {label} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--speed", action="store_true")
    parser.add_argument("--gaps", nargs="+", type=Path, default=None, metavar="DIR")
    args = parser.parse_args()
    if args.speed:
        speed()
    if args.gaps:
        gaps(args.gaps)
    if not (args.speed or args.gaps):
        parser.error("give --speed or --gaps DIR ...")


if __name__ == "__main__":
    main()
