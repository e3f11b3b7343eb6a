"""Where the driver of `privtool anonymize --method disassociation` spends its
time and memory, step by step (docs/results/scale.md, "Disassociate").

    python benchmarks/disassociate_steps.py anonymize DATA --method disassociation --k 5 --m 2 \
        -o plain.json --trail plain-trail.json -q --executor dask --workers 2

Runs the command line given (in this process, through `privtool.cli.main`)
with each step below wrapped: when a step returns, one line on stderr gives
its wall and CPU seconds (this process only: work on workers is not counted),
the resident memory before and after it and the peak so far (``VmRSS`` and
``VmHWM`` of `/proc/self/status`, MiB). Nested steps print before the step
holding them. The last line has the command's user and system CPU and
``ru_maxrss``, and the load average.
"""

from __future__ import annotations

import functools
import importlib
import resource
import sys
import time
from collections.abc import Callable
from typing import Any

Steps = tuple[tuple[str, str, tuple[str, ...]], ...]
"""(module, function or Class.method, modules that imported the function by name), per step."""

STEPS: Steps = (
    ("privtool.io", "read_dataset", ("privtool.cli.anonymize",)),
    ("privtool.plugins.disassociation.horpart", "partition", ("privtool.plugins.disassociation",)),
    ("privtool.chain", "chunk_clusters", ("privtool.plugins.disassociation",)),
    ("privtool.plugins.disassociation.refine", "refine", ("privtool.plugins.disassociation",)),
    ("privtool.plugins.disassociation.publish", "project", ()),
    ("privtool.plugins.disassociation.publish", "canonical_chunks", ()),
    ("privtool.plugins.disassociation.publish", "term_chunks", ()),
    ("privtool.plugins.disassociation.publish", "trail_of", ()),
    ("privtool.plugins.disassociation.publish", "build_outcome", ("privtool.plugins.disassociation",)),
    ("privtool.dataset", "Dataset.content_sha256", ()),
    ("privtool.release_slices", "checked_content", ("privtool.pipeline",)),
    ("privtool.verifiers.structure", "check_structure", ()),
    ("privtool.pipeline", "check_release", ()),
    ("privtool.pipeline", "stamp", ()),
    ("privtool.pipeline", "write_outcome", ("privtool.cli.anonymize",)),
)

START = time.perf_counter()


def memory_mib() -> tuple[float, float]:
    """``(VmRSS, VmHWM)`` of this process, MiB."""
    with open("/proc/self/status") as status:
        fields = {line.split(":")[0]: int(line.split()[1]) for line in status if line.startswith(("VmRSS", "VmHWM"))}
    return fields["VmRSS"] / 1024, fields["VmHWM"] / 1024


def timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` printing its step line when it returns."""

    @functools.wraps(fn)
    def step(*args: Any, **kwargs: Any) -> Any:
        wall, cpu, (before, _) = time.perf_counter(), time.process_time(), memory_mib()
        out = fn(*args, **kwargs)
        after, peak = memory_mib()
        print(
            f"[{time.perf_counter() - START:7.1f}] {name:24s} wall {time.perf_counter() - wall:7.2f} "
            f"cpu {time.process_time() - cpu:7.2f}  rss {before:6.0f} -> {after:6.0f}  peak {peak:6.0f} MiB",
            file=sys.stderr,
            flush=True,
        )
        return out

    return step


def wrap_steps(steps: Steps = STEPS) -> None:
    """Replace every function of ``steps`` by its :func:`timed` version,
    where it is defined and where it was imported by name."""
    for module_name, attribute, importers in steps:
        owner: Any = importlib.import_module(module_name)
        *classes, name = attribute.split(".")
        for cls in classes:
            owner = getattr(owner, cls)
        wrapped = timed(attribute, getattr(owner, name))
        setattr(owner, name, wrapped)
        for importer in importers:
            module = importlib.import_module(importer)
            if hasattr(module, name):
                setattr(module, name, wrapped)


def main(steps: Steps = STEPS) -> int:
    """Run the command line of ``sys.argv`` with ``steps`` wrapped (see the module doc)."""
    wrap_steps(steps)
    from privtool.cli import main as privtool_main

    code = privtool_main(sys.argv[1:])
    usage = resource.getrusage(resource.RUSAGE_SELF)
    with open("/proc/loadavg") as load:
        print(
            f"total wall {time.perf_counter() - START:.1f} s, user {usage.ru_utime:.1f} s, sys {usage.ru_stime:.1f} s, "
            f"ru_maxrss {usage.ru_maxrss / 1024:.0f} MiB, load {load.read().strip()}",
            file=sys.stderr,
        )
    return code


if __name__ == "__main__":  # Dask's spawned workers import this module: only the command runs it
    sys.exit(main())
