"""Reproduce the experiments of the safe-disassociation paper (section 5) on
bms-webview-1 and bms-webview-2.

    .venv/bin/python benchmarks/safe_disassociation_repro.py [--data ../shared/data] [--out docs/results]
        [--experiment k|m|delta|size ...] [--dataset bms-webview-1|bms-webview-2 ...] [--max-m 6]
        [--partitioner horpart|horpart-literal] [--plot-only]

Disassociation: ``privtool``'s ``disassociation`` method with a HORPART
partitioner (the paper disassociates with Terrovitis et al.'s algorithm):
``horpart`` (default; the abandon rule, whose abandoned splits leave clusters
larger than the maximum size) or ``horpart-literal`` (every split made, some
clusters smaller than k; the only clusters larger than the maximum size are
groups of identical records, which no split on a term can divide, whereas the
paper assumes in its section 4.2 that there are none); REFINE, serial
executor, seed 0; then the ``safe-disassociation`` sanitizer.

* PEM for k = 2..6 (m = 2, max cluster size 30) and for m = 2..6 (k = 3, 30);
* PEM, RLM, RAE (disassociated and safe) for max cluster size 10..60 (k = 3, m = 2),
  with RLM split by where the occurrences were: record chunks of clusters of at
  most the maximum size, record chunks of larger clusters, shared chunks
  (:func:`rlm_by_place`);
* run time of disassociation and of the sanitizer against dataset size (the first
  N records of bms-webview-1 followed by bms-webview-2, k = 3, m = 2, 30).

Results are merged into ``--out``/``safe-disassociation.json`` after each
experiment (under ``by_EXPERIMENT``, or ``by_EXPERIMENT@PARTITIONER`` for a
partitioner other than ``horpart``) (so experiments can run in separate processes, one after the other),
then plotted into ``safe-disassociation.png/svg``. Times are process CPU seconds
of one process.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from privtool.components import Evidence
from privtool.context import Context
from privtool.dataset import Dataset
from privtool.io import read_dataset
from privtool.pipeline import apply_sanitizers, run_method
from privtool.plugins.safe_disassociation.metrics import pem, rae, rlm
from privtool.registry import load_registry
from privtool.release import Release

DATASETS = ("bms-webview-1", "bms-webview-2")


def disassociate(registry, data: Dataset, k: int, m: int, delta: int, partitioner: str = "horpart"):
    """(disassociated outcome, safe outcome, seconds of each)."""
    options = {"k": k, "m": m, "max_cluster_size": delta, "partitioner": partitioner}
    ctx = Context(seed=0)
    started = time.process_time()
    plain = run_method(registry, data, "disassociation", options, ctx)
    middle = time.process_time()
    chain = [registry.get("sanitizer", "safe-disassociation")]
    safe = apply_sanitizers(
        registry,
        plain.__class__(plain.release.canonical(), plain.trail),
        chain,
        {"k": k, "m": m, "max_cluster_size": delta},
        ctx,
    )
    return plain, safe, middle - started, time.process_time() - middle


def rlm_by_place(plain: Release, safe: Release, delta: int) -> dict[str, Any]:
    """RLM's numerator and denominator split by where the chunk occurrences were:
    record chunks of clusters with at most ``delta`` records (``within``), of
    larger clusters (``oversized``), and shared chunks (``shared``); with the
    share of records in the larger clusters. The parts add up to RLM."""
    after = {c.id: c for c in safe.clusters}
    out: dict[str, Any] = {}
    places: dict[str, list[int]] = {"within": [0, 0], "oversized": [0, 0], "shared": [0, 0]}
    oversized_records = 0
    for cluster in plain.clusters:
        place = "within" if cluster.size <= delta else "oversized"
        oversized_records += cluster.size if place == "oversized" else 0
        before = sum(len(row) for rows in cluster.record_chunks for row in rows)
        places[place][0] += before
        places[place][1] += before - sum(len(row) for rows in after[cluster.id].record_chunks for row in rows)
    joints_after = {j.id: j for j in safe.joint_clusters}
    for joint in plain.joint_clusters:
        before = sum(len(row) for rows in joint.shared_chunks for row in rows)
        places["shared"][0] += before
        places["shared"][1] += before - sum(len(row) for rows in joints_after[joint.id].shared_chunks for row in rows)
    total = sum(b for b, _ in places.values())
    for place, (before, lost) in places.items():
        out[f"rlm_{place}"] = lost / before if before else 0.0
        out[f"occurrences_{place}"] = before / total if total else 0.0
        out[f"rlm_{place}_contribution"] = lost / total if total else 0.0
    records = sum(c.size for c in plain.clusters)
    out["oversized_records"] = oversized_records / records if records else 0.0
    out["oversized_clusters"] = sum(1 for c in plain.clusters if c.size > delta)
    return out


def run_experiment(
    registry, experiment: str, name: str, data: Dataset, max_m: int = 6, partitioner: str = "horpart"
) -> list[dict]:
    """The rows of one experiment on one dataset (see the module docstring)."""
    rows = []
    if experiment == "k":
        for k in range(2, 7):
            plain, safe, _, _ = disassociate(registry, data, k, 2, 30, partitioner)
            rows.append({"k": k, **pem(plain.release), "pem_safe": pem(safe.release)["pem"]})
    elif experiment == "m":
        for m in range(2, max_m + 1):
            plain, safe, _, _ = disassociate(registry, data, 3, m, 30, partitioner)
            rows.append({"m": m, **pem(plain.release), "pem_safe": pem(safe.release)["pem"]})
    elif experiment == "delta":
        for delta in range(10, 61, 10):
            plain, safe, t1, t2 = disassociate(registry, data, 3, 2, delta, partitioner)
            row = {
                "max_cluster_size": delta,
                **pem(plain.release),
                "pem_safe": pem(safe.release)["pem"],
                **rlm(safe.release),
                **rlm_by_place(plain.release, safe.release, delta),
            }
            parts = sum(row[f"rlm_{place}_contribution"] for place in ("within", "oversized", "shared"))
            assert abs(parts - row["rlm"]) < 1e-9, "the places of RLM must add up to RLM"
            row["rae_disassociated"] = rae(plain.release, Evidence(original=data))
            row["rae_safe"] = rae(safe.release, Evidence(original=data))
            row["seconds_disassociation"], row["seconds_safe"] = t1, t2
            row["stats_safe"] = safe.release.stats
            rows.append(row)
            print(name, experiment, {k: v for k, v in row.items() if k != "stats_safe"}, flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--out", default="docs/results")
    parser.add_argument("--experiment", choices=("k", "m", "delta", "size"), action="append", help="default: all")
    parser.add_argument("--dataset", choices=DATASETS, action="append", help="default: both")
    parser.add_argument("--max-m", type=int, default=6, help="largest m of the m experiment (default 6)")
    parser.add_argument("--partitioner", default="horpart", choices=("horpart", "horpart-literal"))
    parser.add_argument("--plot-only", action="store_true")
    args = parser.parse_args()
    out = Path(args.out)
    store = out / "safe-disassociation.json"
    results = json.loads(store.read_text()) if store.exists() else {}
    if not args.plot_only:
        registry = load_registry()
        names = args.dataset or list(DATASETS)
        datasets = {name: read_dataset(registry, f"{args.data}/{name}.dat.gz", None) for name in DATASETS}
        for experiment in args.experiment or ["k", "m", "delta", "size"]:
            if experiment == "size":
                both = [r for name in DATASETS for r in datasets[name].to_label_records()]
                rows = []
                for size in (10_000, 30_000, 50_000, 80_000, 100_000, len(both)):
                    _, _, t1, t2 = disassociate(registry, Dataset.from_records(both[:size]), 3, 2, 30)
                    rows.append({"records": size, "seconds_disassociation": t1, "seconds_safe": t2})
                    print("size", rows[-1], flush=True)
                results["by_size"] = rows
            else:
                key = f"by_{experiment}" + ("" if args.partitioner == "horpart" else f"@{args.partitioner}")
                for name in names:
                    rows = run_experiment(registry, experiment, name, datasets[name], args.max_m, args.partitioner)
                    results.setdefault(key, {})[name] = rows
                    print(name, experiment, "done", flush=True)
            store.write_text(json.dumps(results, indent=1) + "\n")
    plot(results, out)
    print(markdown(results))


def _pct(value: float) -> str:
    return f"{100 * value:.1f}"


def markdown(results: dict) -> str:
    """The tables of docs/results/safe-disassociation.md, from the stored results."""
    lines = []
    for key, x in (("by_k", "k"), ("by_m", "m")):
        for name, rows in results.get(key, {}).items():
            lines += [
                f"\n{name}, PEM by {x}\n",
                f"| {x} | record chunks | vulnerable | PEM % | PEM literal % | PEM after safe % |",
                "|---:|---:|---:|---:|---:|---:|",
            ]
            lines += [
                f"| {r[x]} | {r['record_chunks']} | {r['vulnerable_record_chunks']} | {_pct(r['pem'])} | "
                f"{_pct(r.get('pem_literal', float('nan')))} | {_pct(r['pem_safe'])} |"
                for r in rows
            ]
    for name, rows in results.get("by_delta", {}).items():
        lines += [
            f"\n{name}, k=3, m=2, by max cluster size\n",
            "| max cluster size | PEM % | PEM literal % | partial | fallback | RLM % | RLM real % | RAE sum "
            "disassociated | RAE sum safe | RAE mean disassociated | RAE mean safe | CPU s disassociation | CPU "
            "s sanitizer |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in rows:
            st = r["stats_safe"]
            lines.append(
                f"| {r['max_cluster_size']} | {_pct(r['pem'])} | {_pct(r['pem_literal'])} | "
                f"{st['partially_suppressed_chunks']} | {st['suppressed_chunks']} "
                f"| {_pct(r['rlm'])} | {_pct(r['rlm_real'])} | {r['rae_disassociated']['rae_sum']:.0f} | "
                f"{r['rae_safe']['rae_sum']:.0f} "
                f"| {r['rae_disassociated']['rae_mean']:.3f} | {r['rae_safe']['rae_mean']:.3f} | "
                f"{r['seconds_disassociation']:.2f} | {r['seconds_safe']:.2f} |"
            )
    for key in sorted(k for k in results if k.startswith("by_delta")):
        partitioner = key.partition("@")[2] or "horpart"
        for name, rows in results[key].items():
            if "rlm_within" not in rows[0]:
                continue
            lines += [
                f"\n{name}, k=3, m=2, {partitioner}: RLM by where the occurrences were "
                "(RLM % of that place; in brackets, its share of all chunk occurrences)\n",
                "| max cluster size | clusters larger | records in them % | RLM % | clusters of at most the size "
                "| larger clusters | shared chunks |",
                "|---:|---:|---:|---:|---:|---:|---:|",
            ]
            lines += [
                f"| {r['max_cluster_size']} | {r['oversized_clusters']} | {_pct(r['oversized_records'])} "
                f"| {_pct(r['rlm'])} | {_pct(r['rlm_within'])} ({_pct(r['occurrences_within'])}) "
                f"| {_pct(r['rlm_oversized'])} ({_pct(r['occurrences_oversized'])}) "
                f"| {_pct(r['rlm_shared'])} ({_pct(r['occurrences_shared'])}) |"
                for r in rows
            ]
    if results.get("by_size"):
        lines += [
            "\nRun time by dataset size (k=3, m=2, max cluster size 30)\n",
            "| records | CPU s disassociation | CPU s sanitizer |",
            "|---:|---:|---:|",
        ]
        lines += [
            f"| {r['records']} | {r['seconds_disassociation']:.2f} | {r['seconds_safe']:.2f} |"
            for r in results["by_size"]
        ]
    return "\n".join(lines)


def plot(results: dict, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 3, figsize=(15, 8.5))
    panels = [
        ("by_k", "k", "pem", "PEM (%) vs k (m=2, max cluster 30)"),
        ("by_m", "m", "pem", "PEM (%) vs m (k=3, max cluster 30)"),
        ("by_delta", "max_cluster_size", "pem", "PEM (%) vs max cluster size (k=3, m=2)"),
        ("by_delta", "max_cluster_size", "rlm", "RLM (%) vs max cluster size (k=3, m=2)"),
    ]
    for ax, (key, x, y, title) in zip(axes.flat, panels, strict=False):
        for name, rows in results.get(key, {}).items():
            ax.plot([r[x] for r in rows], [100 * r[y] for r in rows], marker="o", label=name)
        ax.set_title(title)
        ax.set_xlabel(x)
        ax.grid(alpha=0.3)
        ax.legend()
    ax = axes.flat[4]
    for name, rows in results.get("by_delta", {}).items():
        ax.plot(
            [r["max_cluster_size"] for r in rows],
            [r["rae_disassociated"]["rae_sum"] for r in rows],
            marker="o",
            label=f"{name} disassociated",
        )
        ax.plot(
            [r["max_cluster_size"] for r in rows],
            [r["rae_safe"]["rae_sum"] for r in rows],
            marker="s",
            linestyle="--",
            label=f"{name} safe",
        )
    ax.set_title("RAE (sum over the original's pairs) vs max cluster size")
    ax.set_xlabel("max_cluster_size")
    ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax = axes.flat[5]
    rows = results.get("by_size", [])
    ax.plot(
        [r["records"] for r in rows], [r["seconds_disassociation"] for r in rows], marker="o", label="disassociation"
    )
    ax.plot(
        [r["records"] for r in rows],
        [r["seconds_safe"] for r in rows],
        marker="s",
        label="safe-disassociation sanitizer",
    )
    ax.set_title("CPU seconds vs records (k=3, m=2, max cluster 30)")
    ax.set_xlabel("records")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(out / f"safe-disassociation.{ext}", dpi=110)


if __name__ == "__main__":
    main()
