"""The algorithm-aware adversary on bms-webview-1/2: the table of issue 17.

    .venv/bin/python benchmarks/algorithm_aware.py [--ks 3,4,5,6] [--json docs/results/algorithm-aware.json]

For each dataset and each k (m = 2, max cluster size 30, the disassociation
method's defaults: the ``adding`` partitioner and REFINE, seed 0, serial) it
makes the disassociated release, then the ``safe-disassociation`` (faithful)
and ``safe-disassociation-hardened`` releases from it (the latter with its
default ``min_preimages`` = k, with 2, and with decoys at ``decoy_bound``
0.5), and measures on each safe release:

* ``preimage``: chunks with pre-images under the release's own rules, those
  with exactly one, those with an item covered in every pre-image, and, with
  the trail, how many of the repaired chunks (those with ghost sub-records,
  decoys aside) have a unique pre-image, how many other chunks look repaired,
  and the repair distinguisher (the posterior of "repaired" for a chunk that
  admits a pre-image, overall and largest per shape);
* ``minimality``: itemsets pinned below k and the original records that hold
  one (the sound bound, exact on small clusters);
* ``forced-cooccurrence``: pairs forced together in every reconstruction
  (all, and those with neither item in every record of the cluster);
* RLM (``rlm_between`` the disassociated and the safe release) and the
  sanitizer's CPU seconds.

With ``--order`` it also measures issue 17, item 4: records the minimality
attack pins on the plain release (k = 5, m = 2) with VERPART's published
order and with ``verpart_order=random``.

Prints one JSON object per row and writes them all to ``--json`` with the
load average; ``--markdown FILE`` replaces the tables between the
``algorithm-aware`` markers of FILE (``--from-json A.json[,B.json]`` redraws
them from JSON files, rows joined in order, without measuring again). CPU seconds (``time.process_time``) of this
process only.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from functools import partial
from pathlib import Path
from typing import Any

from privtool.atomic import write_text_atomic
from privtool.attacks.forced_cooccurrence import ForcedCooccurrence
from privtool.attacks.minimality import Minimality
from privtool.attacks.preimage_attack import PreimageAttack
from privtool.components import Evidence, Outcome
from privtool.context import Context
from privtool.io import read_dataset
from privtool.pipeline import apply_sanitizers, run_method
from privtool.plugins.safe_disassociation.metrics import rlm_between
from privtool.registry import load_registry

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data"
DATASETS = ("bms-webview-1", "bms-webview-2")
SANITIZERS = (
    ("safe-disassociation", "safe-disassociation", None, None),
    ("safe-disassociation-hardened", "safe-disassociation-hardened", None, None),
    ("safe-disassociation-hardened (min-preimages 2)", "safe-disassociation-hardened", 2, None),
    ("safe-disassociation-hardened (decoys 0.5)", "safe-disassociation-hardened", None, 0.5),
)
"""(label, sanitizer, min_preimages, decoy_bound): the paper's, the hardened
one at its default (k pre-images), at the smallest setting, and with decoys
bounding the posterior of "repaired" by shape at 0.5."""
M, MAX_CLUSTER_SIZE = 2, 30


def timed(fn: Any) -> tuple[Any, float]:
    started = time.process_time()
    out = fn()
    return out, round(time.process_time() - started, 2)


def summary(findings: list[Any]) -> dict[str, Any]:
    """The evidence of an attack's summary finding, without the adversary sentence."""
    return {k: v for k, v in findings[0].evidence.items() if k != "adversary"} if findings else {}


def removal_reasons(runs: list[dict[str, Any]]) -> dict[str, int]:
    """Chunks the sanitizer removed, by the precondition that failed (``C``: the
    hardened step A could not reach its goal), from its trail notes."""
    out: dict[str, int] = {}
    for run in runs:
        for action in run["chunks"]:
            for reason in action.get("failed_preconditions", []):
                out[reason] = out.get(reason, 0) + 1
    return out


def measure_release(outcome: Outcome, data: Any) -> dict[str, Any]:
    """The three attacks on one release."""
    release, evidence = outcome.release, Evidence(original=data, trail=outcome.trail)
    ctx = Context()
    pre, pre_s = timed(lambda: PreimageAttack().run(release, evidence, {}, ctx))
    mini, mini_s = timed(lambda: Minimality().run(release, evidence, {"exact_limit": 2000}, ctx))
    forced, forced_s = timed(lambda: ForcedCooccurrence().run(release, evidence, {}, ctx))
    return {
        "preimage": summary(pre),
        "minimality": summary(mini),
        "forced": summary(forced),
        "seconds": {"preimage": pre_s, "minimality": mini_s, "forced": forced_s},
    }


def rows_for(registry: Any, name: str, ks: list[int]) -> list[dict[str, Any]]:
    data = read_dataset(registry, str(DATA / f"{name}.dat.gz"), None)
    rows = []
    for k in ks:
        params = {"k": k, "m": M, "max_cluster_size": MAX_CLUSTER_SIZE}
        plain, plain_s = timed(partial(run_method, registry, data, "disassociation", params, Context(seed=0)))
        for label, sanitizer, wanted, bound in SANITIZERS:
            chain = [registry.get("sanitizer", sanitizer)]
            values = {**params, "min_preimages": wanted, "decoy_bound": bound}
            start = Outcome(plain.release.canonical(), plain.trail)
            safe, safe_s = timed(partial(apply_sanitizers, registry, start, chain, values, Context(seed=0)))
            row = {
                "dataset": name,
                "k": k,
                "m": M,
                "sanitizer": label,
                "rlm": round(rlm_between(plain.release, safe.release), 4),
                "partially_suppressed_chunks": safe.release.stats.get("partially_suppressed_chunks"),
                "removed_chunks": safe.release.stats.get("suppressed_chunks"),
                "decoy_chunks": safe.release.stats.get("decoy_chunks", 0),
                "removed_by_reason": removal_reasons(safe.trail.notes.get(sanitizer, [])),
                "seconds_disassociation": plain_s,
                "seconds_sanitizer": safe_s,
                **measure_release(safe, data),
            }
            print(json.dumps(row), flush=True)
            rows.append(row)
    return rows


def order_rows(registry: Any) -> list[dict[str, Any]]:
    """Issue 17, item 4: the minimality attack on plain releases, by VERPART order."""
    rows = []
    for name in DATASETS:
        data = read_dataset(registry, str(DATA / f"{name}.dat.gz"), None)
        for order in ("support", "random"):
            params = {"k": 5, "m": M, "max_cluster_size": MAX_CLUSTER_SIZE, "verpart_order": order}
            plain = run_method(registry, data, "disassociation", params, Context(seed=0))
            evidence = Evidence(original=data, trail=plain.trail)
            attack = partial(Minimality().run, plain.release, evidence, {"exact_limit": 2000}, Context())
            found, seconds = timed(attack)
            row = {"dataset": name, "k": 5, "m": M, "verpart_order": order, **summary(found), "seconds": seconds}
            print(json.dumps(row), flush=True)
            rows.append(row)
    return rows


BEGIN, END = "<!-- algorithm-aware:begin -->", "<!-- algorithm-aware:end -->"


def _pct(part: int, whole: int) -> str:
    return f"{part:,} ({100 * part / whole:.1f} %)" if whole else "0"


def tables(out: dict[str, Any]) -> str:
    """The Markdown tables of docs/results/algorithm-aware.md."""
    lines = [
        "| dataset | k | sanitizer | RLM % | repaired chunks | repaired with 1 pre-image | chunks with an item "
        "covered in every pre-image | fewest pre-images | other chunks that look repaired (decoys) | repairs "
        "removed to hide the rest | P(repaired \\| looks repaired): all / largest by shape | records pinned "
        "(minimality) | forced pairs (partial) | CPU s sanitizer / preimage / minimality / forced |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---|",
    ]
    for r in out["rows"]:
        p, s = r["preimage"], r["seconds"]
        d = p.get("distinguisher", {})
        repaired = p.get("repaired_per_trail", 0)
        unique = p.get("chunks_with_one_preimage", 0) if p.get("fewest_preimages") == 1 else 0
        lines.append(
            f"| {r['dataset']} | {r['k']} | {r['sanitizer']} | {100 * r['rlm']:.1f} | {repaired:,} | "
            f"{_pct(min(unique, repaired), repaired)} | {p.get('chunks_covered_in_every_preimage', 0):,} | "
            f"{p.get('fewest_preimages', 0)} | {p.get('untouched_with_preimages', 0):,} "
            f"({r.get('decoy_chunks', 0):,}) | {r['removed_by_reason'].get('D', 0):,} | "
            f"{d.get('posterior_repaired_if_flagged', 0):.2f} / {d.get('largest_posterior_by_shape', 0):.2f} | "
            f"{r['minimality'].get('records_pinned', 0):,} | {r['forced'].get('forced_pairs', 0):,} "
            f"({r['forced'].get('forced_pairs_partial', 0):,}) | {r['seconds_sanitizer']} / {s['preimage']} / "
            f"{s['minimality']} / {s['forced']} |"
        )
    if out.get("order"):
        lines += [
            "",
            "| dataset | verpart_order | itemsets pinned | clusters with pins | records pinned "
            "| clusters exact / bound | CPU s |",
            "|---|---|---:|---:|---:|---|---:|",
        ]
        for r in out["order"]:
            lines.append(
                f"| {r['dataset']} | {r['verpart_order']} | {r['pinned_itemsets']:,} | {r['clusters_with_pins']:,} | "
                f"{r['records_pinned']:,} | {r['clusters_exact']:,} / {r['clusters_bound']:,} | {r['seconds']} |"
            )
    return "\n".join(lines)


def write_tables(out: dict[str, Any], path: str) -> None:
    text = Path(path).read_text(encoding="utf-8")
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    write_text_atomic(path, text[:start] + "\n" + tables(out) + "\n" + text[end:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ks", default="3,4,5,6")
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--order", action="store_true", help="also measure the VERPART order (item 4)")
    parser.add_argument("--json", default=None, help="write every row here (with --from-json: the joined rows)")
    parser.add_argument("--markdown", default=None, help="replace the tables between the markers of this file")
    parser.add_argument("--from-json", default=None, help="draw the tables from this JSON file, measure nothing")
    args = parser.parse_args()
    if args.from_json:
        parts = [json.loads(Path(name).read_text(encoding="utf-8")) for name in args.from_json.split(",")]
        joined: dict[str, Any] = {key: [r for part in parts for r in part.get(key, [])] for key in ("rows", "order")}
        joined["load_averages"] = [[p.get("load_average_at_start"), p.get("load_average_at_end")] for p in parts]
        if args.json:
            write_text_atomic(args.json, json.dumps(joined, indent=1) + "\n")
        if args.markdown:
            write_tables(joined, args.markdown)
        return
    registry = load_registry()
    ks = [int(k) for k in args.ks.split(",")]
    load = os.getloadavg()
    rows = [row for name in args.datasets.split(",") for row in rows_for(registry, name, ks)]
    out: dict[str, Any] = {"load_average_at_start": [round(x, 1) for x in load], "rows": rows}
    if args.order:
        out["order"] = order_rows(registry)
    out["load_average_at_end"] = [round(x, 1) for x in os.getloadavg()]
    if args.json:
        write_text_atomic(args.json, json.dumps(out, indent=1) + "\n")
    if args.markdown:
        write_tables(out, args.markdown)


if __name__ == "__main__":
    main()
