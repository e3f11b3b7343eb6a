"""A dataset being sanitized by item removal, with exact counts of the sensitive rules.

:class:`Workspace` wraps the original :class:`~privtool.dataset.Dataset` and
records removed item occurrences per record; nothing is copied per item
occurrence. Supports of itemsets in the current state come from the original
column index minus the records whose removals touch the itemset. The counts
``s(XY)`` and ``s(X)`` of every sensitive rule are kept exact incrementally on
every removal, so :meth:`Workspace.strong` is O(1).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from privtool.dataset import Dataset
from privtool.mining import Rule, Thresholds
from privtool.removals import apply_removals


@dataclass(frozen=True)
class IdRule:
    """A rule over item ids of one dataset (``xy`` = antecedent plus consequent)."""

    rule: Rule
    x: frozenset[int]
    y: frozenset[int]

    @property
    def xy(self) -> frozenset[int]:
        return self.x | self.y

    @classmethod
    def of(cls, rule: Rule, dataset: Dataset) -> IdRule:
        return cls(
            rule,
            frozenset(dataset.ids_of(rule.antecedent).tolist()),
            frozenset(dataset.ids_of(rule.consequent).tolist()),
        )


class Workspace:
    """The current (partly sanitized) state of ``dataset`` for the ``rules``."""

    def __init__(self, dataset: Dataset, rules: Sequence[IdRule], thresholds: Thresholds) -> None:
        self.dataset = dataset
        self.rules = list(rules)
        self.thresholds = thresholds
        self.removed: dict[int, set[int]] = {}
        self.log: list[tuple[int, int]] = []
        self._original_rows: dict[frozenset[int], np.ndarray] = {}
        self._modified: np.ndarray | None = np.zeros(0, dtype=np.int64)
        self.counts = [[self.support(r.xy), self.support(r.x)] for r in self.rules]

    # ------------------------------------------------------------ queries
    def original_rows(self, itemset: frozenset[int]) -> np.ndarray:
        """Records of the ORIGINAL data that contain ``itemset`` (ascending)."""
        rows = self._original_rows.get(itemset)
        if rows is None:
            ids = sorted(itemset, key=lambda i: self.dataset.supports[i])
            rows = self.dataset.records_with(ids[0])
            for item in ids[1:]:
                rows = np.intersect1d(rows, self.dataset.records_with(item), assume_unique=True)
            self._original_rows[itemset] = rows
        return rows

    def rows_with(self, itemset: Iterable[int]) -> np.ndarray:
        """Records that contain ``itemset`` now (ascending)."""
        itemset = frozenset(itemset)
        rows = self.original_rows(itemset)
        if not self.removed:
            return rows
        if self._modified is None:
            self._modified = np.array(sorted(self.removed), dtype=np.int64)
        touched = np.isin(rows, self._modified)
        if not touched.any():
            return rows
        keep = np.ones(len(rows), dtype=bool)
        for k in np.flatnonzero(touched):
            if self.removed[int(rows[k])] & itemset:
                keep[k] = False
        return rows[keep]

    def support(self, itemset: Iterable[int]) -> int:
        return len(self.rows_with(itemset))

    def items_of(self, record: int) -> set[int]:
        """The items of ``record`` now."""
        items = set(self.dataset.record(record).tolist())
        return items - self.removed.get(record, set())

    def size_of(self, rows: np.ndarray) -> np.ndarray:
        """Current number of items of each record of ``rows``."""
        sizes = self.dataset.sizes[rows].copy()
        if self.removed:
            for k, t in enumerate(rows.tolist()):
                gone = self.removed.get(t)
                if gone:
                    sizes[k] -= len(gone)
        return sizes

    def strong(self, index: int) -> bool:
        """Is sensitive rule ``index`` still mined?"""
        sxy, sx = self.counts[index]
        return self.thresholds.strong(sxy, sx)

    def strong_rules(self) -> list[int]:
        return [i for i in range(len(self.rules)) if self.strong(i)]

    def to_hide(self, index: int) -> int:
        """Transactions to modify (with a consequent victim) to hide rule ``index`` now."""
        return self.thresholds.transactions_to_hide(*self.counts[index])

    # ------------------------------------------------------------- change
    def remove(self, record: int, item: int) -> None:
        """Delete ``item`` from ``record`` and update the sensitive-rule counts."""
        before = self.items_of(record)
        if item not in before:
            raise ValueError(f"item {item} is not in record {record}")
        for counts, rule in zip(self.counts, self.rules, strict=False):
            if item in rule.xy and rule.xy <= before:
                counts[0] -= 1
            if item in rule.x and rule.x <= before:
                counts[1] -= 1
        self.removed.setdefault(record, set()).add(item)
        self.log.append((record, item))
        self._modified = None

    # ------------------------------------------------------------- result
    def result(self) -> Dataset:
        """The sanitized records, in the original order, over the same vocabulary."""
        return apply_removals(self.dataset, ((t, i) for t, items in self.removed.items() for i in items))
