"""REFINE's cost against a bare HORPART + VERPART, measured side by side.

    python benchmarks/refine_speed.py [--data ../shared/data/bms-webview-2.dat.gz] [--repeat 5] \\
        [--json docs/results/refine-speed.json] [--expect docs/results/refine-speed.json]

Three cases, each a fresh process, run round-robin ``--repeat`` times so that
the machine's load falls on all three alike (k=5, m=2, max cluster size 30):

* ``no-refine``: ``privtool anonymize DATA --method disassociation --refiner none
  --executor serial -o R.json``;
* ``refine``: the same command with REFINE (the default);
* ``prototype``: ``benchmarks/horpart_verpart_prototype.py`` (bare numpy
  HORPART + VERPART, no release).

For each: the process's CPU seconds (user + system, ``os.wait4``) and wall
seconds, and ``command_cpu_s``: the CPU seconds after the interpreter started
and imported its modules (privtool: ``privtool.cli.main`` reading, anonymizing
and writing; prototype: reading, HORPART and VERPART), the like-for-like
figure. Medians are kept; the ratios to the prototype are of the medians. The
load average before and after is recorded.

The SHA-256 of both releases is recorded; ``--expect FILE`` compares them with
the ones in an earlier results file and fails when they differ (releases must
stay byte-identical while REFINE is made faster). ``--before PYTHON`` adds the
two privtool cases run by another interpreter (e.g. the virtual environment of
a checkout of the code before a change) to the same round-robin, so that before
and after are measured under the same load, and checks that both make the same
releases.

``--cached-bytecode`` adds the two privtool cases run with Python's bytecode
cache (``PYTHONPYCACHEPREFIX`` in the temporary directory, filled by one
uncounted run of each; ``PYTHONDONTWRITEBYTECODE`` unset) to the same
round-robin. An editable checkout on a machine that sets
``PYTHONDONTWRITEBYTECODE=1`` compiles privtool's plugin modules, imported
inside the timed command, at every run, whereas an installed package has its
``.pyc`` files, as numpy (the prototype's only import, before its timer)
already has here: both figures are reported, under their own names.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared" / "data"

PRIVTOOL = r"""
import json, sys, time
from privtool.cli import main
start = time.process_time()
code = main(sys.argv[1:])
print(json.dumps({"code": code, "command_cpu_s": time.process_time() - start}))
"""


def run(argv: list[str], env: dict[str, str] | None = None) -> dict[str, float]:
    """Wall and CPU seconds of one process (environment ``env``, default this
    one's), plus the last JSON line it printed."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    out = proc.stdout.read().decode() if proc.stdout else ""
    if status != 0:
        err = proc.stderr.read().decode() if proc.stderr else ""
        raise SystemExit(f"{' '.join(argv)} failed: {err[-2000:]}")
    report = json.loads(out.strip().splitlines()[-1])
    if "algorithm_cpu_s" in report:  # the prototype
        report["command_cpu_s"] = report["read_cpu_s"] + report["algorithm_cpu_s"]
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "command_cpu_s": report["command_cpu_s"],
        "peak_mib": usage.ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=SHARED / "bms-webview-2.dat.gz")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None, help="Write the results here.")
    parser.add_argument("--expect", type=Path, default=None, help="Fail unless the release SHA-256s match this file's.")
    parser.add_argument("--before", default=None, help="Python of the code before a change: measured alongside.")
    parser.add_argument(
        "--cached-bytecode", action="store_true", help="Also measure privtool with Python's bytecode cache."
    )
    opts = parser.parse_args()
    params = ["--method", "disassociation", "--k", "5", "--m", "2", "--max-cluster-size", "30"]
    with tempfile.TemporaryDirectory() as tmp:
        pythons = {"": sys.executable, **({" (before)": opts.before} if opts.before else {})}
        if opts.cached_bytecode:
            pythons[" (cached bytecode)"] = sys.executable
        cached_env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
        cached_env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        envs: dict[str, dict[str, str] | None] = {}
        releases: dict[str, Path] = {}
        cases: dict[str, list[str]] = {}
        for suffix, python in pythons.items():
            for name, extra in (("no-refine", ["--refiner", "none"]), ("refine", [])):
                releases[name + suffix] = Path(tmp) / f"{name}{len(releases)}.json"
                cases[name + suffix] = [python, "-c", PRIVTOOL, "anonymize", str(opts.data), *params, *extra]
                envs[name + suffix] = cached_env if suffix == " (cached bytecode)" else None
        cases["prototype"] = [sys.executable, str(HERE / "horpart_verpart_prototype.py"), str(opts.data)]
        for name, path in releases.items():
            cases[name] += ["--executor", "serial", "-q", "-o", str(path)]
        for name, env in envs.items():
            if env is not None:  # fills the bytecode cache; not counted
                run(cases[name], env)
        load_before = os.getloadavg()
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in cases}
        for _ in range(opts.repeat):
            for name, argv in cases.items():
                if name in releases:
                    releases[name].unlink(missing_ok=True)
                runs[name].append(run(argv, envs.get(name)))
        sha = {name: hashlib.sha256(path.read_bytes()).hexdigest() for name, path in releases.items()}
    load_after = os.getloadavg()
    medians = {
        name: {key: round(statistics.median(r[key] for r in rs), 3) for key in rs[0]} for name, rs in runs.items()
    }
    proto = medians["prototype"]
    ratios = {
        name: {
            "command_cpu": round(m["command_cpu_s"] / proto["command_cpu_s"], 2),
            "cpu": round(m["cpu_s"] / proto["cpu_s"], 2),
            "wall": round(m["wall_s"] / proto["wall_s"], 2),
        }
        for name, m in medians.items()
        if name != "prototype"
    }
    result = {
        "data": opts.data.name,
        "repeat": opts.repeat,
        "PYTHONDONTWRITEBYTECODE": os.environ.get("PYTHONDONTWRITEBYTECODE", ""),
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "median": medians,
        "ratio_to_prototype": ratios,
        "release_sha256": sha,
    }
    print(json.dumps(result, indent=1))
    if opts.json:
        opts.json.write_text(json.dumps(result, indent=1) + "\n")
    for suffix in pythons:
        if (sha["refine"], sha["no-refine"]) != (sha["refine" + suffix], sha["no-refine" + suffix]):
            raise SystemExit(f"the releases differ between the cases: {sha}")
    if opts.expect:
        expected = json.loads(opts.expect.read_text())["release_sha256"]
        if any(expected[name] != sha[name] for name in ("refine", "no-refine")):
            raise SystemExit(f"releases differ from {opts.expect}: {expected} != {sha}")
        print(f"releases byte-identical to those recorded in {opts.expect}")


if __name__ == "__main__":
    main()
