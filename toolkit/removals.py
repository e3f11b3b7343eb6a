"""Applying item removals to a dataset (what a rule-hiding trail records).

A distortion-by-deletion sanitizer lists every removed occurrence as ``[record
position, label]`` in its trail (:class:`~privtool.trail.Trail`
``removed_items``). :func:`apply_trail_removals` rebuilds the sanitized records
in the ORIGINAL order from the original data and that list; ``privtool hide``
writes the owner's file this way, and a verifier can check a release against it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from .arrays import offsets_of
from .dataset import Dataset
from .errors import InputError


def apply_removals(dataset: Dataset, removals: Iterable[tuple[int, int]]) -> Dataset:
    """``dataset`` with the item occurrences ``(record, item id)`` deleted, records
    in the original order over the same vocabulary. A pair naming an item the
    record does not hold is a ``ValueError``."""
    drop = np.zeros(len(dataset.items), dtype=bool)
    for record, item in removals:
        start, end = int(dataset.indptr[record]), int(dataset.indptr[record + 1])
        position = start + int(np.searchsorted(dataset.items[start:end], item))
        if position >= end or dataset.items[position] != item:
            raise ValueError(f"record {record} does not hold item {dataset.labels[item]!r}")
        if drop[position]:
            raise ValueError(f"item {dataset.labels[item]!r} of record {record} is removed twice")
        drop[position] = True
    if not drop.any():
        return dataset
    sizes = dataset.sizes - np.bincount(dataset.record_of_occurrence[drop], minlength=dataset.n_records)
    return Dataset(offsets_of(sizes), dataset.items[~drop].copy(), dataset.labels)


def apply_trail_removals(dataset: Dataset, removed_items: Sequence[Sequence[Any]]) -> Dataset:
    """:func:`apply_removals` for a trail's ``[record position, label]`` pairs; a
    pair that does not fit ``dataset`` is an :class:`~privtool.errors.InputError`."""
    pairs = []
    for k, pair in enumerate(removed_items):
        try:
            record, label = pair
            if isinstance(record, bool) or not isinstance(record, int) or not 0 <= record < dataset.n_records:
                raise ValueError(record)
            pairs.append((record, dataset.id_of(label)))
        except (TypeError, ValueError, KeyError):
            raise InputError(
                f"removed_items[{k}] = {pair!r} does not name an item occurrence of the data", "trail"
            ) from None
    try:
        return apply_removals(dataset, pairs)
    except ValueError as exc:
        raise InputError(f"the trail does not fit the data: {exc}", "trail") from None
