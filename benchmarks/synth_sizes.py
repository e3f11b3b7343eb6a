"""Record-size distribution of ``privtool synth --like bms-pos`` against the real
BMS files in ../shared/data: a table of shares per size range and a plot of the
complementary CDF (share of records with at least s items), written to
docs/results/synth-record-sizes.{png,svg}.

    python benchmarks/synth_sizes.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from privtool.io import read_dataset
from privtool.registry import load_registry
from privtool.synth import PRESETS, generate

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data"
RESULTS = REPO / "docs" / "results"
REAL = ("bms-webview-1", "bms-webview-2", "bms-pos-subset")
RANGES = ((1, 1), (2, 2), (3, 4), (5, 8), (9, 16), (17, 32), (33, 64), (65, 128), (129, 256), (257, 512))


def synthetic_sizes(seed: int = 0) -> np.ndarray:
    return np.concatenate([block.sizes for block in generate(PRESETS["bms-pos"], seed)])


def main() -> None:
    registry = load_registry()
    sizes = {name: read_dataset(registry, DATA / f"{name}.dat.gz").sizes for name in REAL}
    sizes["synth --like bms-pos"] = synthetic_sizes()
    header = (
        "| data | records | avg | median | max | "
        + " | ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in RANGES)
        + " |"
    )
    print(header)
    print("|" + "---|" * (5 + len(RANGES)))
    for name, s in sizes.items():
        shares = [((s >= a) & (s <= b)).mean() for a, b in RANGES]
        cells = " | ".join(f"{100 * x:.1f}%" if x >= 0.0005 else ("<0.1%" if x > 0 else "0") for x in shares)
        print(f"| {name} | {len(s):,} | {s.mean():.3f} | {np.median(s):.0f} | {s.max()} | {cells} |")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, s in sizes.items():
        values, counts = np.unique(s, return_counts=True)
        at_least = counts[::-1].cumsum()[::-1] / len(s)
        style = {"linewidth": 2.5, "color": "black"} if name.startswith("synth") else {"linewidth": 1.5}
        ax.step(values, at_least, where="post", label=f"{name} (avg {s.mean():.2f}, max {s.max()})", **style)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("record size s (items)")
    ax.set_ylabel("share of records with at least s items")
    ax.set_title("Record sizes: privtool synth --like bms-pos vs real BMS data")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    RESULTS.mkdir(parents=True, exist_ok=True)
    for suffix in ("png", "svg"):
        fig.savefig(RESULTS / f"synth-record-sizes.{suffix}", dpi=120)
    print(f"wrote {RESULTS / 'synth-record-sizes.png'} and .svg")


if __name__ == "__main__":
    main()
