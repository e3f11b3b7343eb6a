"""Time the reconstruction model on a real disassociated release.

    .venv/bin/python benchmarks/reconstruction.py [--release R.json]
        [--data ../shared/data/bms-webview-2.dat.gz] [--samples 20] [--pairs 2000]

Without ``--release`` it first runs ``privtool anonymize DATA --method
disassociation --k 5 --m 2 --max-cluster-size 30`` into a temporary file. It
prints one JSON object: the release's shape, the time to compile the model, to
count (and log10 of the count), the median time per sampled reconstruction, and
the time per min/max/expected-support query over random pairs of published items.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from privtool.attacks.reconstruction import ReconstructionModel
from privtool.release import read_release

REPO = Path(__file__).resolve().parent.parent


def make_release(data: str, out: Path) -> float:
    """Disassociate ``data`` with the installed ``privtool`` (k=5, m=2, max cluster size 30)."""
    privtool = Path(sys.executable).parent / "privtool"
    command = [
        str(privtool),
        "anonymize",
        data,
        "--method",
        "disassociation",
        "--k",
        "5",
        "--m",
        "2",
        "--max-cluster-size",
        "30",
        "-o",
        str(out),
        "-q",
    ]
    started = time.perf_counter()
    subprocess.run(command, check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--release")
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data" / "bms-webview-2.dat.gz"))
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--pairs", type=int, default=2000)
    args = parser.parse_args()
    result: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.release) if args.release else Path(tmp) / "release.json"
        if not args.release:
            result["anonymize_seconds"] = round(make_release(args.data, path), 2)
        release = read_release(path)
        started = time.perf_counter()
        model = ReconstructionModel(release)
        result["compile_seconds"] = round(time.perf_counter() - started, 3)
    result["clusters"] = len(model.clusters)
    result["joint_clusters"] = len(model.joint_ids)
    result["chunks"] = len(model.chunks)
    result["records"] = model.n_slots
    result["terms"] = sum(len(c.terms) for c in model.clusters)
    started = time.perf_counter()
    count = model.count()
    result["count_seconds"] = round(time.perf_counter() - started, 3)
    result["log10_reconstructions"] = round(count.log10, 1)
    started = time.perf_counter()
    bits = count.total.bit_length()
    result["exact_total_bits"] = bits
    result["exact_total_seconds"] = round(time.perf_counter() - started, 3)
    started = time.perf_counter()
    first = model.sample(np.random.default_rng(0))
    result["first_sample_seconds_incl_plan"] = round(time.perf_counter() - started, 3)
    result["occurrences_per_sample"] = first.n_occurrences
    times = []
    for i in range(args.samples):
        started = time.perf_counter()
        model.sample(np.random.default_rng(i + 1))
        times.append(time.perf_counter() - started)
    result["sample_seconds_median"] = round(statistics.median(times), 4)
    rng = np.random.default_rng(0)
    labels = np.array(model.labels)
    pairs = [tuple(rng.choice(labels, 2, replace=False)) for _ in range(args.pairs)]
    for name, fn in (
        ("bounds", model.support_bounds),
        ("max", model.max_support),
        ("expected", model.expected_support),
    ):
        fn(pairs[0])  # warm up: the first flow imports scipy
        started = time.perf_counter()
        for pair in pairs:
            fn(pair)
        result[f"{name}_us_per_pair"] = round((time.perf_counter() - started) / len(pairs) * 1e6, 1)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
