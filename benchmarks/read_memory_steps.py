"""Where the memory of reading a FIMI file goes, step by step (tracemalloc).

Usage (from the repository root)::

    .venv/bin/python benchmarks/read_memory_steps.py [FILE]   # default ../shared/data/t10i4d100k.dat.gz

Prints the decompressed size and the traced peak while decompressing
(:func:`privtool.io.read_bytes`), then the traced peak while parsing with the
``fimi`` format, the memory still held afterwards (the bytes and the dataset)
and the size of the dataset's CSR arrays.
"""

from __future__ import annotations

import sys
import tracemalloc
from pathlib import Path

from privtool.io import read_bytes
from privtool.plugins.formats import Fimi

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO.parent / "shared" / "data" / "t10i4d100k.dat.gz"
    tracemalloc.start()
    data = read_bytes(path)
    mib = 2**20
    print(
        f"{path.name}: decompressed {len(data) / mib:.1f} MiB, peak while decompressing "
        f"{tracemalloc.get_traced_memory()[1] / mib:.1f} MiB"
    )
    tracemalloc.reset_peak()
    dataset = Fimi().read_bytes(data, str(path), {})
    current, peak = tracemalloc.get_traced_memory()
    arrays = (dataset.items.nbytes + dataset.indptr.nbytes) / mib
    print(
        f"parse peak {peak / mib:.1f} MiB, held after parsing {current / mib:.1f} MiB, dataset arrays {arrays:.1f} MiB"
    )
    print(
        f"item occurrences {dataset.n_occurrences:,}: parse peak {peak / dataset.n_occurrences:.1f} bytes per "
        "occurrence"
    )


if __name__ == "__main__":
    main()
