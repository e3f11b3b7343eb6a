"""The reference REFINE for tests: the walk written one window at a time.

This is privtool's REFINE as it was before the walk was vectorised
(``privtool.plugins.disassociation.refine``): the same criterion (that module's
docstring, ``docs/algorithms/disassociation.md``), computed the direct way: per
pass, order the groups by their virtual term chunks with Python sort keys, and
from each start extend a window of dictionaries of residual supports group by
group; every joint cluster computes its shared chunks from its records at
once. It is slow on large inputs and obviously follows the description, which
is what an oracle needs: ``tests/test_refine.py`` checks that the fast
implementation returns exactly its joint clusters.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from privtool.chain import ChunkedCluster, JointPlan
from privtool.dataset import Dataset
from privtool.plugins.disassociation.horpart import occurrences
from privtool.plugins.disassociation.verpart import cluster_terms, greedy_chunks


@dataclass
class _Group:
    ref: tuple[str, int]
    rows: np.ndarray
    residual: dict[int, int]
    blocked: set[int]


def _initial_groups(dataset: Dataset, clusters: list[np.ndarray], chunks: list[ChunkedCluster]) -> list[_Group]:
    """One group per cluster, residual supports counted in one vectorised pass."""
    if not clusters:
        return []
    span = max(dataset.n_items, 1)
    order = np.concatenate(clusters)
    items, local = occurrences(dataset, order)
    record_cluster = np.repeat(np.arange(len(clusters), dtype=np.int64), [len(rows) for rows in clusters])
    keys, counts = np.unique(record_cluster[local] * span + items, return_counts=True)
    term_keys = np.fromiter((i * span + t for i, c in enumerate(chunks) for t in c.term_chunk), dtype=np.int64)
    keep = np.isin(keys, term_keys)
    keys, counts = keys[keep], counts[keep]
    bounds = np.searchsorted(keys // span, np.arange(len(clusters) + 1)).tolist()
    terms, counts = (keys % span).tolist(), counts.tolist()
    return [
        _Group(
            ("c", i),
            rows,
            dict(zip(terms[bounds[i] : bounds[i + 1]], counts[bounds[i] : bounds[i + 1]], strict=False)),
            {t for domain in chunked.record_chunks for t in domain},
        )
        for i, (rows, chunked) in enumerate(zip(clusters, chunks, strict=False))
    ]


class _Window:
    """Consecutive groups being considered for one joint cluster and their
    combined residual supports (terms blocked by any of them removed)."""

    def __init__(self, first: _Group) -> None:
        self.groups = [first]
        self.residual = dict(first.residual)

    def blocks(self, term: int) -> bool:
        return any(term in g.blocked for g in self.groups)

    def add(self, group: _Group, k: int) -> list[int]:
        """Extend by ``group``; the terms whose combined support now reaches k."""
        for t in [t for t in self.residual if t in group.blocked]:
            del self.residual[t]
        lifted = []
        for t, c in group.residual.items():
            if self.blocks(t):
                self.residual.pop(t, None)
                continue
            total = self.residual.get(t, 0) + c
            self.residual[t] = total
            if total >= k:
                lifted.append(t)
        self.groups.append(group)
        return lifted


def _order(groups: list[_Group]) -> list[_Group]:
    holders: dict[int, int] = {}
    for g in groups:
        for t in g.residual:
            holders[t] = holders.get(t, 0) + 1
    keys = {id(g): sorted((-holders[t], t) for t in g.residual) for g in groups}
    return sorted(groups, key=lambda g: keys[id(g)])


def refine(
    dataset: Dataset, clusters: list[np.ndarray], chunks: list[ChunkedCluster], k: int, m: int
) -> list[JointPlan]:
    """Joint clusters (in creation order; members may be earlier joints) for the
    chunked ``clusters``; see the module docstring for the criterion."""
    plans: list[JointPlan] = []
    active = [g for g in _initial_groups(dataset, clusters, chunks) if g.residual]
    changed = True
    while changed and len(active) > 1:
        changed = False
        ordered = _order(active)
        active = []
        i = 0
        while i < len(ordered):
            window = _Window(ordered[i])
            lifted: list[int] = []
            for group in ordered[i + 1 : i + k]:
                lifted = window.add(group, k)
                if lifted:
                    break
            if not lifted:
                active.append(ordered[i])
                i += 1
                continue
            rows = np.concatenate([g.rows for g in window.groups])
            items, local = occurrences(dataset, rows)
            keep = np.isin(items, np.asarray(lifted, dtype=items.dtype))
            sizes = np.bincount(local[keep], minlength=len(rows))
            terms = cluster_terms(np.array([len(rows)]), sizes, items[keep], k)[0]
            plans.append(JointPlan([g.ref for g in window.groups], list(greedy_chunks(terms, k, m))))
            for t in lifted:
                del window.residual[t]
            blocked = set(lifted).union(*(g.blocked for g in window.groups))
            group = _Group(("j", len(plans) - 1), rows, window.residual, blocked)
            if group.residual:
                active.append(group)
            changed = True
            i += len(window.groups)
    return plans
