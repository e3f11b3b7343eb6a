"""LGR's reallocation (Kim, Electronics 12(14):3047, 2023, §3), as
reconstructed by this project (docs/algorithms/lgr.md; the paper's Figure 5 is
not available): records are generalised *item by item*, not cut by cut.

After the top-down phase (:mod:`.topdown`) every record's form is a cut, and a
cut node ``n`` that stands for several of a record's items generalises all of
them, even when most of the records of the group share a more specific node
``d`` below ``n`` for some of those items. LGR publishes such records with
``d`` for the items under ``d`` and ``n`` only for the others, as the paper's
own example does ({e, i} published as {T, i}). A published record is read
with *deepest-cover* semantics: each original item is published as its
deepest ancestor-or-self in the record, and every label stands for at least one
item (:func:`privtool.hierarchy.Hierarchy.covering` and the ``hierarchy``
verifier use the same reading).

The reallocation refines groups of identical forms ``F`` (FinalQ; the groups
that the top-down phase made, merged when their forms coincide). For a group,
a generalised node ``n`` of ``F`` and a node ``d`` strictly below ``n``, the
group's records split into

* *A*: every item published as ``n`` lies under ``d``: the form ``F - n + d``;
* *B*: some of them do: the form ``F + d`` (``n`` still stands for the rest);
* *C*: none does: the form stays ``F``.

A class moves to its new form only with at least k records; the records that
stay must number 0 or at least k, so a moved class gives back its records of
least saving while it keeps k (He & Naughton's balancing, applied upward:
LGR's WaitForQ records are the ones that stay generalised). Each round applies,
in every group, the split of largest estimated saving; rounds go on until no
group has a split, groups whose forms coincide merge after every round.

Guarantees: every class that moves has at least k records and what stays has
0 or at least k, so the release stays strictly k-anonymous; every moved record
publishes a strictly cheaper form and nobody else changes, so the NCP is never
above the top-down one (a property test checks both against brute force).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from privtool.arrays import (
    concat_ranges,
    int_bincount,
    pair_key,
    rank_in_runs,
    run_starts,
    split_pair_key,
    unique_int,
)
from privtool.hierarchy import Hierarchy

from .topdown import TopDownResult


def _form_codes(n_nodes: int) -> np.ndarray:
    """Two independent random 64-bit codes per node: a form's hash is the XOR
    of its nodes' codes, updated in O(1) when a node joins or leaves. A
    collision would merge two groups of different forms; the anonymizer's final
    exact check (:func:`.anonymizers.check_exact_forms`) would catch it."""
    rng = np.random.default_rng(20230712)
    return rng.integers(0, np.iinfo(np.uint64).max, size=(n_nodes, 2), dtype=np.uint64, endpoint=True)


@dataclass
class Candidates:
    """Per candidate split ``(group, d)``: its node ``n`` and class sizes and savings."""

    group: np.ndarray
    node: np.ndarray  # d
    above: np.ndarray  # n
    n_a: np.ndarray
    n_b: np.ndarray
    s_a: np.ndarray
    s_b: np.ndarray


class Reallocation:
    """Rows' groups (``part``), occurrences' published nodes (``gen``), group
    sizes and form hashes; :meth:`run` refines until no split remains."""

    def __init__(self, hier: Hierarchy, indptr: np.ndarray, occ_leaf: np.ndarray, k: int, top: TopDownResult) -> None:
        self.hier, self.occ_leaf, self.k = hier, occ_leaf, k
        n_rows = len(indptr) - 1
        self.occ_row = np.repeat(np.arange(n_rows, dtype=np.int64), np.diff(indptr))
        self.gen = top.gen.copy()
        self.part = top.part.copy()
        self.codes = _form_codes(hier.n_nodes)
        placed = self.part >= 0
        occ_placed = placed[self.occ_row]
        parts, nodes = split_pair_key(unique_int(pair_key(self.part[self.occ_row[occ_placed]], self.gen[occ_placed])))
        n_parts = int(self.part.max()) + 1 if placed.any() else 0
        self.hash = np.zeros((n_parts, 2), dtype=np.uint64)
        if len(parts):
            starts = run_starts(parts)
            self.hash[parts[starts]] = np.bitwise_xor.reduceat(self.codes[nodes], starts, axis=0)
        self.active = np.ones(n_parts, dtype=bool)
        self._merge_equal_forms()
        self.stats = {"reallocation_rounds": 0, "splits": 0, "moved_records": 0}

    # ------------------------------------------------------------ groups
    def _merge_equal_forms(self) -> None:
        """Renumber groups so that groups of one form are one group; a group
        that grew is active again."""
        placed = self.part >= 0
        live = np.zeros(len(self.hash), dtype=bool)
        live[self.part[placed]] = True
        ids = np.flatnonzero(live)
        forms, inverse = np.unique(self.hash[ids], axis=0, return_inverse=True)
        new_of_old = np.full(len(self.hash), -1, dtype=np.int64)
        new_of_old[ids] = inverse.ravel()
        merged = np.bincount(inverse.ravel(), minlength=len(forms)) > 1
        active = np.zeros(len(forms), dtype=bool)
        np.logical_or.at(active, inverse.ravel(), self.active[ids])
        self.part[placed] = new_of_old[self.part[placed]]
        self.hash = forms
        self.active = active | merged
        self.size = np.bincount(self.part[placed], minlength=len(forms)).astype(np.int64)

    # ------------------------------------------------------------ candidates
    def _candidates(self) -> tuple[Candidates, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every split of every active group, and per (row, d) pair its group
        key, class (A or B) and saving."""
        hier = self.hier
        rows_ok = self.part >= 0
        rows_ok[rows_ok] = self.active[self.part[rows_ok]]
        occ = np.flatnonzero(rows_ok[self.occ_row] & ~hier.is_leaf[self.gen])
        above, leaf, row = self.gen[occ], self.occ_leaf[occ], self.occ_row[occ]
        # every node strictly between the published node and the leaf, leaf included
        span = (hier.depth[leaf] - hier.depth[above]).astype(np.int64)
        rep = np.repeat(np.arange(len(occ)), span)
        node = hier.ancestor_at[concat_ranges(hier.depth[above] + 1, span), leaf[rep]]
        units = hier.ncp_units
        keep = units[above[rep]] > units[node]
        rep, node = rep[keep], node[keep]
        # items of a row published as n (its total), and under d (its count)
        rn_keys, rn_count = np.unique(pair_key(row, above), return_counts=True)
        rd_keys, rd_first, rd_count = np.unique(pair_key(row[rep], node), return_index=True, return_counts=True)
        pair_row, pair_node = split_pair_key(rd_keys)
        pair_above = above[rep[rd_first]]
        total = rn_count[np.searchsorted(rn_keys, pair_key(pair_row, pair_above))]
        is_a = rd_count == total
        # savings in exact integer units of 1 / |leaves| (Hierarchy.ncp_units)
        saving = rd_count * (units[pair_above] - units[pair_node])
        pair_group = self.part[pair_row]
        gd_keys, gd_first, gd_inv = np.unique(pair_key(pair_group, pair_node), return_index=True, return_inverse=True)
        n = len(gd_keys)
        cands = Candidates(
            group=pair_group[gd_first],
            node=pair_node[gd_first],
            above=pair_above[gd_first],
            n_a=np.bincount(gd_inv, weights=is_a, minlength=n).astype(np.int64),
            n_b=np.bincount(gd_inv, weights=~is_a, minlength=n).astype(np.int64),
            s_a=int_bincount(gd_inv, np.where(is_a, saving, 0), n),
            s_b=int_bincount(gd_inv, np.where(is_a, 0, saving), n),
        )
        return cands, gd_inv, pair_row, is_a, saving

    def _choose(self, c: Candidates) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per group with a feasible split: the candidate index and which
        classes open (bool A, bool B), largest estimated saving first."""
        k = self.k
        size = self.size[c.group]
        best_score = np.full(len(c.group), -np.inf)
        best_a = np.zeros(len(c.group), dtype=bool)
        best_b = np.zeros(len(c.group), dtype=bool)
        for open_a, open_b in ((True, False), (False, True), (True, True)):
            n_open = np.where(open_a, c.n_a, 0) + np.where(open_b, c.n_b, 0)
            s_open = np.where(open_a, c.s_a, 0) + np.where(open_b, c.s_b, 0)
            ok = ((c.n_a >= k) | (not open_a)) & ((c.n_b >= k) | (not open_b))
            stay = size - n_open
            deficit = np.where((stay > 0) & (stay < k), k - stay, 0)
            excess = np.where(open_a, c.n_a - k, 0) + np.where(open_b, c.n_b - k, 0)
            ok &= excess >= deficit
            # donors give back about the average saving each (the exact ones are
            # picked on apply); one division of exact integers, so equal
            # estimates are equal floats and ties go by the rule below
            score = np.where(ok, s_open * (n_open - deficit) / np.maximum(n_open, 1), -np.inf)
            better = score > best_score
            best_score = np.where(better, score, best_score)
            best_a = np.where(better, open_a, best_a)
            best_b = np.where(better, open_b, best_b)
        feasible = best_score > 0
        idx = np.flatnonzero(feasible)
        # the best candidate of each group: ties to the smaller node id
        idx = idx[np.lexsort((c.node[idx], -best_score[idx], c.group[idx]))]
        idx = idx[run_starts(c.group[idx])]
        return idx, best_a[idx], best_b[idx]

    # ------------------------------------------------------------ apply
    def _apply(
        self,
        c: Candidates,
        chosen: np.ndarray,
        open_a: np.ndarray,
        open_b: np.ndarray,
        gd_inv: np.ndarray,
        pair_row: np.ndarray,
        is_a: np.ndarray,
        saving: np.ndarray,
        balance: bool = True,
    ) -> None:
        """Move the opened classes of every chosen split, minus (with
        ``balance``) the donors that keep what stays at 0 or at least k."""
        k = self.k
        slot = np.full(len(c.group), -1, dtype=np.int64)
        slot[chosen] = np.arange(len(chosen))
        pair_slot = slot[gd_inv]
        sel = pair_slot >= 0
        s, rows, a, sav = pair_slot[sel], pair_row[sel], is_a[sel], saving[sel]
        opened = np.where(a, open_a[s], open_b[s])
        s, rows, a, sav = s[opened], rows[opened], a[opened], sav[opened]
        # classes: 2*slot + (0 for A, 1 for B)
        cls = 2 * s + np.where(a, 0, 1)
        cls_size = np.bincount(cls, minlength=2 * len(chosen))
        stay = self.size[c.group[chosen]] - np.bincount(s, minlength=len(chosen))
        deficit = np.where((stay > 0) & (stay < k) & balance, k - stay, 0)
        give = np.zeros(len(rows), dtype=bool)
        if deficit.any():
            # donor candidates: the (size - k) least-saving rows of each class,
            # then the `deficit` least-saving of those per split
            order = np.lexsort((rows, sav, cls))
            pos = rank_in_runs(run_starts(cls[order]), len(order))
            donors = order[pos < cls_size[cls[order]] - k]
            donors = donors[deficit[s[donors]] > 0]
            donors = donors[np.lexsort((rows[donors], sav[donors], s[donors]))]
            pos = rank_in_runs(run_starts(s[donors]), len(donors))
            give[donors[pos < deficit[s[donors]]]] = True
        move = ~give
        s, rows, a, cls = s[move], rows[move], a[move], cls[move]
        # new groups, one per opened class
        classes, new_local = np.unique(cls, return_inverse=True)
        first_new = len(self.hash)
        cls_slot, cls_is_a = classes // 2, classes % 2 == 0
        d, n = c.node[chosen[cls_slot]], c.above[chosen[cls_slot]]
        base = self.hash[c.group[chosen[cls_slot]]]
        new_hash = base ^ self.codes[d]
        new_hash[cls_is_a] ^= self.codes[n[cls_is_a]]
        self.hash = np.vstack([self.hash, new_hash])
        self.active[:] = False
        self.active[c.group[chosen]] = True  # what stays changed too
        self.active = np.r_[self.active, np.ones(len(classes), dtype=bool)]
        self.part[rows] = first_new + new_local
        # their items under d, published as n, are now published as d
        row_d = np.full(len(self.part), -1, dtype=np.int64)
        row_n = np.full(len(self.part), -1, dtype=np.int64)
        row_d[rows], row_n[rows] = c.node[chosen[s]], c.above[chosen[s]]
        occ_d, occ_n = row_d[self.occ_row], row_n[self.occ_row]
        hit = (occ_d >= 0) & (self.gen == occ_n)
        hit[hit] = self.hier.is_ancestor_or_self(occ_d[hit], self.occ_leaf[hit])
        self.gen[hit] = occ_d[hit]
        self.stats["splits"] += len(chosen)
        self.stats["moved_records"] += len(rows)

    def run(self) -> None:
        while self.active.any():
            c, gd_inv, pair_row, is_a, saving = self._candidates()
            chosen, open_a, open_b = self._choose(c)
            if len(chosen) == 0:
                break
            self.stats["reallocation_rounds"] += 1
            self._apply(c, chosen, open_a, open_b, gd_inv, pair_row, is_a, saving)
            self._merge_equal_forms()


def reallocate(
    hier: Hierarchy, indptr: np.ndarray, occ_leaf: np.ndarray, k: int, top: TopDownResult
) -> tuple[TopDownResult, dict]:
    """Refine a top-down result item by item (module docstring); returns the
    new result and counts of what moved."""
    state = Reallocation(hier, indptr, occ_leaf, k, top)
    state.run()
    return TopDownResult(state.part, state.gen, top.rounds), state.stats
