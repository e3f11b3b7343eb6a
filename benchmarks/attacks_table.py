"""The real-data attack table of issue 7, item 3, regenerated in one command.

    .venv/bin/python benchmarks/attacks_table.py

For bms-webview-1 and bms-webview-2 at k = 5, m = 2 it makes every release
below in memory (seed 0) and attacks it:

* ``disassociation`` with each partitioner (``horpart``, ``suppression``,
  ``adding``, ``remaining-list``; max cluster size 30, REFINE on), without and
  with the ``safe-disassociation`` sanitizer;
* ``partition`` and ``lgr`` through a hierarchy: bms-webview-2 the staged
  ``hierarchies/bms-webview-2-ranges.csv.gz``, bms-webview-1 the code-prefix
  hierarchy written by ``privtool hierarchy build DATA --prefix 1,2,3,4``
  (its items all have 5 digits).

Attacks: ``linkage`` (background knowledge of every 1- and 2-itemset of a
target; the same seeded sample of ``--targets`` original records for every
release of a dataset, or all records with ``--targets 0``) and, on
disassociated releases, ``cover-linkage`` (the cover problem's certain links:
its ``breach`` findings are the breaches the safe-disassociation paper's
lemma 1 predicts, its ``risk`` findings partial certain links).

Writes ``--json`` (every number, with the load average and seconds) and
replaces the table between the ``attacks-table`` markers of ``--markdown``.
Seconds are wall time on a shared machine: upper bounds, not comparable
across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

from privtool.assess import run_attacks
from privtool.atomic import write_text_atomic
from privtool.cli import main as privtool_main
from privtool.components import Evidence
from privtool.context import Context
from privtool.executors import make_executor
from privtool.io import read_dataset
from privtool.pipeline import run_method
from privtool.registry import load_registry

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data"
K, M, MAX_CLUSTER_SIZE = 5, 2, 30
PARTITIONERS = ("horpart", "suppression", "adding", "remaining-list")
BEGIN, END = "<!-- attacks-table:begin -->", "<!-- attacks-table:end -->"


def hierarchy_for(name: str, out: Path) -> str:
    """The hierarchy file of a dataset (built for bms-webview-1)."""
    if name == "bms-webview-2":
        return str(DATA / "hierarchies" / "bms-webview-2-ranges.csv.gz")
    path = out / f"{name}-prefix-1234.csv"
    if privtool_main(["hierarchy", "build", str(DATA / f"{name}.dat.gz"), "--prefix", "1,2,3,4", "-o", str(path)]) != 0:
        raise SystemExit(f"could not build the prefix hierarchy of {name}")
    return str(path)


def releases_of(hierarchy: str) -> list[tuple[str, str, dict[str, Any], tuple[str, ...]]]:
    """(row label, method, options, sanitizers) of every release of the table."""
    rows = []
    for partitioner in PARTITIONERS:
        options = {"k": K, "m": M, "max_cluster_size": MAX_CLUSTER_SIZE, "partitioner": partitioner}
        rows.append((f"disassociation {partitioner}", "disassociation", options, ()))
        rows.append((f"disassociation {partitioner} + safe", "disassociation", options, ("safe-disassociation",)))
    for method in ("partition", "lgr"):
        rows.append((method, method, {"k": K, "hierarchy": hierarchy}, ()))
    return rows


def attack_row(
    registry, dataset, label: str, method: str, options: dict, sanitizers: tuple, targets: int | None, ctx: Context
) -> dict[str, Any]:
    started = time.perf_counter()
    outcome = run_method(registry, dataset, method, options, ctx, sanitizers)
    release = outcome.release
    anonymize_s = time.perf_counter() - started
    names = ["linkage"] + (["cover-linkage"] if release.kind == "disassociated" else [])
    started = time.perf_counter()
    runs = {
        run.attack: run
        for run in run_attacks(
            registry, release, Evidence(original=dataset), names, {"known": M, "targets": targets}, ctx
        )
    }
    summary = runs["linkage"].findings[0].evidence
    row = {
        "release": label,
        "kind": release.kind,
        "records_published": release.stats.get("records_published"),
        "suppressed_records": outcome.trail.stats.get("suppressed_records", release.stats.get("suppressed_records", 0)),
        "ghost_records": outcome.trail.stats.get("ghost_records", 0),
        **{
            key: summary[key]
            for key in (
                "targets",
                "itemsets_tried",
                "records_at_risk",
                "share_at_risk",
                "highest_risk",
                "average_success_rate",
            )
        },
        "linkage_breaches": sum(1 for f in runs["linkage"].findings if f.severity == "breach"),
        "anonymize_s": round(anonymize_s, 1),
        "linkage_s": round(runs["linkage"].seconds, 1),
    }
    if "cover-linkage" in runs:
        cover = runs["cover-linkage"].findings
        row["cover_breaches"] = sum(1 for f in cover if f.severity == "breach")
        row["cover_risks"] = sum(1 for f in cover if f.severity == "risk")
        row["cover_s"] = round(runs["cover-linkage"].seconds, 1)
    print(json.dumps(row), flush=True)
    return row


def markdown(results: dict[str, Any], command: str) -> str:
    lines = [
        BEGIN,
        "",
        (
            f"Produced by `{command}` ({results['targets_note']}; load average "
            f"{results['load_before']} before, {results['load_after']} after; {results['total_s']} s wall in all)."
        ),
        "",
        "| data | release | published (suppressed, ghost) | at risk / targets | highest risk | average success "
        "| cover breaches | cover risks | s: anonymize / linkage / cover |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, rows in results["datasets"].items():
        for r in rows:
            cover = f"{r['cover_breaches']:,}" if "cover_breaches" in r else "–"
            risks = f"{r['cover_risks']:,}" if "cover_risks" in r else "–"
            seconds = f"{r['anonymize_s']} / {r['linkage_s']} / {r.get('cover_s', '–')}"
            lines.append(
                f"| {name} | {r['release']} | {r['records_published']:,} ({r['suppressed_records']:,}, "
                f"{r['ghost_records']:,}) "
                f"| {r['records_at_risk']:,} / {r['targets']:,} ({100 * r['share_at_risk']:.2f} %) | "
                f"{r['highest_risk']:.4g} "
                f"| {r['average_success_rate']:.4f} | {cover} | {risks} | {seconds} |"
            )
    lines += ["", END]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--targets", type=int, default=5000, help="seeded sample of original records per dataset (0: all)"
    )
    parser.add_argument("--datasets", default="bms-webview-1,bms-webview-2")
    parser.add_argument("--executor", default="serial", choices=("serial", "process"))
    parser.add_argument(
        "--out", default=str(REPO / "benchmarks" / "out" / "attacks-table"), help="folder for built hierarchies"
    )
    parser.add_argument("--json", default=str(REPO / "docs" / "results" / "attacks-table.json"))
    parser.add_argument("--markdown", default=str(REPO / "docs" / "results" / "attacks.md"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    registry = load_registry()
    ctx = Context(seed=0, executor=make_executor(args.executor))
    targets = args.targets or None
    started, load_before = time.perf_counter(), os.getloadavg()[0]
    results: dict[str, Any] = {"k": K, "m": M, "max_cluster_size": MAX_CLUSTER_SIZE, "seed": 0, "datasets": {}}
    try:
        for name in args.datasets.split(","):
            dataset = read_dataset(registry, str(DATA / f"{name}.dat.gz"), None, {})
            hierarchy = hierarchy_for(name, out)
            results["datasets"][name] = [
                attack_row(registry, dataset, label, method, options, sanitizers, targets, ctx)
                for label, method, options, sanitizers in releases_of(hierarchy)
            ]
    finally:
        ctx.executor.close()
    results["targets_note"] = (
        f"a seeded sample of {targets:,} original records per dataset" if targets else "every original record"
    )
    results["load_before"], results["load_after"] = round(load_before, 1), round(os.getloadavg()[0], 1)
    results["total_s"] = round(time.perf_counter() - started)
    write_text_atomic(args.json, json.dumps(results, indent=1) + "\n")
    command = " ".join([".venv/bin/python benchmarks/attacks_table.py", *sys.argv[1:]])
    page = Path(args.markdown).read_text()
    block = markdown(results, command)
    if BEGIN in page and END in page:
        page = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: block, page, flags=re.DOTALL)
    else:
        page = page.rstrip("\n") + "\n\n" + block + "\n"
    write_text_atomic(args.markdown, page)


if __name__ == "__main__":
    main()
