"""Rule hiding: speed of one hide, and each heuristic's distance to the optimum.

The side-effect tables are made by `privtool compare` (one command per dataset,
docs/results/rule-hiding.md) and printed with `benchmarks/compare_table.py`;
this script adds what a single compare folder does not tabulate:

    .venv/bin/python benchmarks/rule_hiding.py --speed [--method fhsar] [--data mushroom:0.4:0.8] [--sensitive 10]
    .venv/bin/python benchmarks/rule_hiding.py --gaps DIR [DIR ...]

``--speed`` times reading a dataset (default retail), then choosing
``--sensitive`` of its rules (default 10) at its thresholds (default MST 0.005 /
MCT 0.5; ``--data NAME:MST:MCT``) by mining, and hiding them with ``--method``
(default mfi-relevance), through :func:`privtool.hiding.hide`, the code path of
``privtool hide`` and ``compare`` (the rules are chosen first, then given to it,
so that mining and hiding are timed apart). It prints wall and CPU seconds of
each (the machine is shared: CPU seconds show the work) and the removed
occurrences.
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
from privtool.hiding import choose_rules, hide
from privtool.io import read_dataset
from privtool.mining import Thresholds
from privtool.registry import load_registry
from privtool.rulefile import rules_text

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
REMOVED = "rule-side-effects.removed_item_occurrences"


def speed(method: str, data: str, sensitive: int) -> None:
    name, min_support, min_confidence = data.split(":")
    thresholds = {"min_support": float(min_support), "min_confidence": float(min_confidence)}
    registry = load_registry()
    start = time.perf_counter()
    dataset = read_dataset(registry, DATA / f"{name}.dat.gz")
    read = time.perf_counter() - start
    ctx = Context(seed=0)
    wall, cpu = time.perf_counter(), time.process_time()
    rules = choose_rules(dataset, Thresholds.of(*thresholds.values(), dataset.n_records), {"sensitive": sensitive}, ctx)
    mining = (time.perf_counter() - wall, time.process_time() - cpu)
    wall, cpu = time.perf_counter(), time.process_time()
    outcome = hide(registry, dataset, method, {"sensitive_rules": rules_text(rules), **thresholds}, ctx)
    hiding = (time.perf_counter() - wall, time.process_time() - cpu)
    print(
        f"{name}, {sensitive} rules, {method}: read {read:.2f} s; choosing the rules (mining) {mining[0]:.2f} s wall, "
        f"{mining[1]:.2f} s CPU; hiding them {hiding[0]:.2f} s wall, {hiding[1]:.2f} s CPU; "
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
    parser.add_argument("--method", default="mfi-relevance", help="sanitizer that --speed times")
    parser.add_argument("--data", default="retail:0.005:0.5", help="NAME:MST:MCT of the --speed run")
    parser.add_argument("--sensitive", type=int, default=10, help="sensitive rules of the --speed run")
    parser.add_argument("--gaps", nargs="+", type=Path, default=None, metavar="DIR")
    args = parser.parse_args()
    if args.speed:
        speed(args.method, args.data, args.sensitive)
    if args.gaps:
        gaps(args.gaps)
    if not (args.speed or args.gaps):
        parser.error("give --speed or --gaps DIR ...")


if __name__ == "__main__":
    main()
