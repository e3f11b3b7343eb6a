"""Time reading (parse + validate) and writing (canonical dump) of a release file.

    python benchmarks/release_io.py benchmarks/out/scale515k/safe.json --repeat 3

Reports the best of ``--repeat`` runs in CPU seconds of this process (the
machine is shared, so CPU time is steadier than wall time) and whether the
dump reproduces the file byte for byte.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from privtool.release import read_release


def best_cpu(fn, repeat: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.process_time()
        out = fn()
        best = min(best, time.process_time() - start)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("release", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    opts = parser.parse_args()
    read_s, release = best_cpu(lambda: read_release(opts.release), opts.repeat)
    dump_s, text = best_cpu(release.dumps, opts.repeat)
    print(
        json.dumps(
            {
                "release": str(opts.release),
                "mib": round(opts.release.stat().st_size / 2**20, 1),
                "read_cpu_s": round(read_s, 2),
                "dump_cpu_s": round(dump_s, 2),
                "dump_equals_file": text == opts.release.read_text(encoding="utf-8"),
            }
        )
    )


if __name__ == "__main__":
    main()
