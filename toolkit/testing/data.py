"""The data the conformance kit runs components on.

Two sizes, both deterministic for a seed:

* :func:`tiny_datasets`: many random datasets of a handful of records over a
  few items, small enough for a brute-force oracle of a claim (every itemset of
  every chunk or record counted by hand);
* :func:`small_dataset`: a few hundred synthetic baskets with frequent patterns
  (:mod:`privtool.synth`), large enough for clusters, chunks, rules and more
  than two units of work per executor worker.

Both are cached: a dataset is immutable, and every check of a session reuses them.
"""

from __future__ import annotations

import functools

import numpy as np

from ..dataset import Dataset
from ..synth import SynthSpec, generate


@functools.cache
def tiny_datasets(count: int = 8, seed: int = 0) -> tuple[Dataset, ...]:
    """``count`` random datasets of 4..14 records over 3..7 items (labels
    ``a``..``g``), record sizes 1..4, items drawn with skewed popularity so that
    some are frequent and some rare."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x7E57]))
    out = []
    for _ in range(count):
        n_items = int(rng.integers(3, 8))
        labels = [chr(ord("a") + i) for i in range(n_items)]
        weights = 1.0 / np.arange(1, n_items + 1)
        weights /= weights.sum()
        records = []
        for _ in range(int(rng.integers(4, 15))):
            size = int(rng.integers(1, min(4, n_items) + 1))
            records.append(sorted(rng.choice(labels, size=size, replace=False, p=weights).tolist()))
        out.append(Dataset.from_records(records))
    return tuple(out)


@functools.cache
def small_dataset(seed: int = 0, records: int = 400) -> Dataset:
    """``records`` synthetic baskets over 40 items with frequent patterns."""
    spec = SynthSpec(records=records, items=40, avg_size=4.0, max_size=10, n_patterns=12, pattern_size=3.0)
    return next(generate(spec, seed=seed)).compact()
