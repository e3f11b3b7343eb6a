"""LGR's reallocation under k^m-anonymity instead of whole-record k-anonymity
(``lgr --m M``; docs/algorithms/lgr.md, "k^m-anonymity").

The LGR paper's own Table 1 output is exactly 2^1-anonymous (every published
label is held by at least 2 records) and not 2-anonymous, which suggests its
implementation tested label frequencies, not whole records. With ``m`` set,
the top-down phase is unchanged (its groups are k-anonymous, so k^m-anonymous
for every m) and the reallocation of :mod:`.reallocation` takes the same
candidate splits (a group, a generalised node ``n`` of its form ``F``, a node
``d`` below ``n``; class A goes to ``F - n + d``, class B to ``F + d``) with
another test: a split is applied when the release stays k^m-anonymous, i.e.
every set of at most m published labels that some published record holds is
held by at least k published records. A class may then have fewer than k
records, and what stays in the group may too.

The test is exact: the supports of every label set of at most m labels of
every published form are kept in a dictionary, and a split changes only the
sets that hold ``d`` (gained by the moving records) or ``n`` (lost by class A).
In each round the candidate splits are tried in decreasing saving (ties: the
smaller node ``d``, then the smaller group), at most one per group, each against
the supports left by the splits accepted before it. Every accepted split moves
records to strictly cheaper forms, so the NCP is never above the top-down
phase's, and rounds go on until none is accepted.

Reading a published record against an adversary who knows at most m of a
person's items: each known item is covered by a label of the person's published
record, so at least k published records hold those (at most m) labels, and
each of them could hold the known items (the argument needs only that a label
stands for the items under it).
"""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np

from privtool.arrays import pair_key, run_starts, split_pair_key, unique_int
from privtool.hierarchy import Hierarchy

from .reallocation import Candidates, Reallocation
from .topdown import TopDownResult

Form = tuple[int, ...]


def label_sets(form: Form, m: int, holding: int | None = None) -> list[Form]:
    """The sets of 1..m labels of ``form`` (sorted tuples), only those holding
    ``holding`` when given."""
    if holding is None:
        return [s for size in range(1, min(m, len(form)) + 1) for s in itertools.combinations(form, size)]
    rest = [v for v in form if v != holding]
    return [
        tuple(sorted((holding, *s))) for size in range(min(m, len(form))) for s in itertools.combinations(rest, size)
    ]


class KmReallocation(Reallocation):
    """The reallocation with the k^m test (module docstring)."""

    def __init__(self, hier: Hierarchy, indptr: np.ndarray, occ_leaf: np.ndarray, k: int, m: int, top: TopDownResult):
        super().__init__(hier, indptr, occ_leaf, k, top)
        self.m = m
        self.support: Counter[Form] = Counter()
        for group, form in self._forms().items():
            for labels in label_sets(form, m):
                self.support[labels] += int(self.size[group])

    def _forms(self) -> dict[int, Form]:
        """Each group's published form, as sorted node ids."""
        placed = self.part[self.occ_row] >= 0
        groups, nodes = split_pair_key(unique_int(pair_key(self.part[self.occ_row[placed]], self.gen[placed])))
        bounds = np.r_[run_starts(groups), len(groups)]
        node_list = nodes.tolist()
        return {int(groups[s]): tuple(node_list[s:e]) for s, e in itertools.pairwise(bounds.tolist())}

    def _delta(self, form: Form, n: int, d: int, count_a: int, count_b: int) -> Counter[Form]:
        """Support changes when ``count_a`` records go from ``form`` to
        ``form - n + d`` and ``count_b`` to ``form + d``."""
        delta: Counter[Form] = Counter()
        if count_a:
            for labels in label_sets(form, self.m, n):
                delta[labels] -= count_a
            for labels in label_sets(tuple(sorted({*form, d} - {n})), self.m, d):
                delta[labels] += count_a
        if count_b:
            for labels in label_sets(tuple(sorted({*form, d})), self.m, d):
                delta[labels] += count_b
        return delta

    def _keeps_km(self, delta: Counter[Form]) -> bool:
        support, k = self.support, self.k
        return all(support[s] + v == 0 or support[s] + v >= k for s, v in delta.items() if v)

    def _choose(self, c: Candidates) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Candidate splits accepted in this round, at most one per group, each
        keeping the release k^m-anonymous given those accepted before it."""
        forms = self._forms()
        # every option (candidate, which classes open) with a saving, best first
        index, saving, open_a, open_b = [], [], [], []
        for a, b in ((True, True), (True, False), (False, True)):
            gain = np.where(a, c.s_a, 0) + np.where(b, c.s_b, 0)
            ok = (gain > 0) & ((c.n_a > 0) | (not a)) & ((c.n_b > 0) | (not b))
            picked = np.flatnonzero(ok)
            index.append(picked)
            saving.append(gain[picked])
            open_a.append(np.full(len(picked), a))
            open_b.append(np.full(len(picked), b))
        idx, gain, opens_a, opens_b = (np.concatenate(x) for x in (index, saving, open_a, open_b))
        order = np.lexsort((c.group[idx], c.node[idx], -gain))
        taken: set[int] = set()
        chosen, chosen_a, chosen_b = [], [], []
        groups, nodes, above = c.group.tolist(), c.node.tolist(), c.above.tolist()
        n_a, n_b = c.n_a.tolist(), c.n_b.tolist()
        for i, a, b in zip(idx[order].tolist(), opens_a[order].tolist(), opens_b[order].tolist(), strict=True):
            group = groups[i]
            if group in taken:
                continue
            delta = self._delta(forms[group], above[i], nodes[i], n_a[i] * a, n_b[i] * b)
            if not self._keeps_km(delta):
                continue
            self.support.update(delta)
            taken.add(group)
            chosen.append(i)
            chosen_a.append(a)
            chosen_b.append(b)
        return np.array(chosen, dtype=np.int64), np.array(chosen_a, dtype=bool), np.array(chosen_b, dtype=bool)

    def run(self) -> None:
        while True:
            self.active[:] = True  # supports elsewhere may have made a rejected split acceptable
            c, gd_inv, pair_row, is_a, saving = self._candidates()
            chosen, open_a, open_b = self._choose(c)
            if len(chosen) == 0:
                break
            self.stats["reallocation_rounds"] += 1
            self._apply(c, chosen, open_a, open_b, gd_inv, pair_row, is_a, saving, balance=False)
            self._merge_equal_forms()


def reallocate_km(
    hier: Hierarchy, indptr: np.ndarray, occ_leaf: np.ndarray, k: int, m: int, top: TopDownResult
) -> tuple[TopDownResult, dict]:
    """Refine a top-down result item by item under k^m-anonymity (module
    docstring); returns the new result and counts of what moved."""
    state = KmReallocation(hier, indptr, occ_leaf, k, m, top)
    state.run()
    return TopDownResult(state.part, state.gen, top.rounds), state.stats
