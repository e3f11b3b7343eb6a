"""Speed and memory of the whole ``privtool anonymize --method disassociation``
command: bms-webview-2 (k=5, m=2, max cluster size 30) without and with REFINE,
and synthetic bms-pos-like files of 50k, 100k, 200k and 515,597 records
(``privtool synth --like bms-pos --records N --seed 0``) for the time per record
(issue 3).

Usage (from the repository root)::

    .venv/bin/python benchmarks/disassociation_speed.py [--repeat 3] [--work benchmarks/out/privtool-speed] \\
        [--sizes 50000,100000,200000,515597] [--executor process] [--out docs/results/disassociation-speed]

Each run is a fresh process (start-up, reading, anonymizing, writing the
release) measured with ``os.wait4``: wall-clock seconds, CPU seconds (user +
system, including reaped worker processes) and peak resident memory (largest of
the process and its workers). The machine may be shared with other jobs: the
CPU time shows the work, the wall time what a user waited. The median of
``--repeat`` runs is kept. Prints one JSON line per case; ``--out PREFIX``
writes PREFIX.json and a per-record plot PREFIX.png / PREFIX.svg.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
PRIVTOOL = str(Path(sys.executable).with_name("privtool"))


def measure(argv: list[str]) -> dict[str, float]:
    """Wall, CPU and peak RSS of one command run to completion."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode() if proc.stderr else ""
    if status != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {err}")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_mb": usage.ru_maxrss / 1024}


def median_run(argv: list[str], repeat: int) -> dict[str, float]:
    runs = [measure(argv) for _ in range(repeat)]
    return {key: round(statistics.median(r[key] for r in runs), 2) for key in runs[0]}


def synth_file(work: Path, records: int) -> Path:
    path = work / f"synth-bms-pos-{records}.dat.gz"
    if not path.exists():
        subprocess.run(
            [PRIVTOOL, "synth", "--like", "bms-pos", "--records", str(records), "--seed", "0", "-o", str(path), "-q"],
            check=True,
        )
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--work", default="benchmarks/out/privtool-speed")
    parser.add_argument("--sizes", default="50000,100000,200000,515597")
    parser.add_argument("--executor", default="process")
    parser.add_argument("--out", default=None, metavar="PREFIX")
    args = parser.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    common = [
        "--method",
        "disassociation",
        "--k",
        "5",
        "--m",
        "2",
        "--max-cluster-size",
        "30",
        "-q",
        "--executor",
        args.executor,
    ]
    cases = [
        ("bms-webview-2, no refine", SHARED / "bms-webview-2.dat.gz", 77512, ["--refiner", "none"]),
        ("bms-webview-2, refine", SHARED / "bms-webview-2.dat.gz", 77512, ["--refiner", "refine"]),
    ]
    for n in [int(x) for x in args.sizes.split(",")]:
        cases.append((f"synth bms-pos {n}, no refine", synth_file(work, n), n, ["--refiner", "none"]))
    cases.append(("startup only (privtool --help)", None, 0, []))
    rows = []
    for name, data, records, extra in cases:
        if data is None:
            argv = [PRIVTOOL, "--help"]
        else:
            argv = [PRIVTOOL, "anonymize", str(data), *common, *extra, "-o", str(work / "release.json")]
        row = {"case": name, "records": records, **median_run(argv, args.repeat)}
        if records:
            row["us_per_record"] = round(1e6 * row["cpu_s"] / records, 1)
        print(json.dumps(row), flush=True)
        rows.append(row)
    if args.out:
        Path(f"{args.out}.json").write_text(json.dumps({"command": " ".join(sys.argv), "runs": rows}, indent=1) + "\n")
        plot([r for r in rows if r["case"].startswith("synth")], args.out)


def plot(rows: list[dict], prefix: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    n = [r["records"] for r in rows]
    ax.plot(n, [1e6 * r["cpu_s"] / r["records"] for r in rows], "o-", label="CPU time per record")
    ax.plot(n, [1e6 * r["wall_s"] / r["records"] for r in rows], "s--", label="wall time per record")
    ax.set_xlabel("records (synth --like bms-pos)")
    ax.set_ylabel("microseconds per record")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title("privtool anonymize --method disassociation (k=5, m=2, no refine)", fontsize=8)
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(f"{prefix}.{ext}", dpi=110)


if __name__ == "__main__":
    main()
