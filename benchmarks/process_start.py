"""The default executor's fixed cost, before and after a change, side by side:
wall time and CPU time of whole process trees (docs/executors.md, "The fixed
cost of a process pool").

    python benchmarks/process_start.py --before OLD/bin/privtool --after .venv/bin/privtool \\
        --data wv2=../shared/data/bms-webview-2.dat.gz --data pos100k=DIR/pos100k.dat \\
        --dir WORK --repeat 4 --json OUT.json

For each ``--data NAME=FILE``, four cases, each ``privtool`` with the default
executor (``--executor process``, all cores): ``anonymize`` (disassociation),
``anonymize-safe`` (``--sanitizer safe-disassociation``), ``verify`` of the
release (made once by ``--after``) and ``malformed`` (``verify`` of that
release cut to its first half, which must exit 2 with one sentence). Every
round runs every case with both installs, in turns that alternate (before,
after; then after, before: ABBA), so the machine's load falls on both alike.

CPU is user + system time of the command's whole process tree: this process
makes itself a child subreaper (``PR_SET_CHILD_SUBREAPER``), so a fork server
or resource tracker the command leaves behind is reparented to it and reaped
here, and ``os.wait4`` gives every reaped process's time including its own
reaped children's (a pool's workers are reaped by the command or by the fork
server). Wall time is until the command itself exits. Medians are kept; every
run is in the JSON, with the load average before and after and the UTC time.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> None:
    """Make orphaned descendants of this process its children (Linux only)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")


def run_tree(command: list[str], cwd: Path) -> dict[str, Any]:
    """Run ``command`` and reap it and every descendant left to this process:
    its exit code, its wall seconds, the tree's CPU seconds and its stderr."""
    err_path = cwd / "stderr.txt"
    with open(err_path, "w") as err:
        start = time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
        wall, code, cpu = 0.0, -1, 0.0
        while True:
            try:
                pid, status, usage = os.wait4(-1, 0)
            except ChildProcessError:
                break
            cpu += usage.ru_utime + usage.ru_stime
            if pid == process.pid:
                wall, code = time.perf_counter() - start, os.waitstatus_to_exitcode(status)
        process.returncode = code  # reaped above; keeps Popen from waiting for it again
    return {"code": code, "wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "stderr": err_path.read_text()}


def cases(privtool: str, name: str, data: Path, release: Path, malformed: Path, out: Path) -> dict[str, list[str]]:
    """The command line of every case for one dataset and one install."""
    anonymize = [privtool, "anonymize", str(data), "--method", "disassociation", "-q", "-o", str(out)]
    return {
        f"{name}/anonymize": anonymize,
        f"{name}/anonymize-safe": [*anonymize, "--sanitizer", "safe-disassociation"],
        f"{name}/verify": [privtool, "verify", str(release), "-q"],
        f"{name}/malformed": [privtool, "verify", str(malformed), "-q"],
    }


def prepare(after: str, name: str, data: Path, work: Path) -> tuple[Path, Path]:
    """A release of ``data`` (made by ``after``) and a copy cut to its first half."""
    release, malformed = work / f"{name}.json", work / f"{name}-malformed.json"
    if not release.exists():
        anonymize = [after, "anonymize", str(data), "--method", "disassociation", "-q", "-o", str(release)]
        subprocess.run(anonymize, check=True)
    body = release.read_bytes()
    malformed.write_bytes(body[: len(body) // 2])
    return release, malformed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="privtool of the code before the change")
    parser.add_argument("--after", required=True, help="privtool of the code after the change")
    parser.add_argument("--data", action="append", required=True, help="NAME=FILE, repeatable")
    parser.add_argument("--dir", type=Path, required=True, help="working directory (releases, outputs)")
    parser.add_argument("--repeat", type=int, default=4)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    become_subreaper()
    args.dir.mkdir(parents=True, exist_ok=True)
    installs = {"before": args.before, "after": args.after}
    commands: dict[str, dict[str, list[str]]] = {label: {} for label in installs}
    for spec in args.data:
        name, file = spec.split("=", 1)
        release, malformed = prepare(args.after, name, Path(file).resolve(), args.dir)
        for label, privtool in installs.items():
            out = args.dir / f"{label}-{name}-out.json"
            commands[label].update(cases(privtool, name, Path(file).resolve(), release, malformed, out))
    runs: list[dict[str, Any]] = []
    for round_ in range(args.repeat):
        for case in commands["after"]:
            for label in ("before", "after") if round_ % 2 == 0 else ("after", "before"):
                load = os.getloadavg()[0]
                run = run_tree(commands[label][case], args.dir)
                stderr = run.pop("stderr")
                if case.endswith("/malformed"):
                    assert run["code"] == 2 and len(stderr.strip().splitlines()) == 1, stderr
                else:
                    assert run["code"] == 0, stderr
                run.update(case=case, install=label, round=round_, load_before=round(load, 2))
                run.update(load_after=round(os.getloadavg()[0], 2), utc=time.strftime("%H:%M:%S", time.gmtime()))
                runs.append(run)
                print(json.dumps(run), flush=True)
    medians = {
        case: {
            label: {
                key: round(statistics.median(r[key] for r in runs if r["case"] == case and r["install"] == label), 2)
                for key in ("wall_s", "cpu_s")
            }
            for label in installs
        }
        for case in commands["after"]
    }
    for case, by in medians.items():
        print(
            f"{case:28} before {by['before']['wall_s']:6.2f} s wall {by['before']['cpu_s']:6.2f} s CPU   "
            f"after {by['after']['wall_s']:6.2f} s wall {by['after']['cpu_s']:6.2f} s CPU"
        )
    if args.json:
        args.json.write_text(json.dumps({"installs": installs, "medians": medians, "runs": runs}, indent=1) + "\n")


if __name__ == "__main__":
    main()
