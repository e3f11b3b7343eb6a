"""AA, Apriori-based k^m-anonymisation by global generalisation (Terrovitis,
Mamoulis, Kalnis, "Privacy-preserving anonymization of set-valued data", PVLDB
1(1), 2008). The paper is not among the project's papers: this is a
reconstruction, and docs/algorithms/aa.md lists every choice it makes.

A *cut* of the hierarchy maps every item to one node (global recoding: all
occurrences of an item are published as the same node, and the published nodes
never nest). The release is the data generalised through the cut, each record
a set of cut nodes. It is k^m-anonymous when every itemset of at most m
published nodes that occurs in some record occurs in at least k records.

AA starts from the cut of the leaves and, for i = 1..m (the Apriori order):

1. generalises the records through the current cut and counts every itemset of
   i cut nodes they hold;
2. takes the itemsets of support 1..k-1 (the violations) in a fixed order and,
   for each that is still violated under the cut as it stands then, raises the
   cut to the cheapest generalisation of that itemset that reaches support k
   (the step of the paper's DA): every way to replace its nodes by
   ancestors-or-self, cost = the exact increase of the dataset's NCP numerator
   (or, with ``cost="leaves"``, the public Python AA's sum of leaf counts),
   support = records holding an item under each of the chosen nodes.

The support of a set of disjoint nodes does not depend on the rest of the cut,
so a violation none of whose nodes has moved is still a violation, and one
whose nodes moved is re-counted from per-node record bitsets. Raising the cut
never lowers the support of a published itemset, so levels 1..i-1 stay
k-anonymous while level i is repaired, and one pass over the level's
violations repairs it (docs/algorithms/aa.md gives the argument); the level is
counted again to certify it.

Counting is numpy work: itemsets of a level are enumerated per record length
as index combinations and counted with one sort of int64 keys; supports of
candidate generalisations are ANDs and popcounts of per-node bitsets over the
records (``uint64`` words). Violations are read in vectorised windows; Python
runs once per window, per repair and per distinct moved itemset of a window,
never per item occurrence.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from privtool.arrays import bitsets, csr_distinct, run_starts, unique_rows
from privtool.hierarchy import Hierarchy
from privtool.itemset_mining import itemset_counts

_FIRST_WINDOW, _LAST_WINDOW = 64, 1 << 16
"""Rows of violations evaluated at once: the window restarts small after each
repair (the rows after it must be re-read under the new cut) and doubles while
none of its rows needs a repair."""

COSTS = ("ncp", "leaves")
"""What a repair minimises: ``ncp``, the exact increase of the dataset's NCP
numerator (original occurrences x leaves of their published node), or
``leaves``, the sum of the leaf counts of the nodes the itemset is raised to
(the order of candidate cuts in the public Python AA, which ignores how many
occurrences a node stands for)."""

ORDERS = ("itemset", "support")
"""Order in which the violations of a level are repaired: itemset order (node
ids, i.e. preorder, lexicographically) or ascending support (the rarest first,
ties in itemset order)."""


@dataclass
class AaResult:
    """``gen[v]``: the cut node that node ``v`` is published as (for every node
    at or below the final cut; the leaves are the items). ``levels`` has one
    entry per level i = 1..m: violations found, generalisations applied, passes."""

    gen: np.ndarray
    levels: list[dict[str, int]] = field(default_factory=list)


def node_bitsets(hier: Hierarchy, indptr: np.ndarray, occ_leaf: np.ndarray) -> np.ndarray:
    """``bits[v]``: the records holding an item under node ``v``, one bit per
    record in ``uint64`` words. Leaf rows come from the occurrences; then each
    level's rows are ORed into their parents' rows, deepest level first (the
    nodes of one depth are grouped by parent in preorder: one ``reduceat`` each)."""
    n = len(indptr) - 1
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    bits = bitsets(occ_leaf, rows, hier.n_nodes, n)
    for depth in range(hier.max_depth, 0, -1):
        at = np.flatnonzero(hier.depth == depth)
        parents = hier.parent[at]
        starts = run_starts(parents)
        bits[parents[starts]] |= np.bitwise_or.reduceat(bits[at], starts, axis=0)
    return bits


class _Cut:
    """The current cut and what repairing a violation needs: the cost rule
    (:data:`COSTS`; for ``ncp`` the NCP numerator ``occurrences x leaves``, an
    integer, 0 for a one-leaf node) and the per-node record bitsets."""

    def __init__(self, hier: Hierarchy, indptr: np.ndarray, occ_leaf: np.ndarray, cost: str = "ncp") -> None:
        self.hier = hier
        self.cost = cost
        self.gen = np.arange(hier.n_nodes, dtype=np.int64)
        self.occ = np.bincount(occ_leaf, minlength=hier.n_nodes).astype(np.int64)  # per leaf
        cum = np.r_[0, np.cumsum(self.occ)]
        self.occ_under = cum[hier.last + 1] - cum[: hier.n_nodes]
        self.weight = np.where(hier.leaf_count > 1, hier.leaf_count, 0).astype(np.int64)
        self.bits = node_bitsets(hier, indptr, occ_leaf)
        self._support_cache: dict[tuple[int, ...], int] = {}
        self._refresh_loss()

    def _refresh_loss(self) -> None:
        loss = self.occ * self.weight[self.gen]
        cum = np.r_[0, np.cumsum(loss)]
        self.loss_under = cum[self.hier.last + 1] - cum[: self.hier.n_nodes]

    def support(self, nodes: tuple[int, ...]) -> int:
        """Records holding an item under every one of ``nodes`` (pairwise disjoint)."""
        found = self._support_cache.get(nodes)
        if found is None:
            words = self.bits[nodes[0]]
            for v in nodes[1:]:
                words = words & self.bits[v]
            found = int(np.bitwise_count(words).sum())
            self._support_cache[nodes] = found
        return found

    def repair(self, nodes: tuple[int, ...], k: int) -> None:
        """Raise the cut to the cheapest generalisation of ``nodes`` (current
        cut nodes) whose support reaches ``k``; see the module docstring."""
        hier = self.hier
        chains = [hier.ancestor_at[: hier.depth[v] + 1, v][::-1] for v in nodes]  # v up to the root
        cand = np.array(list(itertools.product(*chains)), dtype=np.int64)
        n_cand, size = cand.shape
        keep = np.ones((n_cand, size), dtype=bool)
        for j, col in itertools.permutations(range(size), 2):
            a, b = cand[:, j], cand[:, col]
            inside = (a <= b) & (b <= hier.last[a])
            keep[:, col] &= ~(inside & ((a != b) | (j < col)))
        if self.cost == "leaves":
            raise_cost = hier.leaf_count
        else:
            raise_cost = self.occ_under * self.weight - self.loss_under
        cost = (raise_cost[cand] * keep).sum(axis=1)
        order = np.lexsort((np.arange(n_cand), cost))
        for start in range(0, n_cand, 64):
            block = order[start : start + 64]
            words = np.full((len(block), self.bits.shape[1]), np.iinfo(np.uint64).max, dtype=np.uint64)
            for j in range(size):
                kj = keep[block, j]
                words[kj] &= self.bits[cand[block[kj], j]]
            supports = np.bitwise_count(words).sum(axis=1)
            ok = np.flatnonzero(supports >= k)
            if len(ok):
                best = block[ok[0]]
                self._raise(cand[best][keep[best]])
                return
        raise RuntimeError("internal error: no generalisation reaches k (the root should)")

    def _raise(self, targets: np.ndarray) -> None:
        for x in targets.tolist():
            self.gen[x : self.hier.last[x] + 1] = x
        self._refresh_loss()


def _violations(cut: _Cut, indptr: np.ndarray, occ_leaf: np.ndarray, size: int, k: int, order: str) -> np.ndarray:
    g_indptr, g_nodes = csr_distinct(indptr, cut.gen[occ_leaf])
    rows, counts = itemset_counts(g_indptr, g_nodes, size, cut.hier.n_nodes)
    bad = counts < k
    rows, counts = rows[bad], counts[bad]
    if order == "support":
        rows = rows[np.argsort(counts, kind="stable")]
    return rows


def _repair_in_order(cut: _Cut, violations: np.ndarray, k: int) -> int:
    """Repair ``violations`` (rows of cut nodes, support below k when counted)
    one after the other, each under the cut as the earlier repairs left it;
    return how many repairs were made.

    A row whose nodes all stand still is still violated (a support does not
    depend on the rest of the cut). A row with two nodes merged into one is a
    smaller itemset, k-anonymous since an earlier level. A row with a moved
    node is violated when the support of its new nodes is below k. Rows are
    evaluated in vectorised windows that grow while nothing needs repair and
    restart after each repair, so the outcome is that of the row-by-row loop."""
    applied = 0
    start, width = 0, _FIRST_WINDOW
    while start < len(violations):
        rows = violations[start : start + width]
        mapped = np.sort(cut.gen[rows], axis=1)
        need = np.all(mapped[:, 1:] != mapped[:, :-1], axis=1)
        moved = need & np.any(mapped != rows, axis=1)
        if moved.any():
            distinct, inverse = unique_rows(mapped[moved], cut.hier.n_nodes)
            supports = np.array([cut.support(tuple(nodes)) for nodes in distinct.tolist()], dtype=np.int64)
            need[moved] = supports[inverse] < k
        hits = np.flatnonzero(need)
        if not len(hits):
            start += len(rows)
            width = min(2 * width, _LAST_WINDOW)
            continue
        first = int(hits[0])
        cut.repair(tuple(mapped[first].tolist()), k)
        applied += 1
        start += first + 1
        width = _FIRST_WINDOW
    return applied


def apriori_anonymize(
    hier: Hierarchy,
    indptr: np.ndarray,
    occ_leaf: np.ndarray,
    k: int,
    m: int,
    order: str = "itemset",
    cost: str = "ncp",
) -> AaResult:
    """The AA cut of the records (CSR ``indptr`` over occurrences whose leaves
    are ``occ_leaf``) for k^m-anonymity; see the module docstring. The caller
    makes sure at least k records are non-empty (the root then always reaches k)."""
    cut = _Cut(hier, indptr, occ_leaf, cost)
    result = AaResult(cut.gen)
    for size in range(1, m + 1):
        found = applied = passes = 0
        while True:
            violations = _violations(cut, indptr, occ_leaf, size, k, order)
            if not len(violations):
                break
            passes += 1
            found += len(violations)
            applied += _repair_in_order(cut, violations, k)
        result.levels.append({"size": size, "violations": found, "generalisations": applied, "passes": passes})
    return result
