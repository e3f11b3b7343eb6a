"""Time reading (parse + validate) and writing (canonical dump) of a release file.

    python benchmarks/release_io.py benchmarks/out/rio/R.json --repeat 5
    git show 3f53da2:toolkit/release.py > benchmarks/out/release_before.py
    python benchmarks/release_io.py benchmarks/out/rio/R.json --before benchmarks/out/release_before.py

Reports the best of ``--repeat`` runs in CPU seconds of this process (the
machine is shared, so CPU time is steadier than wall time), the minor page
faults per run (mean: each is a fresh page of a temporary, paid in system
time) and whether the dump reproduces the file byte for byte. With ``--before FILE`` (an older
``privtool/release.py``, loaded as a module of the installed package so that
it runs against the same helpers) both versions are timed in the same
process, alternating run by run so that both see the same load, and the
ratios before/after are printed. With ``--peak``, each version also reads the
file once in a fresh process, which reports its peak RSS (``VmHWM``) before
and after the read.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from privtool import release as current


def load_before(path: Path) -> ModuleType:
    """``path`` as the module ``privtool.release_before`` (its relative imports
    resolve inside the installed ``privtool``)."""
    spec = importlib.util.spec_from_file_location("privtool.release_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def best_cpu(fns: dict[str, Callable[[], Any]], repeat: int) -> tuple[dict[str, float], dict[str, float]]:
    """Best CPU seconds of each function and its minor page faults per run
    (mean), the functions taking turns."""
    best, faults = dict.fromkeys(fns, float("inf")), dict.fromkeys(fns, 0.0)
    for _ in range(repeat):
        for name, fn in fns.items():
            minflt, start = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, time.process_time()
            fn()
            best[name] = min(best[name], time.process_time() - start)
            faults[name] += (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - minflt) / repeat
    return best, faults


def peak_mib() -> float:
    """Peak RSS of this process so far, MiB: ``VmHWM`` (reset by ``exec``, unlike
    ``ru_maxrss``, which a child started by fork inherits from its parent)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def read_peak(path: Path, before: Path | None, version: str) -> dict[str, float]:
    """Peak RSS of a fresh process that reads ``path`` once with ``version``."""
    args = [sys.executable, __file__, str(path), "--read-once", version]
    child = subprocess.run(args + (["--before", str(before)] if before else []), capture_output=True, check=True)
    return json.loads(child.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("release", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--before", type=Path, help="an older privtool/release.py to time side by side")
    parser.add_argument("--peak", action="store_true", help="also the peak RSS of one read in a fresh process")
    parser.add_argument("--read-once", choices=["after", "before"], help=argparse.SUPPRESS)
    opts = parser.parse_args()
    versions = {"after": current} | ({"before": load_before(opts.before)} if opts.before else {})
    if opts.read_once:
        ready = peak_mib()
        versions[opts.read_once].read_release(opts.release)
        print(json.dumps({"rss_before_read_mib": round(ready), "peak_rss_mib": round(peak_mib())}))
        return
    text = opts.release.read_text(encoding="utf-8")
    releases = {name: module.read_release(opts.release) for name, module in versions.items()}
    readers = {name: lambda m=module: m.read_release(opts.release) for name, module in versions.items()}
    read, read_faults = best_cpu(readers, opts.repeat)
    dump, dump_faults = best_cpu({name: release.dumps for name, release in releases.items()}, opts.repeat)
    result: dict[str, Any] = {"release": str(opts.release), "mib": round(opts.release.stat().st_size / 2**20, 1)}
    for name in versions:
        result[name] = {
            "read_cpu_s": round(read[name], 3),
            "dump_cpu_s": round(dump[name], 3),
            "read_minflt": round(read_faults[name]),
            "dump_minflt": round(dump_faults[name]),
            "dump_equals_file": releases[name].dumps() == text,
        }
        if opts.peak:
            result[name] |= read_peak(opts.release, opts.before, name)
    if opts.before:
        result["read_speedup"] = round(read["before"] / read["after"], 1)
        result["dump_speedup"] = round(dump["before"] / dump["after"], 1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
