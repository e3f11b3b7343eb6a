"""Peak memory and time of ``privtool stats FILE --json``, streamed, against the code before.

    python benchmarks/stats_memory.py FILE [--before PYTHON] [--repeat 3] [--json OUT.json]

Each run is a fresh process (``python -m privtool stats FILE --json``), its CPU
seconds (user + system) and peak resident memory (``ru_maxrss``) taken from
``os.wait4``. ``--before PYTHON`` runs the same command with another
interpreter (e.g. the virtual environment of a checkout before a change)
round-robin with this one, so that both see the same load, and fails unless
both print the same figures. Medians are reported with the load average
before and after.
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


def measure(argv: list[str]) -> tuple[dict[str, float], str]:
    """Wall and CPU seconds and peak MiB of one process (``os.wait4``), and what it printed."""
    start = time.perf_counter()
    with open(os.devnull, "wb") as sink:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=sink)
        assert proc.stdout is not None
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"{' '.join(argv)} failed with status {status}")
    figures = {
        "wall_s": round(wall, 3),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
        "peak_mib": round(usage.ru_maxrss / 1024, 1),
    }
    return figures, out.decode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", type=Path)
    parser.add_argument("--before", default=None, help="Python of the code before a change: measured alongside.")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None, help="Write the results here.")
    opts = parser.parse_args()
    pythons = {"streamed": sys.executable, **({"before": opts.before} if opts.before else {})}
    load_before = os.getloadavg()
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in pythons}
    outputs: dict[str, str] = {}
    for _ in range(opts.repeat):
        for name, python in pythons.items():
            figures, outputs[name] = measure([python, "-m", "privtool", "stats", str(opts.file), "--json"])
            runs[name].append(figures)
    load_after = os.getloadavg()
    result = {
        "file": str(opts.file),
        "file_bytes": opts.file.stat().st_size,
        "records": json.loads(outputs["streamed"])["records"],
        "repeat": opts.repeat,
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "median": {name: {key: statistics.median(r[key] for r in rs) for key in rs[0]} for name, rs in runs.items()},
        "same_output": len(set(outputs.values())) == 1,
    }
    print(json.dumps(result, indent=1))
    if opts.json:
        opts.json.write_text(json.dumps(result, indent=1) + "\n")
    if not result["same_output"]:
        raise SystemExit("the figures differ from those printed before")


if __name__ == "__main__":
    main()
