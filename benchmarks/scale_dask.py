"""Scale run: a large `privtool synth --like bms-pos` file disassociated,
sanitised and verified with the Dask executor, with time and peak memory per stage.

    python benchmarks/scale_dask.py --records 5000000 --workers 2 --dir benchmarks/out/scale

Each stage runs as its own process (the real `privtool` command line, in
process through `privtool.cli.main`) and reports wall time, CPU time and peak
resident memory of the stage's process and of its workers. The workers'
figures come from sampling the stage's process tree every
:data:`SAMPLE_SECONDS` through ``/proc``: each descendant's ``VmHWM`` (its own
high-water mark since it executed its interpreter) and its CPU time, kept at
the last value seen. ``ru_maxrss`` of the reaped children would be wrong for
Dask workers: Linux keeps a process's pre-``exec`` high-water mark, and a
worker is forked from the stage process, so it would report the stage
process's size at that moment. A worker's growth in the last sampling
interval before it exits is missed (its peak is a lower bound by that much).
Pass ``--scheduler tcp://HOST:8786`` to use a running multi-machine cluster
instead of a local one (every worker needs the same privtool installed; the
workers are then not in the process tree and not measured).

Stages: synth (skipped when the file exists), disassociate (k=5, m=2, size
30; ``--no-refine`` skips REFINE), sanitize (safe-disassociation), verify
(every certificate of the release, without the original) and faithfulness
(``verify --original --only faithfulness``). ``--stages`` runs a subset, and
``--json`` appends to a results file, so a long run can be done in pieces.
Each stage's own output goes to ``DIR/STAGE.out``. The load average
(``os.getloadavg``, what ``uptime`` prints) is recorded before and after each stage.
``benchmarks/scale_growth.py`` runs the same stages over several sizes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil

STAGE = r"""
import json, resource, sys, time
from privtool.cli import main
start, cpu = time.perf_counter(), time.process_time()
code = main(sys.argv[1:])
own = resource.getrusage(resource.RUSAGE_SELF)
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"code": code, "wall_s": round(time.perf_counter() - start, 2),
                  "cpu_main_s": round(own.ru_utime + own.ru_stime, 2),
                  "cpu_reaped_s": round(kids.ru_utime + kids.ru_stime, 2),
                  "peak_mib": round(own.ru_maxrss / 1024, 1)}))
"""

SAMPLE_SECONDS = 0.2
STAGES = ("synth", "disassociate", "sanitize", "verify", "faithfulness")


def vm_hwm_kib(pid: int) -> int:
    """The process's resident high-water mark (``VmHWM``, KiB) since its last ``exec``; 0 if it is gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class TreeSampler:
    """Samples every descendant of one process until :meth:`stop`: the last ``VmHWM``
    and CPU time seen per pid, and whether it is a Dask worker (a ``spawn``ed
    interpreter, ``--multiprocessing-fork``, a process forked by a fork
    server, or a child forked from the stage process itself, with its command
    line; neither the fork server nor the resource tracker is one)."""

    def __init__(self, pid: int) -> None:
        self.root = psutil.Process(pid)
        self.seen: dict[int, dict[str, Any]] = {}
        self.root_hwm_kib, self.root_cpu_s = 0, 0.0  # for a stage stopped before it reports itself
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        self.root_hwm_kib = max(self.root_hwm_kib, vm_hwm_kib(self.root.pid))
        try:
            times = self.root.cpu_times()
            self.root_cpu_s = max(self.root_cpu_s, times.user + times.system)
            children = self.root.children(recursive=True)
        except psutil.Error:
            return
        for child in children:
            try:
                entry = self.seen.setdefault(child.pid, {"worker": False, "hwm_kib": 0, "cpu_s": 0.0})
                if not entry["worker"]:  # asked again at every sample: a process just forked may not tell yet
                    entry["worker"] = self._is_worker(child)
                times = child.cpu_times()
                entry["cpu_s"] = max(entry["cpu_s"], times.user + times.system)
                entry["hwm_kib"] = max(entry["hwm_kib"], vm_hwm_kib(child.pid))
            except psutil.Error:
                continue

    def _is_worker(self, child: psutil.Process) -> bool:
        """Whether ``child`` is a Dask worker (see the class doc)."""
        arguments = child.cmdline()
        cmdline = " ".join(arguments)
        if child.ppid() == self.root.pid:  # the root's command line read now: just after its exec it can be empty
            return "spawn_main" in cmdline or arguments == self.root.cmdline()
        return "multiprocessing.forkserver" in cmdline or "spawn_main" in cmdline

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_SECONDS):
            self._sample()

    def stop(self) -> dict[str, Any]:
        """Stop sampling; the workers' largest peak (MiB), their CPU seconds, and the same over every descendant."""
        self._stop.set()
        self._thread.join()
        workers = [e for e in self.seen.values() if e["worker"]]
        return {
            "workers": len(workers),
            "peak_worker_mib": round(max((e["hwm_kib"] for e in workers), default=0) / 1024, 1),
            "cpu_workers_s": round(sum(e["cpu_s"] for e in workers), 2),
            "peak_child_mib": round(max((e["hwm_kib"] for e in self.seen.values()), default=0) / 1024, 1),
            "cpu_children_s": round(sum(e["cpu_s"] for e in self.seen.values()), 2),
        }


def stage(name: str, args: list[str], out_dir: Path, timeout: float | None = None) -> dict[str, Any]:
    """Run one stage (``privtool ARGS`` in a fresh interpreter) and measure it.

    Its own output (e.g. verify's certificates) goes to ``OUT_DIR/NAME.out``.
    ``cpu_s`` is the stage process's CPU time plus its descendants' as sampled
    (the Dask workers, the resource tracker); ``peak_mib`` is the stage process's
    ``ru_maxrss`` and ``peak_worker_mib`` the largest worker's ``VmHWM``. A stage
    still running after TIMEOUT seconds is killed and recorded with
    ``"finished": false`` and the figures sampled until then (lower bounds).
    """
    load_before = os.getloadavg()
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-c", STAGE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    sampler = TreeSampler(process.pid)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        sampler._sample()
        tree = sampler.stop()
        for victim in [*psutil.Process(process.pid).children(recursive=True), psutil.Process(process.pid)]:
            victim.kill()
        process.communicate()
        result = {
            "stage": name,
            "finished": False,
            "wall_s": round(time.perf_counter() - start, 2),
            "cpu_main_s": round(sampler.root_cpu_s, 2),
            "peak_mib": round(sampler.root_hwm_kib / 1024, 1),
            **tree,
            "cpu_s": round(sampler.root_cpu_s + tree["cpu_children_s"], 2),
            "load_before": [round(x, 2) for x in load_before],
            "load_after": [round(x, 2) for x in os.getloadavg()],
            "finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        print(json.dumps(result), flush=True)
        return result
    tree = sampler.stop()
    lines = stdout.splitlines()
    if not lines or not lines[-1].startswith("{"):
        raise SystemExit(f"stage {name} failed:\n{stderr[-2000:]}")
    (out_dir / f"{name}.out").write_text("\n".join(lines[:-1]) + "\n")
    measured = json.loads(lines[-1])
    result = {
        "stage": name,
        **measured,
        **tree,
        "cpu_s": round(measured["cpu_main_s"] + tree["cpu_children_s"], 2),
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    print(json.dumps(result), flush=True)
    return result


def stage_commands(
    data: Path, out_dir: Path, records: int, executor: list[str], refine: bool = True
) -> dict[str, list[str]]:
    """The command line of every stage in :data:`STAGES`: DATA the input, releases and trails in OUT_DIR."""
    plain, safe = out_dir / "plain.json", out_dir / "safe.json"
    plain_trail, safe_trail = out_dir / "plain-trail.json", out_dir / "safe-trail.json"
    return {
        "synth": ["synth", "--like", "bms-pos", "--records", str(records), "--seed", "1", "-o", str(data), "--quiet"],
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
            str(plain_trail),
            "-q",
            *executor,
            *([] if refine else ["--refiner", "none"]),
        ],
        "sanitize": [
            "sanitize",
            str(plain),
            "--sanitizer",
            "safe-disassociation",
            "--trail",
            str(plain_trail),
            "-o",
            str(safe),
            "--trail-out",
            str(safe_trail),
            "-q",
            *executor,
        ],
        "verify": ["verify", str(safe), "--trail", str(safe_trail), "-q", "--json", *executor],
        "faithfulness": [
            "verify",
            str(safe),
            "--original",
            str(data),
            "--trail",
            str(safe_trail),
            "--only",
            "faithfulness",
            "-q",
            "--json",
            *executor,
        ],
    }


def executor_options(workers: int, scheduler: str | None) -> list[str]:
    """``--executor dask`` with a local cluster of WORKERS processes, or the cluster at SCHEDULER."""
    return ["--executor", "dask", "--workers", str(workers)] + (["--scheduler", scheduler] if scheduler else [])


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
    data = opts.dir / "pos.dat"
    commands = stage_commands(
        data, opts.dir, opts.records, executor_options(opts.workers, opts.scheduler), not opts.no_refine
    )
    wanted = opts.stages.split(",")
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
