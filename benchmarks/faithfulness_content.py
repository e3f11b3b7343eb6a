"""CPU of faithfulness's content check on a disassociated release, serially,
and how many clusters and joint clusters reach the per-cluster check
(``privtool.verifiers.faithfulness._ClusterChecks``) instead of being decided
on arrays in units.

    python benchmarks/faithfulness_content.py --release safe.json --trail safe-trail.json --original pos.dat

Reading the three files is not timed. Prints one JSON line: CPU and wall
seconds of ``check_disassociated_content``, the count it returns (occurrences
removed without a trail entry), the per-cluster checks, and the load average
before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any

from privtool.io import read_dataset
from privtool.registry import load_registry
from privtool.release import read_release
from privtool.trail import read_trail
from privtool.verifiers import faithfulness


def counted(calls: dict[str, int], name: str) -> Any:
    """``_ClusterChecks.<name>``, counting its calls in ``calls``."""
    method = getattr(faithfulness._ClusterChecks, name)

    def wrapper(self: Any, index: int) -> int:
        calls[name] += 1
        return int(method(self, index))

    return wrapper


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", required=True)
    parser.add_argument("--trail", required=True)
    parser.add_argument("--original", required=True)
    args = parser.parse_args()
    release, trail = read_release(args.release), read_trail(args.trail)
    original = read_dataset(load_registry(), args.original)
    calls = {"cluster": 0, "joint": 0}
    for name in calls:
        setattr(faithfulness._ClusterChecks, name, counted(calls, name))
    load_before = os.getloadavg()[0]
    cpu, wall = time.process_time(), time.perf_counter()
    removed = faithfulness.check_disassociated_content(release, original, trail)
    result = {
        "cpu_s": round(time.process_time() - cpu, 2),
        "wall_s": round(time.perf_counter() - wall, 2),
        "removed_without_trail_entry": removed,
        "per_cluster_checks": calls,
        "load": [round(load_before, 1), round(os.getloadavg()[0], 1)],
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
