"""Synthetic basket data in the style of the IBM Quest generator.

Agrawal & Srikant, "Fast Algorithms for Mining Association Rules" (VLDB 1994),
Section 3 ("Generation of synthetic data"): records are built from a table of
*potentially large itemsets* (patterns) so that the data holds correlated
itemsets as real baskets do.

* **Patterns** (:func:`make_patterns`): ``n_patterns`` itemsets whose sizes are
  Poisson with mean ``pattern_size``. Each pattern takes a fraction of its items
  from the previous one (the fraction is exponentially distributed with mean
  ``correlation``) and draws the rest from the item popularity. Each pattern has
  a weight (exponential, mean 1, normalised: the probability it is picked) and
  a corruption level (normal, mean ``corruption``, variance 0.1, clipped to
  [0, 0.95]).
* **Records**: a record's target size is drawn from ``size_distribution``
  (``poisson``: 1 + Poisson(avg - 1) clipped to ``max_size``, as Quest;
  ``lognormal``: heavier tailed, like the BMS click and point-of-sale data, and
  drawn again above ``max_size``). Patterns are picked by weight and
  corrupted (items dropped one by one while a uniform number is below the
  pattern's corruption level, keeping at least one) and laid end to end; a
  record receives the patterns that start inside its target length. A pattern
  that overflows the record stays in it in half of the cases and moves to the
  next record otherwise (the paper's rule). A record left without a pattern
  gets one fresh pattern.

Where the paper is silent or where we depart from it (all documented in
``docs/commands/synth.md``):

* item popularity is skewed: the probability of an item is proportional to
  ``1 / rank ** skew`` (ranks a seeded permutation of the ids); Quest draws
  uniformly (``skew = 0``);
* a fraction ``noise`` of the pattern picks is replaced by a single item drawn
  from the popularity, which gives the long tail of rare items real data has;
* repeated items within a record are merged; a record left short of its
  target gets extra picks (up to eight rounds), and one longer than its target
  keeps its first ``target`` distinct items.

The generator works in blocks of :data:`BLOCK_RECORDS` records, vectorised with
numpy; each block has its own generator keyed by the seed and the block number
(:meth:`privtool.context.Context.rng`), so the output depends only on the
specification and the seed, and memory stays bounded whatever the number of
records.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, fields, replace
from functools import cache
from typing import Any

import numpy as np

from .arrays import offsets_of
from .context import Context
from .dataset import Dataset
from .errors import ParameterError

BLOCK_RECORDS = 1 << 16
"""Records generated (and written) per block."""

SIZE_DISTRIBUTIONS = ("poisson", "lognormal")
MAX_ITEMS = 10_000_000
"""Largest ``--items`` and ``--patterns``: the generator keeps a few arrays of
that length in memory (about 80 MB each at the limit); real item vocabularies
are far smaller (retail: 16,470)."""
MAX_SKEW = 20.0
"""Largest ``--skew``: beyond it the first item takes all the probability, and
``1 / rank ** skew`` underflows to zero for the tail."""


@dataclass(frozen=True)
class SynthSpec:
    """Everything that shapes the synthetic data (the seed aside).

    Field names are the command-line options (``avg_size`` is ``--avg-size``).
    """

    records: int = 10_000
    items: int = 1_000
    avg_size: float = 10.0
    max_size: int = 50
    n_patterns: int = 2_000
    pattern_size: float = 4.0
    correlation: float = 0.5
    corruption: float = 0.5
    skew: float = 1.0
    noise: float = 0.05
    size_distribution: str = "poisson"
    size_sigma: float = 1.0

    def __post_init__(self) -> None:
        def need(condition: bool, message: str) -> None:
            if not condition:
                raise ParameterError(message)

        need(self.records >= 1, f"--records must be at least 1, not {self.records}.")
        need(1 <= self.items <= MAX_ITEMS, f"--items must be between 1 and {MAX_ITEMS:,}, not {self.items}.")
        need(self.max_size >= 1, f"--max-size must be at least 1, not {self.max_size}.")
        need(
            self.max_size <= self.items,
            f"--max-size ({self.max_size}) cannot exceed --items ({self.items}): a record holds distinct items.",
        )
        need(
            1 <= self.avg_size <= self.max_size,
            f"--avg-size must be between 1 and --max-size ({self.max_size}), not {self.avg_size}.",
        )
        need(
            1 <= self.n_patterns <= MAX_ITEMS,
            f"--patterns must be between 1 and {MAX_ITEMS:,}, not {self.n_patterns}.",
        )
        need(self.pattern_size >= 1, f"--pattern-size must be at least 1, not {self.pattern_size}.")
        need(0 <= self.correlation <= 1, f"--correlation must be between 0 and 1, not {self.correlation}.")
        need(0 <= self.corruption <= 0.95, f"--corruption must be between 0 and 0.95, not {self.corruption}.")
        need(0 <= self.skew <= MAX_SKEW, f"--skew must be between 0 and {MAX_SKEW:g}, not {self.skew}.")
        need(0 <= self.noise <= 1, f"--noise must be between 0 and 1, not {self.noise}.")
        need(
            self.size_distribution in SIZE_DISTRIBUTIONS,
            f"--size-distribution must be one of {', '.join(SIZE_DISTRIBUTIONS)}, not {self.size_distribution!r}.",
        )
        need(self.size_sigma > 0, f"--size-sigma must be above 0, not {self.size_sigma}.")

    def updated(self, **changes: Any) -> SynthSpec:
        """A copy with the non-``None`` ``changes`` applied (validated again)."""
        known = {f.name for f in fields(self)}
        return replace(self, **{k: v for k, v in changes.items() if v is not None and k in known})


PRESETS: dict[str, SynthSpec] = {
    # BMS-POS (Zheng, Kohavi & Mason, KDD 2001): 515,597 records, 1,657 items,
    # max 164, avg 6.5. The size distribution, its spread and the 6.6 target
    # were tuned against `privtool stats` of the output (docs/commands/synth.md):
    # the truncated lognormal and the records that stay short after merging
    # repeated items pull the average about 0.1 below the target.
    "bms-pos": SynthSpec(
        records=515_597,
        items=1_657,
        avg_size=6.6,
        max_size=164,
        size_distribution="lognormal",
        size_sigma=1.2,
    ),
}


@dataclass(frozen=True)
class Patterns:
    """The table of potentially large itemsets, in CSR form, with the item
    popularity they were drawn from."""

    indptr: np.ndarray
    items: np.ndarray
    cumulative_weight: np.ndarray
    corruption: np.ndarray
    item_cumulative: np.ndarray

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.indptr)


def item_popularity(spec: SynthSpec, ctx: Context) -> np.ndarray:
    """Probability of each item id: ``1 / rank ** skew`` over a seeded permutation."""
    ranks = ctx.rng("synth", "popularity").permutation(spec.items) + 1
    weight = 1.0 / ranks.astype(np.float64) ** spec.skew
    return weight / weight.sum()


def make_patterns(spec: SynthSpec, ctx: Context) -> Patterns:
    """The Quest table of potentially large itemsets (see the module docstring)."""
    rng = ctx.rng("synth", "patterns")
    popularity = item_popularity(spec, ctx)
    sizes = np.clip(rng.poisson(spec.pattern_size, spec.n_patterns), 1, spec.items)
    fractions = np.minimum(
        rng.exponential(spec.correlation, spec.n_patterns) if spec.correlation > 0 else np.zeros(spec.n_patterns), 1.0
    )
    log_popularity = np.log(popularity)
    chunks: list[np.ndarray] = []
    previous = np.zeros(0, dtype=np.int64)
    for size, fraction in zip(sizes.tolist(), fractions.tolist(), strict=False):
        n_old = min(len(previous), int(fraction * size))
        old = rng.permutation(previous)[:n_old]
        # Weighted sampling without replacement by the Gumbel top-k trick: the
        # largest log p + Gumbel keys are a popularity-weighted draw.
        keys = log_popularity - np.log(-np.log(rng.random(spec.items)))
        keys[old] = -np.inf
        n_new = size - n_old
        new = np.argpartition(-keys, n_new - 1)[:n_new] if n_new else previous[:0]
        previous = np.concatenate([old, new]).astype(np.int64)
        chunks.append(previous)
    indptr = offsets_of(sizes)
    weights = rng.exponential(1.0, spec.n_patterns)
    corruption = np.clip(rng.normal(spec.corruption, math.sqrt(0.1), spec.n_patterns), 0.0, 0.95)
    return Patterns(
        indptr=indptr,
        items=np.concatenate(chunks).astype(np.int32),
        cumulative_weight=np.cumsum(weights) / weights.sum(),
        corruption=corruption,
        item_cumulative=np.cumsum(popularity),
    )


def _target_sizes(spec: SynthSpec, n: int, rng: np.random.Generator) -> np.ndarray:
    """Poisson sizes are clipped to ``max_size`` (as Quest); lognormal ones above
    it are drawn again (a truncated lognormal), so that the tail thins out
    towards ``max_size`` instead of piling up there."""
    if spec.size_distribution == "poisson":
        return np.clip(1 + rng.poisson(spec.avg_size - 1, n), 1, spec.max_size).astype(np.int64)
    # floor(X) + 1 with X lognormal of mean avg - 0.5 has mean close to avg.
    mu = math.log(max(spec.avg_size - 0.5, 0.5)) - spec.size_sigma**2 / 2
    sizes = 1 + np.floor(rng.lognormal(mu, spec.size_sigma, n)).astype(np.int64)
    too_long = np.flatnonzero(sizes > spec.max_size)
    while len(too_long):
        sizes[too_long] = 1 + np.floor(rng.lognormal(mu, spec.size_sigma, len(too_long))).astype(np.int64)
        too_long = too_long[sizes[too_long] > spec.max_size]
    return sizes


def _draw_instances(
    patterns: Patterns, spec: SynthSpec, count: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``count`` pattern picks: ``(pattern id or -1 - item for a noise item, kept length)``."""
    picks = np.searchsorted(patterns.cumulative_weight, rng.random(count), side="right")
    picks = np.minimum(picks, len(patterns.corruption) - 1)
    sizes = patterns.sizes[picks]
    # Items are dropped while a uniform number stays below c: P(drop >= j) = c ** j.
    dropped = rng.geometric(1.0 - patterns.corruption[picks]) - 1
    kept = np.maximum(sizes - dropped, 1)
    noise = rng.random(count) < spec.noise
    if noise.any():
        noise_items = np.searchsorted(patterns.item_cumulative, rng.random(int(noise.sum())), side="right")
        picks[noise] = -1 - np.minimum(noise_items, spec.items - 1)
        kept[noise] = 1
    return picks.astype(np.int64), kept.astype(np.int64)


def _expand(
    patterns: Patterns, picks: np.ndarray, kept: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """The items of each pick, in pick order: ``(pick index per item, item)``.

    A corrupted pattern keeps ``kept`` of its items, chosen at random."""
    is_pattern = picks >= 0
    full = np.where(is_pattern, patterns.sizes[np.maximum(picks, 0)], 1)
    owner = np.repeat(np.arange(len(picks), dtype=np.int64), full)
    starts = offsets_of(full)
    offset = np.arange(starts[-1], dtype=np.int64) - starts[owner]
    pattern_items = patterns.items[patterns.indptr[np.maximum(picks, 0)][owner] + offset]
    items = np.where(is_pattern[owner], pattern_items, -1 - picks[owner])
    order = np.lexsort((rng.random(len(owner)), owner))
    rank = np.arange(len(order), dtype=np.int64) - starts[owner[order]]
    keep = order[rank < kept[owner[order]]]
    keep.sort()
    return owner[keep], items[keep].astype(np.int64)


def _lay_out(
    patterns: Patterns, spec: SynthSpec, targets: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Corrupted pattern picks laid end to end and cut into records of the
    ``targets`` lengths: ``(record per item, item)``, grouped by record, in pick order."""
    n = len(targets)
    bounds = offsets_of(targets)
    total = int(bounds[-1])
    mean_pick = float(np.mean(np.maximum(patterns.sizes * (1 - patterns.corruption), 1)))
    picks_list, kept_list, length = [], [], 0
    while length < total:
        count = int((total - length) / mean_pick * 1.2) + 16
        picks, kept = _draw_instances(patterns, spec, count, rng)
        picks_list.append(picks)
        kept_list.append(kept)
        length += int(kept.sum())
    picks, kept = np.concatenate(picks_list), np.concatenate(kept_list)
    starts = offsets_of(kept)[:-1]
    inside = starts < total
    picks, kept, starts = picks[inside], kept[inside], starts[inside]
    record = np.searchsorted(bounds, starts, side="right") - 1
    # A pattern that overflows its record moves to the next one half of the time.
    overflows = starts + kept > bounds[record + 1]
    record = record + (overflows & (rng.random(len(record)) < 0.5))
    stays = record < n
    picks, kept, record = picks[stays], kept[stays], record[stays]
    empty = np.flatnonzero(np.bincount(record, minlength=n) == 0)
    if len(empty):
        extra_picks, extra_kept = _draw_instances(patterns, spec, len(empty), rng)
        picks = np.concatenate([picks, extra_picks])
        kept = np.concatenate([kept, extra_kept])
        record = np.concatenate([record, empty])
    owner, items = _expand(patterns, picks, kept, rng)
    rows = record[owner]
    order = np.argsort(rows, kind="stable")
    return rows[order], items[order]


def _first_occurrences(rows: np.ndarray, items: np.ndarray, n_items: int) -> tuple[np.ndarray, np.ndarray]:
    """Drop repeated items within a record, keeping each first occurrence in place."""
    _, first = np.unique(rows * n_items + items, return_index=True)
    first.sort()
    return rows[first], items[first]


TOP_UP_ROUNDS = 8
"""Rounds of extra picks for records that merging repeated items left short."""


def generate_block(spec: SynthSpec, patterns: Patterns, n: int, rng: np.random.Generator) -> Dataset:
    """``n`` records (see the module docstring); labels are the ids ``"0"``..``str(items-1)``.

    Merging repeated items shortens records (long ones most, as popular items
    recur); records still short of their target get extra picks for up to
    :data:`TOP_UP_ROUNDS` rounds, then anything beyond the target is cut.
    """
    targets = _target_sizes(spec, n, rng)
    rows, items = _first_occurrences(*_lay_out(patterns, spec, targets, rng), spec.items)
    for _ in range(TOP_UP_ROUNDS):
        counts = np.bincount(rows, minlength=n)
        short = np.flatnonzero(counts < targets)
        if not len(short):
            break
        extra_rows, extra_items = _lay_out(patterns, spec, targets[short] - counts[short], rng)
        rows = np.concatenate([rows, short[extra_rows]])
        items = np.concatenate([items, extra_items])
        order = np.argsort(rows, kind="stable")
        rows, items = _first_occurrences(rows[order], items[order], spec.items)
    counts = np.bincount(rows, minlength=n)
    capped = np.arange(len(rows), dtype=np.int64) - offsets_of(counts)[rows] < targets[rows]
    indptr = offsets_of(np.minimum(counts, targets))
    return Dataset.from_csr(indptr, items[capped].astype(np.int32), item_labels(spec.items), normalise=True)


@cache
def item_labels(n_items: int) -> tuple[str, ...]:
    """``("0", "1", ...)``: already in canonical label order."""
    return tuple(str(i) for i in range(n_items))


def generate(spec: SynthSpec, seed: int = 0, block_records: int = BLOCK_RECORDS) -> Iterator[Dataset]:
    """The synthetic records as a stream of blocks of ``block_records`` records
    (the last one shorter), each over the full vocabulary of ``spec.items`` ids.

    Deterministic: the same ``spec``, ``seed`` and ``block_records`` give the
    same records.
    """
    ctx = Context(seed=seed)
    patterns = make_patterns(spec, ctx)
    for block, start in enumerate(range(0, spec.records, block_records)):
        n = min(block_records, spec.records - start)
        yield generate_block(spec, patterns, n, ctx.rng("synth", "block", block))
