"""Time and peak memory of ``privtool synth``, and how close ``--like bms-pos`` gets.

Each run is a fresh ``privtool synth`` process; its wall time and peak resident
memory (``ru_maxrss`` from ``wait4``) are printed, followed by ``privtool stats``
figures of the output. Files go to ``benchmarks/out/`` (ignored by git) and are
deleted afterwards unless ``--keep``.

    python benchmarks/synth.py                   # 515,597 and 5,000,000 records
    python benchmarks/synth.py --records 515597  # one size only
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
PRIVTOOL = [str(Path(sys.executable).with_name("privtool"))]
"""The privtool of the interpreter running this script (its virtualenv)."""


def timed(args: list[str]) -> tuple[float, float, float, str]:
    """Run ``args``; return (wall seconds, CPU seconds, peak RSS in MiB, stdout).
    CPU time (user + system) is the fairer figure on a shared machine."""
    start = time.perf_counter()
    process = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(args)} failed")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, output


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, action="append", help="record counts (default 515597 and 5000000)")
    parser.add_argument("--suffix", default=".dat", help="output suffix, e.g. .dat.gz (default .dat)")
    parser.add_argument("--keep", action="store_true", help="keep the generated files")
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    for records in args.records or [515_597, 5_000_000]:
        path = OUT / f"synth-bms-pos-{records}{args.suffix}"
        command = [
            *PRIVTOOL,
            "synth",
            "--like",
            "bms-pos",
            "--records",
            str(records),
            "--seed",
            "0",
            "-q",
            "-o",
            str(path),
        ]
        seconds, cpu, peak, _ = timed(command)
        size = path.stat().st_size / 2**20
        print(f"$ privtool synth --like bms-pos --records {records} --seed 0 -o {path.name}")
        print(f"  synth: {seconds:.1f} s wall, {cpu:.1f} s CPU, peak RSS {peak:.0f} MiB, file {size:.0f} MiB")
        stats_seconds, stats_cpu, stats_peak, output = timed([*PRIVTOOL, "stats", str(path), "--json", "--top", "3"])
        stats = json.loads(output)
        print(f"  stats: {stats_seconds:.1f} s wall, {stats_cpu:.1f} s CPU, peak RSS {stats_peak:.0f} MiB")
        print(
            f"  records {stats['records']:,}, items {stats['items']:,}, max {stats['max_size']}, "
            f"avg {stats['avg_size']:.3f}, median {stats.get('median_size', '-')}"
        )
        print("  size histogram: " + ", ".join(f"{row['size']}: {row['records']:,}" for row in stats["size_histogram"]))
        print("  top items: " + ", ".join(f"{row['item']} ({row['support']:,})" for row in stats["top_items"]))
        if not args.keep:
            path.unlink()
    if not args.keep and not any(OUT.iterdir()):
        shutil.rmtree(OUT)


if __name__ == "__main__":
    main()
