"""Scale run: a large `privtool synth --like bms-pos` file disassociated,
sanitised and verified with the Dask executor, with time and peak memory per stage.

    python benchmarks/scale_dask.py --records 5000000 --workers 2 --dir benchmarks/out/scale

Each stage runs as its own process (the real `privtool` command line, in
process through `privtool.cli.main`) and reports wall time, CPU time and peak
resident memory of the stage's process (``ru_maxrss``) and of its reaped
children. The children's figure is an upper bound for Dask workers: Linux
keeps a process's pre-``exec`` high-water mark, and a worker is forked from
the stage process (then executes a fresh interpreter), so it reports the stage
process's size at that moment; sample the workers with ``ps`` for their own use. Pass
``--scheduler tcp://HOST:8786`` to use a running multi-machine cluster instead
of a local one (every worker needs the same privtool installed).

Stages: synth (skipped when the file exists), disassociate (k=5, m=2, size
30; ``--no-refine`` skips REFINE), sanitize (safe-disassociation), verify
(every certificate of the release, without the original) and faithfulness
(``verify --original --only faithfulness``). ``--stages`` runs a subset, and
``--json`` appends to a results file, so a long run can be done in pieces.
Each stage's own output goes to ``DIR/STAGE.out``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

STAGE = r"""
import json, resource, sys, time
from privtool.cli import main
start, cpu = time.perf_counter(), time.process_time()
code = main(sys.argv[1:])
own = resource.getrusage(resource.RUSAGE_SELF)
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"code": code, "wall_s": round(time.perf_counter() - start, 2),
                  "cpu_s": round(own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime, 2),
                  "peak_mib": round(own.ru_maxrss / 1024, 1), "peak_child_mib": round(kids.ru_maxrss / 1024, 1)}))
"""


def stage(name: str, args: list[str], out_dir: Path) -> dict:
    """Run one stage; its own output (e.g. verify's certificates) goes to ``OUT_DIR/NAME.out``."""
    done = subprocess.run([sys.executable, "-c", STAGE, *args], capture_output=True, text=True)
    lines = done.stdout.splitlines()
    if not lines or not lines[-1].startswith("{"):
        raise SystemExit(f"stage {name} failed:\n{done.stderr[-2000:]}")
    (out_dir / f"{name}.out").write_text("\n".join(lines[:-1]) + "\n")
    result = {"stage": name, **json.loads(lines[-1])}
    print(json.dumps(result), flush=True)
    return result


STAGES = ("synth", "disassociate", "sanitize", "verify", "faithfulness")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=5_000_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--scheduler", default=None)
    parser.add_argument("--dir", type=Path, default=Path("benchmarks/out/scale"))
    parser.add_argument(
        "--json", type=Path, default=None, help="Also write the results here (appended to when it exists)."
    )
    parser.add_argument(
        "--stages", default=",".join(STAGES), help=f"Comma-separated subset of {','.join(STAGES)} (default: all)."
    )
    parser.add_argument(
        "--no-refine", action="store_true", help="Disassociate without REFINE (it holds ~4x the memory)."
    )
    opts = parser.parse_args()
    opts.dir.mkdir(parents=True, exist_ok=True)
    data, plain, safe = opts.dir / "pos.dat", opts.dir / "plain.json", opts.dir / "safe.json"
    executor = ["--executor", "dask", "--workers", str(opts.workers)] + (
        ["--scheduler", opts.scheduler] if opts.scheduler else []
    )
    wanted = opts.stages.split(",")
    commands = {
        "synth": [
            "synth",
            "--like",
            "bms-pos",
            "--records",
            str(opts.records),
            "--seed",
            "1",
            "-o",
            str(data),
            "--quiet",
        ],
        "disassociate": [
            "anonymize",
            str(data),
            "--method",
            "disassociation",
            "--k",
            "5",
            "--m",
            "2",
            "-o",
            str(plain),
            "--trail",
            str(opts.dir / "plain-trail.json"),
            "-q",
            *executor,
            *(["--refiner", "none"] if opts.no_refine else []),
        ],
        "sanitize": [
            "sanitize",
            str(plain),
            "--sanitizer",
            "safe-disassociation",
            "--trail",
            str(opts.dir / "plain-trail.json"),
            "-o",
            str(safe),
            "--trail-out",
            str(opts.dir / "safe-trail.json"),
            "-q",
            *executor,
        ],
        "verify": ["verify", str(safe), "--trail", str(opts.dir / "safe-trail.json"), "-q", "--json", *executor],
        "faithfulness": [
            "verify",
            str(safe),
            "--original",
            str(data),
            "--trail",
            str(opts.dir / "safe-trail.json"),
            "--only",
            "faithfulness",
            "-q",
            "--json",
            *executor,
        ],
    }
    results = []
    for name in STAGES:
        if name in wanted and not (name == "synth" and data.exists()):
            results.append(stage(name, commands[name], opts.dir))
    if opts.json:
        previous = json.loads(opts.json.read_text())["stages"] if opts.json.exists() else []
        record = {
            "records": opts.records,
            "workers": opts.workers,
            "refine": not opts.no_refine,
            "stages": previous + results,
        }
        opts.json.write_text(json.dumps(record, indent=1) + "\n")
    print(f"all stages: {sum(r['wall_s'] for r in results):.1f} s wall")


if __name__ == "__main__":
    main()
