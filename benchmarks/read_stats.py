"""Time reading + ``stats`` on every dataset file, with peak memory.

Usage (from the repository root)::

    .venv/bin/python benchmarks/read_stats.py [--data DIR] [--extra FILE ...] [--synth-like PRESET]
        [--repeat N] [--naive] [--plot PREFIX]

For each ``*.dat.gz`` in ``--data`` (default ``../shared/data``) and each
``--extra`` file (any format privtool reads, detected from the extension) it
prints the best-of-``N`` wall time of :func:`privtool.io.read_dataset`, of
:func:`privtool.cli.stats.dataset_stats` and of writing the dataset back as an
uncompressed FIMI file with :func:`privtool.io.write_dataset` (atomic, so it
includes an ``fsync``), then the peak of traced memory
(``tracemalloc``, which sees numpy's buffers) of one read + stats in a separate
run, in MiB and in bytes per item occurrence. ``--naive`` adds the time of the
one-line reader privtool started with (``line.split()`` on the decompressed
text, then ``Dataset.from_records``), as the before/after reference.

``--synth-like bms-pos`` also measures the file ``privtool synth --like
bms-pos --seed 0`` writes (515,597 records imitating BMS-POS), generated into a
temporary folder and deleted afterwards.

``--plot PREFIX`` draws read time against item occurrences (and the naive
reader's, with ``--naive``) to ``PREFIX.png`` and ``PREFIX.svg``.
"""

from __future__ import annotations

import argparse
import gzip
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from privtool.cli.stats import dataset_stats
from privtool.dataset import Dataset
from privtool.io import read_dataset, write_dataset
from privtool.registry import Registry, load_registry

REPO = Path(__file__).resolve().parent.parent


def best_of(repeat: int, fn: Callable[[], object]) -> float:
    """Smallest wall time of ``repeat`` calls of ``fn``, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def naive_read(path: Path) -> Dataset:
    """The reader privtool had before the vectorised one (FIMI in gzip only)."""
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return Dataset.from_records([line.split() for line in handle])


def write_synth(path: Path, preset: str) -> None:
    """``privtool synth --like PRESET --seed 0 -o PATH``, in-process."""
    from privtool.cli import main as privtool

    if privtool(["synth", "--like", preset, "--seed", "0", "-o", str(path), "-q"]) != 0:
        raise SystemExit(f"privtool synth --like {preset} failed")


def _read_and_count(registry: Registry, path: Path) -> dict[str, Any]:
    """Read a dataset and compute its stats: the work whose peak memory is reported."""
    return dataset_stats(read_dataset(registry, path))


def peak_mib(fn: Callable[[], object]) -> float:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def plot(rows: list[dict], prefix: str) -> None:
    """Read time against item occurrences, log-log, PNG and SVG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    x = [row["occurrences"] for row in rows]
    ax.plot(x, [row["read_s"] for row in rows], "o", label="privtool read (vectorised)")
    naive = [(row["occurrences"], row["naive_s"]) for row in rows if row.get("naive_s") is not None]
    if naive:
        ax.plot(*zip(*naive, strict=False), "s", mfc="none", label="naive read (line.split + from_records)")
    for row in rows:
        ax.annotate(
            row["file"].split(".")[0],
            (row["occurrences"], row["read_s"]),
            fontsize=7,
            xytext=(4, -10),
            textcoords="offset points",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("item occurrences in the file")
    ax.set_ylabel("seconds (best of repeats)")
    ax.set_title("Reading a gzip-compressed FIMI file into a Dataset")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(f"{prefix}.{ext}", dpi=120)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--extra", type=Path, action="append", default=[], help="another dataset file (repeatable)")
    parser.add_argument("--synth-like", metavar="PRESET", help="also a file from privtool synth --like PRESET")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--naive", action="store_true", help="also time the naive reader (.dat.gz files)")
    parser.add_argument("--plot", metavar="PREFIX", help="write PREFIX.png and PREFIX.svg")
    args = parser.parse_args()
    registry = load_registry()
    files = sorted(args.data.glob("*.dat.gz")) + args.extra
    scratch = tempfile.TemporaryDirectory()
    if args.synth_like:
        files.append(Path(scratch.name) / f"synth-{args.synth_like}.dat.gz")
        write_synth(files[-1], args.synth_like)
    header = (
        f"{'file':<28} {'records':>9} {'items':>7} {'occurrences':>12} {'read s':>7} {'stats s':>8} "
        f"{'write s':>8} {'peak MiB':>9} {'B/occ':>6}"
    )
    if args.naive:
        header += f" {'naive read s':>13}"
    print(header)
    rows = []
    for path in files:
        dataset = read_dataset(registry, path)
        written = Path(scratch.name) / "written.dat"
        read_s = best_of(args.repeat, partial(read_dataset, registry, path))
        stats_s = best_of(args.repeat, partial(dataset_stats, dataset))
        write_s = best_of(args.repeat, partial(write_dataset, registry, dataset, written))
        peak = peak_mib(partial(_read_and_count, registry, path))
        occurrences = dataset.n_occurrences
        row = (
            f"{path.name:<28} {dataset.n_records:>9,} {int((dataset.supports > 0).sum()):>7,} {occurrences:>12,} "
            f"{read_s:>7.3f} {stats_s:>8.3f} {write_s:>8.3f} {peak:>9.1f} {peak * 2**20 / occurrences:>6.1f}"
        )
        naive_s = (
            best_of(args.repeat, partial(naive_read, path)) if args.naive and path.name.endswith(".dat.gz") else None
        )
        if naive_s is not None:
            row += f" {naive_s:>13.3f}"
        print(row, flush=True)
        rows.append({"file": path.name, "occurrences": occurrences, "read_s": read_s, "naive_s": naive_s})
    if args.plot:
        plot(rows, args.plot)
    scratch.cleanup()


if __name__ == "__main__":
    main()
