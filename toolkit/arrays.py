"""Small numpy helpers for grouping integer arrays by sorting.

``np.unique`` on large int64 arrays may take a hash-based path that is slower
than a plain sort here; these helpers sort once and mark run boundaries.
"""

from __future__ import annotations

import numpy as np


def run_starts(sorted_values: np.ndarray) -> np.ndarray:
    """Positions where a new run of equal values starts in a sorted 1-D array."""
    if len(sorted_values) == 0:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])


def unique_int(values: np.ndarray) -> np.ndarray:
    """The distinct values of an integer array, ascending."""
    ordered = np.sort(values, kind="stable")
    return ordered[run_starts(ordered)]


def pair_key(high: np.ndarray, low: np.ndarray) -> np.ndarray:
    """One int64 per pair of non-negative ints (``low`` < 2**32), ordered like
    the pairs; :func:`split_pair_key` undoes it."""
    return high.astype(np.int64) * (1 << 32) + low.astype(np.int64)


def split_pair_key(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return keys >> 32, keys & 0xFFFFFFFF


def concat_ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The integers ``starts[i] .. starts[i] + lengths[i] - 1`` of every range
    ``i``, concatenated in order (int64)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    offsets = np.cumsum(lengths) - lengths
    return np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(
        offsets - np.asarray(starts, dtype=np.int64), lengths
    )


def rank_in_runs(run_start: np.ndarray, n: int) -> np.ndarray:
    """The position of each of ``n`` grouped elements within its run, given the
    runs' first positions (:func:`run_starts`)."""
    return concat_ranges(np.zeros(len(run_start), dtype=np.int64), np.diff(np.r_[run_start, n]))


def csr_positions(indptr: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Positions ``indptr[r]..indptr[r+1]-1`` of every row in ``rows``, concatenated."""
    return concat_ranges(indptr[rows], indptr[rows + 1] - indptr[rows])


def int_bincount(index: np.ndarray, weights: np.ndarray, minlength: int = 0) -> np.ndarray:
    """``np.bincount(index, weights)`` of integer weights, summed exactly as int64.

    ``np.bincount`` adds weights in float64, which is exact while every partial
    sum stays below 2**53; that is checked, and ``np.add.at`` on int64 (slower)
    is used otherwise.
    """
    weights = np.asarray(weights, dtype=np.int64)
    if len(weights) == 0 or int(np.abs(weights).max()) * len(weights) < 2**53:
        return np.bincount(index, weights=weights, minlength=minlength).astype(np.int64)
    out = np.zeros(max(minlength, int(index.max()) + 1), dtype=np.int64)
    np.add.at(out, index, weights)
    return out
