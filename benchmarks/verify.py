"""Time ``privtool verify`` on a disassociated release (issue 8, "Speed").

Usage (from the repository root)::

    python benchmarks/verify.py --data ../shared/data/bms-webview-2.dat.gz [--no-refine]
    python benchmarks/verify.py --release R.json --trail T.json --data DATA

Without ``--release`` it first makes the release with ``privtool anonymize
--method disassociation --k 5 --m 2 --max-cluster-size 30`` (the method must be
installed). It then runs, one after the other (never more than ``--workers``
processes at once):

1. ``privtool verify R --only km-anonymity --engine cpsat`` (CP-SAT on every chunk),
2. the same with ``--engine enum`` and ``--engine auto``,
3. the full certificate ``privtool verify R --original DATA --trail T``,

and prints the wall time of each command and the seconds, units and engines of
each certificate, as JSON lines (one per command) for docs/results/verify.md.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def privtool() -> str:
    beside = Path(sys.executable).with_name("privtool")
    return str(beside) if beside.exists() else (shutil.which("privtool") or "privtool")


def run(args: list[str]) -> tuple[float, str, int]:
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True)
    return time.perf_counter() - start, done.stdout, done.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--release")
    parser.add_argument("--trail")
    parser.add_argument("--no-refine", action="store_true")
    parser.add_argument("--workers", type=int, default=2)
    options = parser.parse_args()
    tool = privtool()
    work = Path(tempfile.mkdtemp(prefix="privtool-verify-bench-"))
    release, trail = options.release, options.trail
    if release is None:
        release, trail = str(work / "release.json"), str(work / "trail.json")
        make = [
            tool,
            "anonymize",
            options.data,
            "--method",
            "disassociation",
            "--k",
            "5",
            "--m",
            "2",
            "--max-cluster-size",
            "30",
            "-o",
            release,
            "--trail",
            trail,
            "--workers",
            str(options.workers),
            "-q",
        ]
        if options.no_refine:
            make.extend(["--refiner", "none"])
        seconds, _, code = run(make)
        print(json.dumps({"command": " ".join(make), "wall_seconds": round(seconds, 2), "exit": code}))
        if code:
            return code
    base = [tool, "verify", release, "--workers", str(options.workers), "-q", "--json"]
    commands = [[*base, "--only", "km-anonymity", "--engine", engine] for engine in ("cpsat", "enum", "auto")]
    full = [*base, "--original", options.data]
    if trail:
        full += ["--trail", trail]
    commands.append(full)
    for command in commands:
        seconds, out, code = run(command)
        report = json.loads(out) if out.strip() else {}
        certificates = [
            {key: c[key] for key in ("guarantee", "holds", "engine", "units", "seconds")}
            | {"units_by_engine": c["details"].get("units_by_engine")}
            for c in report.get("certificates", [])
        ]
        print(
            json.dumps(
                {
                    "command": " ".join(command),
                    "wall_seconds": round(seconds, 2),
                    "exit": code,
                    "certificates": certificates,
                }
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
