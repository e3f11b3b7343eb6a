"""Is ``privtool audit`` within 2x of ``privtool verify`` (issue 20, item 2)?

Usage (from the repository root)::

    python benchmarks/audit_vs_verify.py --data ../shared/data/bms-webview-2.dat.gz \\
        [--repeat 3] [--out benchmarks/out/audit-vs-verify]

It makes the safe release of the issue unless OUT already holds it::

    privtool anonymize DATA --method disassociation --k 5 --m 2 -o R.json -q
    privtool sanitize R.json --sanitizer safe-disassociation -o S.json -q

then times, each as its own ``python -m privtool`` process with the default
executor (as a user runs them), ``verify S.json -q`` and ``audit S.json``
with the terminal, JSON and HTML reports. The figure is CPU time (user + sys
of the process and every worker it waited for, ``RUSAGE_CHILDREN``), the best
of ``--repeat`` runs, since the machine is shared; wall time is printed beside
it, and the last column is the CPU time over verify's.

Then, in this process with the serial executor, one audit is broken down by
stage (structure; each verifier, after the stages that run inside it, which
its figure includes; each attack; all metrics together), each metric is timed alone
(outside an assessment, so it builds the per-release index it would share
with the attacks there, see ``privtool.memo``), and each report format is
rendered from the audit, all in CPU seconds (``time.process_time``): where the
time goes. Prints JSON lines and the
Markdown tables of docs/results/scale.md ("Audit against verify").
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from privtool.assess import evidence_of, run_metrics, select
from privtool.audit import build_audit
from privtool.audit.render import render_terminal
from privtool.audit.reports import RENDERERS
from privtool.context import Context
from privtool.registry import load_registry
from privtool.release import read_release

COMMANDS = {
    "verify": ["verify", "{release}", "-q"],
    "audit (terminal)": ["audit", "{release}", "-q"],
    "audit --format json": ["audit", "{release}", "-q", "--format", "json", "-o", "{out}/A.json"],
    "audit --format html": ["audit", "{release}", "-q", "--format", "html", "-o", "{out}/A.html"],
}


def make_release(data: Path, out: Path) -> Path:
    raw, safe = out / "R.json", out / "S.json"
    if not safe.exists():
        for args in (
            ["anonymize", str(data), "--method", "disassociation", "--k", "5", "--m", "2", "-o", str(raw), "-q"],
            ["sanitize", str(raw), "--sanitizer", "safe-disassociation", "-o", str(safe), "-q"],
        ):
            subprocess.run([sys.executable, "-m", "privtool", *args], check=True)
    return safe


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_command(args: list[str]) -> tuple[float, float, int]:
    """CPU seconds (with its workers), wall seconds and exit code of one ``privtool`` run."""
    cpu, wall = child_cpu(), time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "privtool", *args], stdout=subprocess.DEVNULL, check=False)
    return child_cpu() - cpu, time.perf_counter() - wall, done.returncode


class StageClock:
    """A progress reporter that records the CPU seconds of each stage."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def task(self, description: str, total: int | None) -> Iterator[Any]:
        started = time.process_time()
        try:
            yield self
        finally:
            self.seconds[description] = self.seconds.get(description, 0.0) + time.process_time() - started

    def advance(self, amount: int = 1) -> None:
        pass


def breakdown(release_path: Path) -> list[tuple[str, float]]:
    """CPU seconds per part of one audit in this process (serial executor)."""
    rows: list[tuple[str, float]] = []
    started = time.process_time()
    registry = load_registry()
    release = read_release(str(release_path))
    rows.append(("load plugins + read release", time.process_time() - started))
    clock = StageClock()
    ctx = Context(progress=clock)
    evidence = evidence_of(None, None, release.source_sha256)
    audit = build_audit(registry, release, str(release_path), release.source_sha256, evidence, {}, ctx)
    rows += list(clock.seconds.items())
    for metric in select(registry, "metric", release, ()):
        started = time.process_time()
        run_metrics([metric], release, evidence, {}, Context(), registry=registry)
        rows.append(
            (
                f"metric {metric.name} alone (outside the audit: builds what it shares there)",
                time.process_time() - started,
            )
        )
    with open(os.devnull, "w") as sink:
        from rich.console import Console

        started = time.process_time()
        render_terminal(audit, Console(file=sink, width=100))
        rows.append(("render terminal", time.process_time() - started))
    for name, render in RENDERERS.items():
        started = time.process_time()
        render(audit)
        rows.append((f"render {name}", time.process_time() - started))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/out/audit-vs-verify"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    release = make_release(args.data, args.out)
    load = os.getloadavg()[0]
    best: dict[str, tuple[float, float]] = {}
    for _ in range(args.repeat):
        for name, template in COMMANDS.items():
            cpu, wall, code = time_command([a.format(release=release, out=args.out) for a in template])
            if code not in (0, 1):
                raise SystemExit(f"{name} exited {code}")
            print(json.dumps({"command": name, "cpu": round(cpu, 3), "wall": round(wall, 3), "exit": code}))
            if name not in best or cpu < best[name][0]:
                best[name] = (cpu, wall)
    parts = breakdown(release)
    for part, seconds in parts:
        print(json.dumps({"part": part, "cpu": round(seconds, 3)}))
    print(f"\nload average at start: {load:.1f}; {args.repeat} runs each, best CPU\n")
    print("| command | CPU s | wall s | CPU / verify |")
    print("|---|---:|---:|---:|")
    for name, (cpu, wall) in best.items():
        print(f"| `privtool {name}` | {cpu:.2f} | {wall:.2f} | {cpu / best['verify'][0]:.2f}x |")
    print("\n| part of one audit (serial, in-process) | CPU s |")
    print("|---|---:|")
    for part, seconds in parts:
        print(f"| {part} | {seconds:.2f} |")


if __name__ == "__main__":
    main()
